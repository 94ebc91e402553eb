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
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from .decision import Decision, Zone
from .errors import InputError
from .judges.base import Judge, JudgeLike, as_judge, judge_problem

if TYPE_CHECKING:
    from .rubric import Rubric
    from .rubric.rubric import Known

#: A callable target: reads the rubric, the state and the uncertain decision, returns an outcome
#: name the rubric declares (or a whole Decision). May be sync or async.
Target = Callable[["Rubric", Any, Decision], "str | Decision | Awaitable[str | Decision]"]


@runtime_checkable
class Decider(Protocol):
    """Anything that decides a rubric for a state: a `Cascade`, or a judge wrapped by `JudgeDecider`.

    `known` holds answers that code knows for certain (see `Rubric.decide`); a decider passes them
    to every decision it makes, the error path's included, so no wrapper can lose them.
    `keep_state` keeps the state in the decision (for an audit log that records it).
    """

    def decide(self, rubric: Rubric, state: Any, *, known: Known | None = None,
               keep_state: bool = False) -> Decision: ...

    async def adecide(self, rubric: Rubric, state: Any, *, known: Known | None = None,
                      keep_state: bool = False) -> Decision: ...

    def decide_many(self, rubric: Rubric, states: Sequence[Any], *, known: Known | None = None,
                    keep_state: bool = False) -> list[Decision]: ...

    async def adecide_many(self, rubric: Rubric, states: Sequence[Any], *, known: Known | None = None,
                           keep_state: bool = False) -> list[Decision]: ...


@dataclass(frozen=True)
class JudgeDecider:
    """One judge as a `Decider` (None: the shipped local model)."""

    judge: Judge | None = None

    def decide(self, rubric: Rubric, state: Any, *, known: Known | None = None,
               keep_state: bool = False) -> Decision:
        return rubric.decide(state, judge=self.judge, known=known, keep_state=keep_state)

    async def adecide(self, rubric: Rubric, state: Any, *, known: Known | None = None,
                      keep_state: bool = False) -> Decision:
        return await rubric.adecide(state, judge=self.judge, known=known, keep_state=keep_state)

    def decide_many(self, rubric: Rubric, states: Sequence[Any], *, known: Known | None = None,
                    keep_state: bool = False) -> list[Decision]:
        return rubric.decide_many(states, judge=self.judge, known=known, keep_state=keep_state)

    async def adecide_many(self, rubric: Rubric, states: Sequence[Any], *, known: Known | None = None,
                           keep_state: bool = False) -> list[Decision]:
        return await rubric.adecide_many(states, judge=self.judge, known=known, keep_state=keep_state)


def as_decider(judge: Judge | JudgeLike | Decider | None) -> Decider:
    """A judge (duck-typed ones included: `as_judge`), a decider (a `Cascade`) or None (the
    shipped model), as a `Decider`; anything else an `InputError` naming what a judge lacks."""
    from .rubric import Rubric

    if judge is None:
        return JudgeDecider(None)
    if isinstance(judge, Decider) and not isinstance(judge, Rubric | Judge):
        return judge
    problem = judge_problem(judge)
    if problem is not None:
        raise InputError(f"expected a judge, a Cascade or None: {problem}")
    return JudgeDecider(as_judge(judge))


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
        | Decision` (sync or async) — for example a stronger LLM prompted with the rubric. The
        weak decision it is handed carries the `known` answers in its `answers`, also when the
        weak judge failed (`zone='error'`): a target can trust what it is handed.
    escalate_zones:
        Zones of the weak decision that escalate. The band (the policy's uncertain zone, gate
        bands included) and `error` (the weak judge failed) by default: a confident decision is
        already paid for.
    """

    def __init__(
        self,
        weak: Judge | JudgeLike | None,
        strong: Judge | JudgeLike | Target,
        *,
        escalate_zones: Iterable[Zone] = ("band", "error"),
    ) -> None:
        self.weak = as_judge(weak) if weak is not None else None
        self.strong: Judge | Target = (as_judge(strong) if judge_problem(strong) is None  # type: ignore[arg-type]
                                       else _target(strong))
        self.escalate_zones = frozenset(escalate_zones)
        self._lock = threading.Lock()
        self.weak_calls = 0
        self.strong_calls = 0

    @property
    def model_id(self) -> str:
        weak = self.weak.model_id if self.weak is not None else "default"
        strong = self.strong.model_id if isinstance(self.strong, Judge) else _target_name(self.strong)
        return f"cascade({weak}->{strong})"

    def _count(self, weak: int, strong: int) -> None:
        with self._lock:
            self.weak_calls += weak
            self.strong_calls += strong

    @property
    def escalation_rate(self) -> float:
        """Share of decisions that paid for the strong side."""
        return self.strong_calls / self.weak_calls if self.weak_calls else 0.0

    # ------------------------------------------------------------------ deciding

    def route(self, rubric: Rubric, state: Any, *, keep_state: bool = False, known: Known | None = None) -> Routed:
        """Decide with the weak judge, escalating to the strong side when it lands in `escalate_zones`.
        `known` answers (see `Rubric.decide`) hold on both sides."""
        return self.route_many(rubric, [state], keep_state=keep_state, known=known)[0]

    async def aroute(self, rubric: Rubric, state: Any, *, keep_state: bool = False,
                     known: Known | None = None) -> Routed:
        return (await self.aroute_many(rubric, [state], keep_state=keep_state, known=known))[0]

    def route_many(self, rubric: Rubric, states: Sequence[Any], *, keep_state: bool = False,
                   known: Known | None = None) -> list[Routed]:
        """`route` for many states: the weak judge is asked about all of them at once, the strong
        side about the ones that escalate."""
        firsts: list[Decision] = rubric.decide_many(states, judge=self.weak, keep_state=keep_state,
                                                    known=known)
        up = self._escalating(firsts)
        if isinstance(self.strong, Judge):
            seconds: list[Decision] = rubric.decide_many([states[i] for i in up], judge=self.strong,
                                                         keep_state=keep_state, known=known)
        else:
            seconds = [self._target(rubric, states[i], firsts[i], self.strong(rubric, states[i], firsts[i])) for i in up]
        return self._routed(firsts, dict(zip(up, seconds, strict=True)))

    async def aroute_many(self, rubric: Rubric, states: Sequence[Any], *, keep_state: bool = False,
                          known: Known | None = None) -> list[Routed]:
        """`route_many` for async code (a callable strong target may be async)."""
        firsts: list[Decision] = await rubric.adecide_many(states, judge=self.weak,
                                                           keep_state=keep_state, known=known)
        up = self._escalating(firsts)
        if isinstance(self.strong, Judge):
            seconds: list[Decision] = await rubric.adecide_many(
                [states[i] for i in up], judge=self.strong, keep_state=keep_state, known=known)
        else:
            seconds = []
            for i in up:
                result = self.strong(rubric, states[i], firsts[i])
                if inspect.isawaitable(result):
                    result = await result
                seconds.append(_from_target(rubric, firsts[i], result, self.strong))
        return self._routed(firsts, dict(zip(up, seconds, strict=True)))

    def _escalating(self, firsts: Sequence[Decision]) -> list[int]:
        """Which weak decisions go to the strong side; counts both."""
        up = [i for i, d in enumerate(firsts) if d.zone in self.escalate_zones]
        self._count(len(firsts), len(up))
        return up

    def _target(self, rubric: Rubric, state: Any, first: Decision, result: Any) -> Decision:
        """A sync call's strong-target answer; an async target needs the async path."""
        if inspect.isawaitable(result):
            if inspect.iscoroutine(result):
                result.close()  # never started: close it rather than leave an un-awaited coroutine
            raise InputError("an async strong target needs the async path: await cascade.aroute(...)")
        return _from_target(rubric, first, result, self.strong)

    @staticmethod
    def _routed(firsts: Sequence[Decision], seconds: Mapping[int, Decision]) -> list[Routed]:
        return [Routed(seconds[i], "strong", (d, seconds[i])) if i in seconds else Routed(d, "weak", (d,))
                for i, d in enumerate(firsts)]

    def decide(self, rubric: Rubric, state: Any, *, known: Known | None = None,
               keep_state: bool = False) -> Decision:
        """The final decision (the `Decider` protocol)."""
        return self.route(rubric, state, known=known, keep_state=keep_state).decision

    async def adecide(self, rubric: Rubric, state: Any, *, known: Known | None = None,
                      keep_state: bool = False) -> Decision:
        return (await self.aroute(rubric, state, known=known, keep_state=keep_state)).decision

    def decide_many(self, rubric: Rubric, states: Sequence[Any], *, known: Known | None = None,
                    keep_state: bool = False) -> list[Decision]:
        return [r.decision for r in self.route_many(rubric, states, known=known, keep_state=keep_state)]

    async def adecide_many(self, rubric: Rubric, states: Sequence[Any], *, known: Known | None = None,
                           keep_state: bool = False) -> list[Decision]:
        return [r.decision for r in await self.aroute_many(rubric, states, known=known, keep_state=keep_state)]

    def __repr__(self) -> str:
        return f"Cascade({self.weak!r}, {self.strong!r}, escalate_zones={sorted(self.escalate_zones)})"


def _target(strong: object) -> Target:
    """A strong side that is not a judge: it must be a callable target."""
    if not callable(strong):
        raise InputError(f"a Cascade's strong side is a judge or a callable target; {judge_problem(strong)}")
    return strong


def _target_name(target: Any) -> str:
    """How a callable target (never a judge) is named in a decision's `model`: its `__name__`
    (a function's, or one a callable object carries), else its type's."""
    return str(getattr(target, "__name__", type(target).__name__))


def _from_target(rubric: Rubric, first: Decision, result: Any, target: Any) -> Decision:
    """A callable target's answer as a Decision: an outcome name must be one the rubric declares."""
    if isinstance(result, Decision):
        return result
    outcomes = rubric.policy.outcomes
    if not isinstance(result, str) or result not in outcomes:
        raise InputError(
            f"escalation target {_target_name(target)!r} returned {result!r}; "
            f"it must return one of the outcomes rubric {rubric.name!r} declares: {sorted(outcomes)}"
        )
    return first.model_copy(
        update={
            "outcome": result,
            "kind": outcomes[result],
            "rule": "escalation",
            "model": _target_name(target),
            "error": None,
        }
    )


__all__ = ["Cascade", "Decider", "JudgeDecider", "Routed", "Target", "as_decider"]
