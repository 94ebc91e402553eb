"""What the typed seams share: resolving a judge and deciding one rubric over many states.

A seam often asks the same rubric about several states at once (one per retrieved passage, one
per nearest memory). A judge that can batch (`LocalJudge.ask_many`) answers them in one pass; any
other judge, or a `Cascade`, is asked state by state. A judge failure on the batch falls back to
asking state by state, so each state still gets the rubric's own `on_error` outcome.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..decision import Decision
from ..errors import JudgeError
from ..judges.base import Judge
from ..routing import Decider, JudgeDecider, as_decider
from ..rubric import Rubric


def load_rubric(rubric: Rubric | str | Path | None, default: str) -> Rubric:
    """A rubric given as an object, a built-in name or a path; the seam's built-in when None."""
    if rubric is None:
        return Rubric.builtin(default)
    if isinstance(rubric, Rubric):
        return rubric
    text = str(rubric)
    if text.endswith((".yaml", ".yml")):
        return Rubric.load(text)
    return Rubric.builtin(text)


def decide_many(rubric: Rubric, states: Sequence[Any], judge: Judge | Decider | None) -> list[Decision]:
    """One decision per state, batched when the judge can batch."""
    if not states:
        return []
    decider = as_decider(judge)
    if isinstance(decider, JudgeDecider):
        j = decider.judge
        if j is None:
            from ..judges import default_judge

            j = default_judge()
        j = rubric.asking(j)
        ask_many = getattr(j, "ask_many", None)
        if ask_many is not None and len(states) > 1:
            for s in states:
                rubric.check_state(s)
            started = time.perf_counter()
            try:
                many = ask_many(list(states), rubric.questions)
            except JudgeError:
                return [rubric.decide(s, judge=j) for s in states]
            ms = (time.perf_counter() - started) * 1000 / len(states)
            return [rubric.decide_answers(a, state=s, keep_state=False, latency_ms=ms)
                    for a, s in zip(many, states, strict=True)]
        return [rubric.decide(s, judge=j) for s in states]
    return [decider.decide(rubric, s) for s in states]


async def adecide_many(rubric: Rubric, states: Sequence[Any], judge: Judge | Decider | None) -> list[Decision]:
    """`decide_many` for async code (a batching judge runs in a worker thread)."""
    import asyncio

    decider = as_decider(judge)
    if isinstance(decider, JudgeDecider) and len(states) > 1:
        return await asyncio.to_thread(decide_many, rubric, states, judge)
    return [await decider.adecide(rubric, s) for s in states]


__all__ = ["adecide_many", "decide_many", "load_rubric"]
