"""Running a judge over a labelled set: every item asked once, concurrently, reporting progress.

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
from typing import TYPE_CHECKING, Any

from ..answers import Answers
from ..errors import JudgeError
from ..judges.base import Judge, answers_or_errors
from .dataset import LabelledItem, LabelledSet

if TYPE_CHECKING:
    from ..rubric import Rubric

QuestionsFor = Callable[[LabelledItem], Mapping[str, Any]]
#: Called with (items done, items in all) as answers arrive; the CLI draws it (`seams.cli.progress`).
#: Library code reports progress only through it, never by printing.
Progress = Callable[[int, int], None]


@dataclass
class RunResult:
    """Answers by item id, and the items whose judge call failed (with the error)."""

    model: str
    answers: dict[str, Answers] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.answers)


class ProgressCounter:
    """Counts finished items and reports `(done, total)` to an optional callback."""

    def __init__(self, progress: Progress | None, done: int, total: int) -> None:
        if isinstance(progress, bool):  # the flag this parameter was before it became a callback
            if progress:
                raise TypeError("progress is a callback progress(done, total), not a flag; the CLI's bar is "
                                "seams.cli.progress.progress_bar")
            progress = None
        self.done, self.total, self._progress = done, total, progress

    def advance(self, k: int = 1) -> None:
        self.done += k
        if self._progress is not None:
            self._progress(self.done, self.total)


def run_set(dataset: LabelledSet, judge: Judge, *, questions_for: QuestionsFor | None = None, concurrency: int = 8,
            progress: Progress | None = None, batch_size: int = 64, rubric: Rubric | None = None,
            offset: int = 0, grand_total: int | None = None) -> RunResult:
    """Ask `judge` every item's questions; return the answers and the per-item failures.

    A `JudgeError` on one item is recorded against it (and reported by the caller), never
    turned into an answer; any other error propagates. `rubric`, when the questions are its own,
    asks them as it does (`asked_alone`). `progress(done, total)` is called as items finish;
    `offset` and `grand_total` place this run inside a longer piece of work (the runs of
    `stability`), so one count covers all of it.
    """
    judge = rubric.asking(judge) if rubric is not None else judge
    if judge.batches and all(it.questions is None for it in dataset.items) and questions_for is None:
        bar = ProgressCounter(progress, offset, grand_total or len(dataset.items))
        return _run_batched(dataset, judge, batch_size, bar)
    return asyncio.run(arun_set(dataset, judge, questions_for=questions_for, concurrency=concurrency,
                                progress=progress, offset=offset, grand_total=grand_total))


def _run_batched(dataset: LabelledSet, judge: Judge, batch_size: int, bar: ProgressCounter) -> RunResult:
    result = RunResult(model=judge.model_id)
    qs = dataset.questions
    items = dataset.items
    for start in range(0, len(items), batch_size):
        chunk = items[start : start + batch_size]
        for it, got in zip(chunk, answers_or_errors(judge, [it.state for it in chunk], qs), strict=True):
            if isinstance(got, Answers):
                result.answers[it.id] = got
            elif isinstance(got, JudgeError):
                result.errors[it.id] = f"{type(got).__name__}: {got}"
            else:
                raise got
        bar.advance(len(chunk))
    return result


async def arun_set(dataset: LabelledSet, judge: Judge, *, questions_for: QuestionsFor | None = None,
                   concurrency: int = 8, progress: Progress | None = None, rubric: Rubric | None = None,
                   offset: int = 0, grand_total: int | None = None) -> RunResult:
    """`run_set` for async code: `judge.aask` with at most `concurrency` calls in flight."""
    qf = questions_for or dataset.questions_for
    judge = rubric.asking(judge) if rubric is not None else judge
    result = RunResult(model=judge.model_id)
    sem = asyncio.Semaphore(max(1, concurrency))
    bar = ProgressCounter(progress, offset, grand_total or len(dataset.items))

    async def one(item: LabelledItem) -> None:
        async with sem:
            try:
                result.answers[item.id] = await judge.aask(item.state, qf(item))
            except JudgeError as exc:
                result.errors[item.id] = f"{type(exc).__name__}: {exc}"
            finally:
                bar.advance()

    await asyncio.gather(*(one(it) for it in dataset.items))
    # keep file order, whatever order the calls finished in
    result.answers = {it.id: result.answers[it.id] for it in dataset.items if it.id in result.answers}
    return result


__all__ = ["Progress", "RunResult", "arun_set", "run_set"]
