"""The `Judge` protocol: anything that answers questions about a state, sync and async."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ..answers import Answers
from ..questions import Choice, Noul, Score

Questions = Mapping[str, Noul | Choice | Score]


@runtime_checkable
class Judge(Protocol):
    """Answers every question about one state in one call.

    `model_id` names the model the answers come from; calibrations are tied to it.
    """

    @property
    def model_id(self) -> str: ...

    def ask(self, state: Any, questions: Questions) -> Answers: ...

    async def aask(self, state: Any, questions: Questions) -> Answers: ...


class SyncJudge:
    """Mixin for judges whose work is synchronous: `aask` runs `ask` in a worker thread so the
    event loop is never blocked."""

    def ask(self, state: Any, questions: Questions) -> Answers:  # pragma: no cover - abstract
        raise NotImplementedError

    async def aask(self, state: Any, questions: Questions) -> Answers:
        return await asyncio.to_thread(self.ask, state, questions)


def ask_each(judge: Judge, states: Sequence[Any], questions: Questions) -> list[Answers]:
    """The same questions about several states: one batched `ask_many` when the judge has one
    (a local model runs all the pairs together), otherwise one `ask` per state."""
    bulk = getattr(judge, "ask_many", None)
    if callable(bulk) and len(states) > 1:
        return list(bulk(list(states), questions))
    return [judge.ask(state, questions) for state in states]


def answer_identity(judge: Judge) -> str:
    """What decides a judge's answers, for keying cached ones: its `answer_identity` when it has
    one (a local judge batching a batch-dependent model says how), else its model id."""
    return getattr(judge, "answer_identity", None) or judge.model_id


__all__ = ["Judge", "Questions", "SyncJudge", "answer_identity", "ask_each"]
