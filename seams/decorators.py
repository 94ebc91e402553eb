"""Decorators around agent steps: `@gate` decides before a call, `@route` picks a branch or model.

An agent step is a function; the seam before it is a decision. Writing the decision as a
decorator keeps the step's own code about its job while the policy, its numbers and its audit
trail live in the rubric:

    @gate("confirm-before-act", state=lambda req, action: {"request": req, "action": action},
          queue=ReviewQueue("reviews.db"))
    def run_action(req: str, action: str) -> str: ...

Both decorators work on sync and async functions (async ones decide with `adecide`, never
blocking the loop), keep the wrapped function's name, docstring, signature and type hints
(`functools.wraps`; `inspect.signature` follows `__wrapped__`), and expose the decision to the
code they call through `current_decision()`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from .audit import AuditLog
from .decision import Decision
from .errors import Deferred, InputError, QueueFull, Refused
from .judges.base import Judge
from .queue import ReviewQueue
from .routing import Decider, as_decider
from .rubric import Rubric
from .rubric.rubric import Known

F = TypeVar("F", bound=Callable[..., Any])

_current: ContextVar[Decision | None] = ContextVar("seams_current_decision", default=None)
_MISSING = object()


def current_decision() -> Decision | None:
    """The decision that let the current call through (inside a gated or routed function, its
    fallback or its escalation target); None elsewhere."""
    return _current.get()


def _state_builder(fn: Callable[..., Any], state: Callable[..., Any] | None,
                   exclude: tuple[str, ...] = ()) -> Callable[..., Any]:
    """The user's builder, or one that makes an object state of the call's bound arguments."""
    if state is not None:
        if not callable(state):
            raise InputError(f"state must be a callable building the state from the call's arguments, got {state!r}")
        return state
    sig = inspect.signature(fn)
    skip = {"self", "cls", *exclude}

    def from_arguments(*args: Any, **kwargs: Any) -> dict[str, Any]:
        bound = sig.bind_partial(*args, **kwargs)
        bound.apply_defaults()
        out: dict[str, Any] = {}
        for name, value in bound.arguments.items():
            kind = sig.parameters[name].kind
            if name in skip:
                continue
            if kind is inspect.Parameter.VAR_KEYWORD:
                out.update(value)
            elif kind is inspect.Parameter.VAR_POSITIONAL:
                out[name] = list(value)
            else:
                out[name] = value
        return out

    return from_arguments


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


@contextmanager
def _deciding(decision: Decision) -> Iterator[None]:
    """`current_decision()` is `decision` for the code called inside."""
    token = _current.set(decision)
    try:
        yield
    finally:
        _current.reset(token)


class _Seam:
    """What both decorators share: the rubric, the decider, the state builder and the audit log."""

    def __init__(self, fn: Callable[..., Any], rubric: Rubric | str | Path, state: Callable[..., Any] | None,
                 judge: Judge | Decider | None, audit: AuditLog | None, exclude: tuple[str, ...] = (),
                 known: Known | Callable[..., Known] | None = None) -> None:
        self.fn = fn
        self.rubric = Rubric.resolve(rubric)
        self.build = _state_builder(fn, state, exclude)
        self.decider = as_decider(judge)
        self.audit = audit
        # an audit log that records states needs the decision to keep it
        self.keep_state = audit is not None and audit.include_state
        if known is not None and not callable(known) and not isinstance(known, Mapping):
            raise InputError(f"known must be a mapping of question id to answer, or a callable building one "
                             f"from the call's arguments, got {known!r}")
        self.known = known
        self.site = f"{fn.__module__}.{fn.__qualname__}"

    def _record(self, decision: Decision, **extra: Any) -> None:
        if self.audit is not None:
            self.audit.record(decision, site=self.site, **extra)

    def _known_for_call(self, *args: Any, **kwargs: Any) -> Known | None:
        return self.known(*args, **kwargs) if callable(self.known) else self.known

    def decide(self, *args: Any, **kwargs: Any) -> tuple[Any, Decision]:
        state = self.build(*args, **kwargs)
        return state, self.decider.decide(self.rubric, state, known=self._known_for_call(*args, **kwargs),
                                          keep_state=self.keep_state)

    async def adecide(self, *args: Any, **kwargs: Any) -> tuple[Any, Decision]:
        state = self.build(*args, **kwargs)
        return state, await self.decider.adecide(self.rubric, state, known=self._known_for_call(*args, **kwargs),
                                                 keep_state=self.keep_state)


def _wrapper(seam: _Seam, call: Callable[..., Any], acall: Callable[..., Any]) -> Any:
    """The decorated function: `call` (or `acall` for a coroutine function) under its name,
    docstring and signature, with `.rubric` and `.decide` for tests and tools."""
    wrapper: Any
    if inspect.iscoroutinefunction(seam.fn):

        @functools.wraps(seam.fn)
        async def awrapper(*args: Any, **kwargs: Any) -> Any:
            return await acall(*args, **kwargs)

        wrapper = awrapper
        wrapper.decide = seam.adecide
    else:

        @functools.wraps(seam.fn)
        def swrapper(*args: Any, **kwargs: Any) -> Any:
            return call(*args, **kwargs)

        wrapper = swrapper
        wrapper.decide = seam.decide
    wrapper.rubric = seam.rubric
    return wrapper


# --------------------------------------------------------------------------- @gate


def gate(
    rubric: Rubric | str | Path,
    *,
    state: Callable[..., Any] | None = None,
    judge: Judge | Decider | None = None,
    on_refuse: Callable[..., Any] | None = None,
    queue: ReviewQueue | None = None,
    escalate: Callable[..., Any] | None = None,
    audit: AuditLog | None = None,
    known: Known | Callable[..., Known] | None = None,
) -> Callable[[F], F]:
    """Decide `rubric` before each call, then proceed, refuse, escalate or queue.

    Parameters
    ----------
    rubric:
        A `Rubric`, a built-in rubric's name, or a path to a rubric file.
    state:
        Builds the state from the call's arguments (called with the same arguments). None makes
        an object state of the bound arguments by name (defaults applied, `self` left out).
    judge:
        A judge, a `Cascade`, or None for the shipped local model.
    on_refuse:
        Called with the call's arguments when the decision is a refusal; its return value is the
        call's. None raises `Refused` (carrying the decision) instead — a refusal is never silent.
    queue:
        Where review decisions go when there is no `escalate`: the state is enqueued (once per
        state) and `Deferred` is raised with the item id. A full queue falls back to refusing.
    escalate:
        Called with the call's arguments instead of the function on a review decision: a
        stronger model doing the same step. Takes precedence over `queue`.
    audit:
        An `AuditLog` that records every decision with the call site (and the state, when the
        log was opened with `include_state=True`).
    known:
        Answers that code knows for certain (see `Rubric.decide`): a mapping, or a callable
        building one from the call's arguments. Those questions are not asked, and every
        decider keeps them, a `Cascade`'s strong side included when the weak judge fails.

    A review decision with neither `escalate` nor `queue` is refused: when nobody can look, the
    gate fails closed.
    """
    rubric = Rubric.resolve(rubric)  # a bad reference fails here, where it is written

    def wrap(fn: F) -> F:
        steps = _GateSteps(_Seam(fn, rubric, state, judge, audit, known=known), on_refuse=on_refuse, queue=queue,
                           escalate=escalate)
        return _wrapper(steps.seam, steps.call, steps.acall)

    return wrap


@dataclass(frozen=True)
class _Step:
    """What a decision leads to: a function to call with the call's arguments, or an error to
    raise; `action` is how the audit log names it."""

    action: str
    target: Callable[..., Any] | None = None
    error: Exception | None = None


class _GateSteps:
    """`@gate`'s steps: decide, pick what the decision leads to, record it, then call or raise."""

    def __init__(self, seam: _Seam, *, on_refuse: Callable[..., Any] | None, queue: ReviewQueue | None,
                 escalate: Callable[..., Any] | None) -> None:
        self.seam = seam
        self.on_refuse = on_refuse
        self.queue = queue
        self.escalate = escalate

    def step(self, decision: Decision, state: Any) -> _Step:
        if decision.kind == "act":
            return _Step("proceeded", self.seam.fn)
        if decision.kind == "review":
            return self._review(decision, state)
        return self._refuse(decision, None)

    def _review(self, decision: Decision, state: Any) -> _Step:
        """Escalate, else queue (once per state) and defer, else refuse: nobody can look."""
        if self.escalate is not None:
            return _Step("escalated", self.escalate)
        if self.queue is None:
            return self._refuse(decision, "no escalation target or review queue")
        try:
            item = self.queue.enqueue(state, decision=decision, meta={"site": self.seam.site}).item
        except QueueFull as exc:
            return self._refuse(decision, f"review queue is full ({exc})")
        return _Step("raised", error=Deferred(f"{self.seam.site}: {_why(decision)}; queued for review as item {item.id}",
                                              decision=decision, item_id=item.id))

    def _refuse(self, decision: Decision, note: str | None) -> _Step:
        if self.on_refuse is not None:
            return _Step("fallback", self.on_refuse)
        extra = f" ({note})" if note else ""
        return _Step("raised", error=Refused(f"{self.seam.site}: {_why(decision)}{extra}", decision=decision))

    def _target(self, decision: Decision, state: Any) -> Callable[..., Any]:
        step = self.step(decision, state)
        self.seam._record(decision, action=step.action)
        if step.error is not None:
            raise step.error
        assert step.target is not None
        return step.target

    def call(self, *args: Any, **kwargs: Any) -> Any:
        state, decision = self.seam.decide(*args, **kwargs)
        target = self._target(decision, state)
        with _deciding(decision):
            result = target(*args, **kwargs)
        if inspect.isawaitable(result):
            raise InputError(f"{self.seam.site} is sync but its fallback or escalation target is async")
        return result

    async def acall(self, *args: Any, **kwargs: Any) -> Any:
        state, decision = await self.seam.adecide(*args, **kwargs)
        target = self._target(decision, state)
        with _deciding(decision):
            return await _maybe_await(target(*args, **kwargs))


def _why(decision: Decision) -> str:
    if decision.zone == "error":
        return f"rubric {decision.rubric!r} failed closed to {decision.outcome!r}: {decision.error}"
    if decision.rule is None:
        return f"rubric {decision.rubric!r} defaulted to {decision.outcome!r} ({decision.kind})"
    p = f"{decision.probability:.3f}" if decision.probability is not None else "?"
    t = f"{decision.threshold:.3f}" if decision.threshold is not None else "?"
    return (f"rubric {decision.rubric!r} decided {decision.outcome!r} ({decision.kind}) by rule {decision.rule!r}: "
            f"{decision.question} = {p} in the {decision.zone} zone (threshold {t})")


# --------------------------------------------------------------------------- @route


def route(
    rubric: Rubric | str | Path,
    *,
    state: Callable[..., Any] | None = None,
    judge: Judge | Decider | None = None,
    branches: Mapping[str, Callable[..., Any]] | None = None,
    choices: Mapping[str, Any] | None = None,
    param: str = "model",
    default: Any = _MISSING,
    audit: AuditLog | None = None,
    known: Known | Callable[..., Known] | None = None,
) -> Callable[[F], F]:
    """Pick a branch or a model by the rubric's outcome.

    With `branches` (outcome → function taking the same arguments), the outcome's branch is
    called and the decorated function is the branch for every other outcome. With `choices`
    (outcome → value, such as a model name), the decorated function is called with the chosen
    value as keyword argument `param`; every declared outcome needs a choice unless `default` is
    given, which is checked when decorating, not on the first unlucky call. `audit` and `known`
    are as for `gate`.
    """
    if branches is not None and choices is not None:
        raise InputError("give either branches (outcome → function) or choices (outcome → value), not both")
    rubric = Rubric.resolve(rubric)

    def wrap(fn: F) -> F:
        seam = _Seam(fn, rubric, state, judge, audit, exclude=(param,) if choices is not None else (), known=known)
        _check_route(seam, branches, choices, param, default)
        steps = _RouteSteps(seam, branches=branches, choices=choices, param=param, default=default)
        return _wrapper(seam, steps.call, steps.acall)

    return wrap


def _check_route(seam: _Seam, branches: Mapping[str, Callable[..., Any]] | None, choices: Mapping[str, Any] | None,
                 param: str, default: Any) -> None:
    """Branches and choices name outcomes of the rubric, and cover them all unless `default`
    is given; the function can receive `param`. Checked when decorating."""
    outcomes = set(seam.rubric.policy.outcomes)
    for name in (branches or {}):
        if name not in outcomes:
            raise InputError(f"route branch {name!r} is not an outcome of rubric {seam.rubric.name!r}: "
                             f"{sorted(outcomes)}")
    if choices is None:
        return
    unknown = sorted(set(choices) - outcomes)
    if unknown:
        raise InputError(f"route choices {unknown} are not outcomes of rubric {seam.rubric.name!r}: "
                         f"{sorted(outcomes)}")
    missing = sorted(outcomes - set(choices))
    if missing and default is _MISSING:
        raise InputError(f"route choices miss outcome(s) {missing} of rubric {seam.rubric.name!r}; "
                         "add them or give default=")
    params = inspect.signature(seam.fn).parameters
    if param not in params and not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        raise InputError(f"{seam.site} has no parameter {param!r} to receive the routed choice")


class _RouteSteps:
    """`@route`'s steps: decide, pick the outcome's branch or choice, record it, call."""

    def __init__(self, seam: _Seam, *, branches: Mapping[str, Callable[..., Any]] | None,
                 choices: Mapping[str, Any] | None, param: str, default: Any) -> None:
        self.seam = seam
        self.branches = branches
        self.choices = choices
        self.param = param
        self.default = default

    def _target(self, decision: Decision, kwargs: dict[str, Any]) -> Callable[..., Any]:
        self.seam._record(decision, action=f"route:{decision.outcome}")
        if self.branches is not None and decision.outcome in self.branches:
            return self.branches[decision.outcome]
        if self.choices is not None:
            kwargs[self.param] = self.choices.get(decision.outcome, self.default)
        return self.seam.fn

    def call(self, *args: Any, **kwargs: Any) -> Any:
        _, decision = self.seam.decide(*args, **kwargs)
        target = self._target(decision, kwargs)
        with _deciding(decision):
            return target(*args, **kwargs)

    async def acall(self, *args: Any, **kwargs: Any) -> Any:
        _, decision = await self.seam.adecide(*args, **kwargs)
        target = self._target(decision, kwargs)
        with _deciding(decision):
            return await _maybe_await(target(*args, **kwargs))


__all__ = ["current_decision", "gate", "route"]
