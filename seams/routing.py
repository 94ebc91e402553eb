"""Routing targets: where a decision that is not automatic goes.

A policy has three zones; only the band between its cut-points is uncertain. `Cascade` asks a
cheap judge first and pays for the strong one only when the cheap decision lands in the band (or
the cheap judge failed), so most decisions cost what the weak judge costs while the uncertain
ones get the better model. The strong side may be another judge (local → remote, a bigger local
model) or any callable (a stronger LLM that reads the state and names an outcome).

Everything here decides through `Rubric.decide`/`adecide`, so a routed decision carries the same
provenance as any other, and `Routed.steps` keeps every decision made on the way.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from .decision import Decision, Zone
from .errors import InputError
from .judges.base import Judge

if TYPE_CHECKING:
    from .rubric import Rubric

#: A callable target: reads the rubric, the state and the uncertain decision, returns an outcome
#: name the rubric declares (or a whole Decision). May be sync or async.
Target = Callable[["Rubric", Any, Decision], "str | Decision | Awaitable[str | Decision]"]


@runtime_checkable
class Decider(Protocol):
    """Anything that decides a rubric for a state: a `Cascade`, or a judge wrapped by `JudgeDecider`."""

    def decide(self, rubric: Rubric, state: Any) -> Decision: ...

    async def adecide(self, rubric: Rubric, state: Any) -> Decision: ...


@dataclass(frozen=True)
class JudgeDecider:
    """One judge as a `Decider` (None: the shipped local model)."""

    judge: Judge | None = None

    def decide(self, rubric: Rubric, state: Any) -> Decision:
        return rubric.decide(state, judge=self.judge)

    async def adecide(self, rubric: Rubric, state: Any) -> Decision:
        return await rubric.adecide(state, judge=self.judge)


def as_decider(judge: Judge | Decider | None) -> Decider:
    """A judge, a decider (a `Cascade`) or None (the shipped model), as a `Decider`."""
    if judge is None:
        return JudgeDecider(None)
    if _is_decider(judge):
        return judge  # type: ignore[return-value]
    if hasattr(judge, "ask") and hasattr(judge, "aask"):
        return JudgeDecider(judge)  # type: ignore[arg-type]
    raise InputError(f"expected a judge, a Cascade or None, got {type(judge).__name__}")


def _is_decider(obj: Any) -> bool:
    decide = getattr(obj, "decide", None)
    if decide is None:
        return False
    try:
        params = list(inspect.signature(decide).parameters)
    except (TypeError, ValueError):
        return False
    return params[:2] == ["rubric", "state"]


@dataclass(frozen=True)
class Routed:
    """A decision and how it was reached: `route` is the side that made the final decision."""

    decision: Decision
    route: Literal["weak", "strong"]
    steps: tuple[Decision, ...] = field(default=())

    @property
    def escalated(self) -> bool:
        return self.route == "strong"


class Cascade:
    """Ask `weak` first; ask `strong` only when the weak decision is not automatic.

    Parameters
    ----------
    weak:
        The cheap judge (None: the shipped local model).
    strong:
        A stronger judge, or a callable target `(rubric, state, weak_decision) -> outcome name
        | Decision` (sync or async) — for example a stronger LLM prompted with the rubric.
    escalate_zones:
        Zones of the weak decision that escalate. The band (the policy's uncertain zone, gate
        bands included) and `error` (the weak judge failed) by default: a confident decision is
        already paid for.
    """

    def __init__(
        self,
        weak: Judge | None,
        strong: Judge | Target,
        *,
        escalate_zones: Iterable[Zone] = ("band", "error"),
    ) -> None:
        self.weak = weak
        self.strong = strong
        self.escalate_zones = frozenset(escalate_zones)
        self._lock = threading.Lock()
        self.weak_calls = 0
        self.strong_calls = 0

    @property
    def model_id(self) -> str:
        weak = getattr(self.weak, "model_id", "default")
        strong = getattr(self.strong, "model_id", getattr(self.strong, "__name__", "callable"))
        return f"cascade({weak}->{strong})"

    def _count(self, strong: bool) -> None:
        with self._lock:
            if strong:
                self.strong_calls += 1
            else:
                self.weak_calls += 1

    @property
    def escalation_rate(self) -> float:
        """Share of decisions that paid for the strong side."""
        return self.strong_calls / self.weak_calls if self.weak_calls else 0.0

    # ------------------------------------------------------------------ deciding

    def route(self, rubric: Rubric, state: Any, *, keep_state: bool = False) -> Routed:
        first = rubric.decide(state, judge=self.weak, keep_state=keep_state)
        self._count(False)
        if first.zone not in self.escalate_zones:
            return Routed(first, "weak", (first,))
        self._count(True)
        if isinstance(self.strong, Judge):
            second = rubric.decide(state, judge=self.strong, keep_state=keep_state)
        else:
            result = self.strong(rubric, state, first)
            if inspect.isawaitable(result):
                close = getattr(result, "close", None)
                if close is not None:
                    close()  # never started: close it rather than leave an un-awaited coroutine
                raise InputError("an async strong target needs the async path: await cascade.aroute(...)")
            second = _from_target(rubric, first, result, self.strong)
        return Routed(second, "strong", (first, second))

    async def aroute(self, rubric: Rubric, state: Any, *, keep_state: bool = False) -> Routed:
        first = await rubric.adecide(state, judge=self.weak, keep_state=keep_state)
        self._count(False)
        if first.zone not in self.escalate_zones:
            return Routed(first, "weak", (first,))
        self._count(True)
        if isinstance(self.strong, Judge):
            second = await rubric.adecide(state, judge=self.strong, keep_state=keep_state)
        else:
            result = self.strong(rubric, state, first)
            if inspect.isawaitable(result):
                result = await result
            second = _from_target(rubric, first, result, self.strong)
        return Routed(second, "strong", (first, second))

    def decide(self, rubric: Rubric, state: Any) -> Decision:
        """The final decision (the `Decider` protocol)."""
        return self.route(rubric, state).decision

    async def adecide(self, rubric: Rubric, state: Any) -> Decision:
        return (await self.aroute(rubric, state)).decision

    def __repr__(self) -> str:
        return f"Cascade({self.weak!r}, {self.strong!r}, escalate_zones={sorted(self.escalate_zones)})"


def _from_target(rubric: Rubric, first: Decision, result: Any, target: Any) -> Decision:
    """A callable target's answer as a Decision: an outcome name must be one the rubric declares."""
    if isinstance(result, Decision):
        return result
    outcomes = rubric.policy.outcomes
    if not isinstance(result, str) or result not in outcomes:
        raise InputError(
            f"escalation target {getattr(target, '__name__', target)!r} returned {result!r}; "
            f"it must return one of the outcomes rubric {rubric.name!r} declares: {sorted(outcomes)}"
        )
    return first.model_copy(
        update={
            "outcome": result,
            "kind": outcomes[result],
            "rule": "escalation",
            "model": getattr(target, "__name__", type(target).__name__),
            "error": None,
        }
    )


__all__ = ["Cascade", "Decider", "JudgeDecider", "Routed", "Target", "as_decider"]
