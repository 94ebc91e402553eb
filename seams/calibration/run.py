"""Running a judge over a labelled set: every item asked once, concurrently, with progress.

A judge that batches (`judge.batches`: a local model) is sent chunks of states through
`ask_many` when every item has the same questions, since batching pairs is what makes a CPU model
fast; any other judge is asked item by item through its async `aask` under a semaphore
(`concurrency` requests in flight). Given the rubric the questions come from, its `asked_alone`
views are asked. Wrap the judge in a `CachedJudge` and a
re-run costs nothing; an interrupted run resumes from the cache, because each answer is
committed as it arrives.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Self

from ..answers import Answers
from ..errors import JudgeError
from ..judges.base import Judge, answer_each
from .dataset import LabelledItem, LabelledSet

if TYPE_CHECKING:
    from ..rubric import Rubric

QuestionsFor = Callable[[LabelledItem], Mapping[str, Any]]


@dataclass
class RunResult:
    """Answers by item id, and the items whose judge call failed (with the error)."""

    model: str
    answers: dict[str, Answers] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.answers)


class _Progress:
    """A rich progress bar on stderr, or nothing."""

    def __init__(self, total: int, label: str, enabled: bool) -> None:
        self._bar = None
        if enabled and total:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeRemainingColumn(), console=Console(stderr=True), transient=False)
            self._task = self._bar.add_task(label, total=total)

    def __enter__(self) -> Self:
        if self._bar is not None:
            self._bar.start()
        return self

    def advance(self, k: int = 1) -> None:
        if self._bar is not None:
            self._bar.advance(self._task, k)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


def run_set(dataset: LabelledSet, judge: Judge, *, questions_for: QuestionsFor | None = None, concurrency: int = 8,
            progress: bool = False, batch_size: int = 64, label: str = "judging",
            rubric: Rubric | None = None) -> RunResult:
    """Ask `judge` every item's questions; return the answers and the per-item failures.

    A `JudgeError` on one item is recorded against it (and reported by the caller), never
    turned into an answer; any other error propagates. `rubric`, when the questions are its own,
    asks them as it does (`asked_alone`).
    """
    judge = rubric.asking(judge) if rubric is not None else judge
    if judge.batches and all(it.questions is None for it in dataset.items) and questions_for is None:
        return _run_batched(dataset, judge, batch_size, progress, label)
    return asyncio.run(arun_set(dataset, judge, questions_for=questions_for, concurrency=concurrency,
                                progress=progress, label=label))


def _run_batched(dataset: LabelledSet, judge: Judge, batch_size: int, progress: bool, label: str) -> RunResult:
    result = RunResult(model=judge.model_id)
    qs = dataset.questions
    items = dataset.items
    with _Progress(len(items), label, progress) as bar:
        for start in range(0, len(items), batch_size):
            chunk = items[start : start + batch_size]
            for it, got in zip(chunk, answer_each(judge, [it.state for it in chunk], qs), strict=True):
                if isinstance(got, Answers):
                    result.answers[it.id] = got
                elif isinstance(got, JudgeError):
                    result.errors[it.id] = f"{type(got).__name__}: {got}"
                else:
                    raise got
            bar.advance(len(chunk))
    return result


async def arun_set(dataset: LabelledSet, judge: Judge, *, questions_for: QuestionsFor | None = None,
                   concurrency: int = 8, progress: bool = False, label: str = "judging",
                   rubric: Rubric | None = None) -> RunResult:
    """`run_set` for async code: `judge.aask` with at most `concurrency` calls in flight."""
    qf = questions_for or dataset.questions_for
    judge = rubric.asking(judge) if rubric is not None else judge
    result = RunResult(model=judge.model_id)
    sem = asyncio.Semaphore(max(1, concurrency))

    async def one(item: LabelledItem, bar: _Progress) -> None:
        async with sem:
            try:
                result.answers[item.id] = await judge.aask(item.state, qf(item))
            except JudgeError as exc:
                result.errors[item.id] = f"{type(exc).__name__}: {exc}"
            finally:
                bar.advance()

    with _Progress(len(dataset.items), label, progress) as bar:
        await asyncio.gather(*(one(it, bar) for it in dataset.items))
    # keep file order, whatever order the calls finished in
    result.answers = {it.id: result.answers[it.id] for it in dataset.items if it.id in result.answers}
    return result


__all__ = ["RunResult", "arun_set", "run_set"]
