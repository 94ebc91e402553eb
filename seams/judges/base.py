"""The `Judge` protocol: anything that answers questions about a state, sync and async.

One protocol, with defaults: a judge answers one state (`ask` / `aask`) and many
(`ask_many` / `aask_many`). A judge that subclasses `Judge` (or `SyncJudge`) inherits the many-state
methods as loops over the one-state ones; a judge that can do better (a local model runs the pairs
of many states together, a remote one sends them concurrently) overrides them and says so with
`batches`. Callers never ask what a judge can do: they call the protocol.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ..answers import Answers
from ..errors import JudgeError, StateError
from ..questions import Choice, Noul, Score

Questions = Mapping[str, Noul | Choice | Score]


@runtime_checkable
class Judge(Protocol):
    """Answers every question about one state in one call, and about many states in one call.

    `model_id` names the model the answers come from; calibrations are tied to it. Subclass this
    (or `SyncJudge`, for synchronous work) to inherit `ask_many` / `aask_many` as loops.
    """

    #: True when `ask_many` over many states costs less than one `ask` each (a local model batches
    #: their pairs): bulk work such as the calibration runner then sends chunks of states.
    batches: bool = False

    @property
    def model_id(self) -> str: ...

    def ask(self, state: Any, questions: Questions) -> Answers: ...

    async def aask(self, state: Any, questions: Questions) -> Answers: ...

    def ask_many(self, states: Sequence[Any], questions: Questions) -> list[Answers]:
        """The same questions about several states, answers in input order (default: one `ask` each)."""
        return [self.ask(state, questions) for state in states]

    async def aask_many(self, states: Sequence[Any], questions: Questions) -> list[Answers]:
        """`ask_many` for async code (default: one `aask` each, in turn)."""
        return [await self.aask(state, questions) for state in states]


class SyncJudge(Judge):
    """Base for judges whose work is synchronous: `aask` and `aask_many` run `ask` and `ask_many`
    in a worker thread, so the event loop is never blocked."""

    def ask(self, state: Any, questions: Questions) -> Answers:  # pragma: no cover - abstract
        raise NotImplementedError

    async def aask(self, state: Any, questions: Questions) -> Answers:
        return await asyncio.to_thread(self.ask, state, questions)

    async def aask_many(self, states: Sequence[Any], questions: Questions) -> list[Answers]:
        return await asyncio.to_thread(self.ask_many, states, questions)


class WrappedJudge(Judge):
    """Base for a judge over another judge (`judge`) that changes how it is asked, not which model
    answers: its `model_id` and `batches` are the wrapped judge's."""

    def __init__(self, judge: Judge) -> None:
        self.judge = judge

    @property
    def model_id(self) -> str:
        return self.judge.model_id

    @property
    def batches(self) -> bool:  # type: ignore[override]
        return self.judge.batches


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


def answer_identity(judge: Judge) -> str:
    """What decides a judge's answers, for keying cached ones: its `answer_identity` when it has
    one (a local judge batching a batch-dependent model says how), else its model id."""
    return getattr(judge, "answer_identity", None) or judge.model_id


__all__ = [
    "Answered", "Judge", "Questions", "SyncJudge", "WrappedJudge", "aanswers_or_errors", "answers_or_errors", "answer_identity",
    "ask_all",
]
