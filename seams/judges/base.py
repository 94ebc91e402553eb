"""The judge contract: anything that answers questions about a state, sync and async.

One contract, one required method: a judge subclasses `Judge` and writes `ask` (one state,
answers for every question). Everything else has a default a judge overrides when it can do
better: `aask` (`ask` in a worker thread), `ask_many` / `aask_many` (one call per state; a local
model runs the pairs of many states together, a remote one sends them concurrently, and says so
with `batches`), `model_id` (the class name), `answer_identity` (the model id), `description` and
`release_date` (None), and `with_heads` (the judge itself: only a local model reads heads).

A judge written without subclassing (duck-typed) is taken when it has the documented members,
`model_id`, `ask`, `aask`, `ask_many` and `aask_many`: `as_judge` gives it the defaults for the
rest, and a refusal names what is missing. Callers never ask what a judge can do: they call the
contract. `WrappedJudge` is the one base of every judge over another judge (a cache, a cassette,
the headed judge, tracing, asked-alone): it forwards `batches`, `model_id`, `answer_identity`
and the many-state calls.
"""

from __future__ import annotations

import asyncio
import copy
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..answers import Answers
from ..errors import InputError, JudgeError, StateError
from ..questions import Choice, Noul, Score

if TYPE_CHECKING:
    from .head import Head

Questions = Mapping[str, Noul | Choice | Score]


class Judge(ABC):
    """Answers every question about one state in one call, and about many states in one call.

    Subclass it and write `ask`; override the rest when the judge can do better. `model_id`
    names the model the answers come from; calibrations are tied to it.
    """

    @property
    def model_id(self) -> str:
        """The model the answers come from (default: the class name)."""
        return type(self).__name__

    @property
    def answer_identity(self) -> str:
        """What decides this judge's answers, for keying cached ones (default: the model id; a
        local judge batching a batch-dependent model says how it batches)."""
        return self.model_id

    @property
    def batches(self) -> bool:
        """True when `ask_many` over many states costs less than one `ask` each (a local model
        batches their pairs): bulk work such as the calibration runner then sends chunks of states."""
        return False

    def check_limits(self, state: Any, questions: Mapping[str, Any]) -> None:
        """Raise what asking `questions` about `state` would raise for its size, under the
        current `work_limits` (`max_pairs`, `max_tokens`) and the judge's own bounds, without
        running a model: `seams serve` refuses such a request before it waits for a turn.
        Default: nothing to check before asking (a judge that plans its work says more)."""

    @property
    def description(self) -> str | None:
        """What `seams serve` says of this judge's model (None: a generic line)."""
        return None

    @property
    def release_date(self) -> str | None:
        """The model's release date, ISO (None: `seams serve` says today)."""
        return None

    @abstractmethod
    def ask(self, state: Any, questions: Questions) -> Answers:
        """Every question about `state`, answered in one call."""

    async def aask(self, state: Any, questions: Questions) -> Answers:
        """`ask` for async code (default: `ask` in a worker thread, never blocking the loop)."""
        return await asyncio.to_thread(self.ask, state, questions)

    def ask_many(self, states: Sequence[Any], questions: Questions) -> list[Answers]:
        """The same questions about several states, answers in input order (default: one `ask` each)."""
        return [self.ask(state, questions) for state in states]

    async def aask_many(self, states: Sequence[Any], questions: Questions) -> list[Answers]:
        """`ask_many` for async code (default: one `aask` each, in turn)."""
        return [await self.aask(state, questions) for state in states]

    def with_heads(self, heads: Mapping[str, Head]) -> Judge:
        """This judge with fitted heads laid over its answers (`seams calibrate --heads`); the
        judge itself when its model cannot read them (the default: only a local model's pair
        features can), so a calibration fitted on the headed judge reads as stale for it."""
        return self


class SyncJudge(Judge):
    """Base for judges whose work is synchronous: `aask` and `aask_many` run `ask` and `ask_many`
    in a worker thread, so the event loop is never blocked."""

    async def aask_many(self, states: Sequence[Any], questions: Questions) -> list[Answers]:
        return await asyncio.to_thread(self.ask_many, states, questions)


@runtime_checkable
class JudgeLike(Protocol):
    """What a judge written without subclassing `Judge` has: the documented members."""

    @property
    def model_id(self) -> str: ...

    def ask(self, state: Any, questions: Questions) -> Answers: ...

    async def aask(self, state: Any, questions: Questions) -> Answers: ...

    def ask_many(self, states: Sequence[Any], questions: Questions) -> list[Answers]: ...

    async def aask_many(self, states: Sequence[Any], questions: Questions) -> list[Answers]: ...


#: The members a duck-typed judge must have (docs/seams.md, "Writing a judge").
JUDGE_MEMBERS = ("model_id", "ask", "aask", "ask_many", "aask_many")


def judge_problem(obj: object) -> str | None:
    """Why `obj` is not a judge (the members it lacks), or None when it is one."""
    if isinstance(obj, Judge):
        return None
    missing = [m for m in JUDGE_MEMBERS if not hasattr(obj, m)]
    if not missing:
        return None
    return (f"{type(obj).__name__} is not a judge: it has no {', '.join(f'`{m}`' for m in missing)}; "
            "subclass seams.judges.Judge (or SyncJudge) and write `ask`, the one required method, or give it "
            "all of `model_id`, `ask`, `aask`, `ask_many` and `aask_many`")


def as_judge(obj: Judge | JudgeLike) -> Judge:
    """`obj` as a `Judge`: itself when it subclasses `Judge`; a duck-typed judge with every
    documented member given the defaults for the rest; anything else an `InputError` that names
    what it lacks."""
    if isinstance(obj, Judge):
        return obj
    problem = judge_problem(obj)
    if problem is not None:
        raise InputError(problem)
    return DuckTypedJudge(obj)


class DuckTypedJudge(Judge):
    """A judge that does not subclass `Judge`, with the contract's defaults for what it lacks
    (`batches` False, `answer_identity` its model id, no description or release date)."""

    def __init__(self, judge: JudgeLike) -> None:
        self.judge = judge

    @property
    def model_id(self) -> str:
        return self.judge.model_id

    def ask(self, state: Any, questions: Questions) -> Answers:
        return self.judge.ask(state, questions)

    async def aask(self, state: Any, questions: Questions) -> Answers:
        return await self.judge.aask(state, questions)

    def ask_many(self, states: Sequence[Any], questions: Questions) -> list[Answers]:
        return self.judge.ask_many(states, questions)

    async def aask_many(self, states: Sequence[Any], questions: Questions) -> list[Answers]:
        return await self.judge.aask_many(states, questions)

    def __repr__(self) -> str:
        return repr(self.judge)


class WrappedJudge(Judge):
    """Base for a judge over another judge (`judge`) that changes how it is asked, not which model
    answers: its `model_id`, `answer_identity` and `batches` are the wrapped judge's (a wrapper
    whose `ask_many` is not one call to the wrapped judge's says so by overriding `batches`). A
    wrapper writes `ask` (and `aask`, `ask_many`, `aask_many` as it needs: they are never
    forwarded past it, so nothing skips what the wrapper does). `with_heads` heads the wrapped
    judge and wraps the result the same way (a cache over a local model caches headed answers)."""

    def __init__(self, judge: Judge | JudgeLike) -> None:
        self.judge: Judge = as_judge(judge)

    @property
    def model_id(self) -> str:
        return self.judge.model_id

    @property
    def answer_identity(self) -> str:
        return self.judge.answer_identity

    @property
    def batches(self) -> bool:
        return self.judge.batches

    def check_limits(self, state: Any, questions: Mapping[str, Any]) -> None:
        self.judge.check_limits(state, questions)

    def with_heads(self, heads: Mapping[str, Head]) -> Judge:
        inner = self.judge.with_heads(heads)
        if inner is self.judge:
            return self
        return self.rewrap(inner)

    def rewrap(self, judge: Judge) -> WrappedJudge:
        """This wrapper over another judge (a shallow copy: what the wrapper holds is shared)."""
        other = copy.copy(self)
        other.judge = judge
        return other


#: What `answers_or_errors` gives a state: its answers, or why the judge could not answer it.
Answered = Answers | JudgeError | StateError


def answers_or_errors(judge: Judge, states: Sequence[Any], questions: Questions) -> list[Answered]:
    """The same questions about several states: one `ask_many`, and when that fails, one `ask` per
    state, so each state gets its own answers or its own error (in its slot, never raised).

    This is the one place that batches and falls back: `Rubric.decide_many`, lint and the
    calibration runner all ask through it. Errors other than a `JudgeError` or a `StateError` (the
    judge refusing a state, say over its token budget) propagate.
    """
    states = list(states)
    if len(states) > 1:
        try:
            return list(judge.ask_many(states, questions))
        except (JudgeError, StateError):
            pass  # find out which state failed, one by one
    out: list[Answered] = []
    for state in states:
        try:
            out.append(judge.ask(state, questions))
        except (JudgeError, StateError) as exc:
            out.append(exc)
    return out


async def aanswers_or_errors(judge: Judge, states: Sequence[Any], questions: Questions) -> list[Answered]:
    """`answers_or_errors` for async code: one `aask_many`, else one `aask` per state."""
    states = list(states)
    if len(states) > 1:
        try:
            return list(await judge.aask_many(states, questions))
        except (JudgeError, StateError):
            pass  # find out which state failed, one by one
    out: list[Answered] = []
    for state in states:
        try:
            out.append(await judge.aask(state, questions))
        except (JudgeError, StateError) as exc:
            out.append(exc)
    return out


def ask_all(judge: Judge, states: Sequence[Any], questions: Questions) -> list[Answers]:
    """The same questions about several states: one `ask_many` for several, one `ask` for one.
    Errors propagate (see `answers_or_errors` for one answer or error per state)."""
    if len(states) > 1:
        return list(judge.ask_many(list(states), questions))
    return [judge.ask(state, questions) for state in states]


__all__ = [
    "JUDGE_MEMBERS", "Answered", "DuckTypedJudge", "Judge", "JudgeLike", "Questions", "SyncJudge", "WrappedJudge",
    "aanswers_or_errors", "answers_or_errors", "as_judge", "ask_all", "judge_problem",
]
