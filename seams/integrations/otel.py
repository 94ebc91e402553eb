"""OpenTelemetry spans for every decision and every judge call under it (`pip install seams[otel]`).

Only `opentelemetry-api` is used; which SDK and exporter receive the spans is the application's
choice. Nothing in seams imports this module, so OpenTelemetry is never loaded until asked:

* `instrument(tracer_provider=None)` wraps `Rubric.decide_many`/`adecide_many` and
  `Cascade.route_many`/`aroute_many`, through which every decision and cascade goes (the way
  OpenTelemetry's own instrumentations wrap a library), so every decision in the process emits a
  `seams.decide` span whose child is the `seams.judge.ask` span of the call it made, and a
  cascade's two stages sit under one `seams.cascade` span; a batch is one `seams.decide_many`
  span over its one judge call, with a `seams.decide` child per decision; `uninstrument()` undoes it;
* `traced(judge)` wraps one judge only, for code that wants spans for its own calls.

A span carries the rubric's name, version and hash, the outcome and its kind, the rule that fired,
the zone, the probability and threshold that decided, the model id, latency and windows — never
the raw state unless `include_state=True`, since a trace backend is not where user data belongs.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode, Tracer

from ..answers import Answers
from ..decision import Decision
from ..judges.base import Judge, WrappedJudge
from ..state import canonical_json
from ..version import __version__

DECIDE, JUDGE, CASCADE = "seams.decide", "seams.judge.ask", "seams.cascade"


def _tracer(tracer_provider: trace.TracerProvider | None) -> Tracer:
    return trace.get_tracer("seams", __version__, tracer_provider=tracer_provider)


def _set(span: Span, attrs: Mapping[str, Any]) -> None:
    """Set the attributes that have a value (OpenTelemetry takes no None)."""
    span.set_attributes({k: v for k, v in attrs.items() if v is not None})


def decision_attributes(decision: Decision) -> dict[str, Any]:
    """What a decision span says: everything an auditor reads, except the state."""
    return {
        "seams.rubric.name": decision.rubric,
        "seams.rubric.version": decision.rubric_version,
        "seams.rubric.hash": decision.rubric_hash,
        "seams.decision.outcome": decision.outcome,
        "seams.decision.kind": decision.kind,
        "seams.decision.rule": decision.rule,
        "seams.decision.zone": decision.zone,
        "seams.decision.question": decision.question,
        "seams.decision.option": decision.option,
        "seams.decision.probability": decision.probability,
        "seams.decision.threshold": decision.threshold,
        "seams.decision.calibrated": decision.calibrated,
        "seams.decision.error": decision.error,
        "seams.model": decision.model,
        "seams.latency_ms": decision.latency_ms,
        "seams.windows": decision.windows,
    }


def _answers_attributes(answers: Answers) -> dict[str, Any]:
    return {
        "seams.model": answers.model,
        "seams.latency_ms": answers.latency_ms,
        "seams.windows": answers.windows,
        "seams.usage.input_tokens": answers.usage.input_tokens,
        "seams.usage.output_tokens": answers.usage.output_tokens,
    }


def _many_attributes(out: Sequence[Answers]) -> dict[str, Any]:
    return {"seams.model": out[0].model if out else None, "seams.latency_ms": sum(a.latency_ms for a in out)}


@contextmanager
def _span(tracer: Tracer, name: str, attrs: Mapping[str, Any]) -> Iterator[Span]:
    """A current span that records an exception and marks itself failed before re-raising."""
    with tracer.start_as_current_span(name, record_exception=False, set_status_on_exception=False) as span:
        _set(span, attrs)
        try:
            yield span
        except BaseException as exc:
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
            raise


class TracingJudge(WrappedJudge):
    """A judge whose every call is a `seams.judge.ask` span; answers pass through unchanged."""

    def __init__(self, judge: Judge, tracer: Tracer, *, include_state: bool = False) -> None:
        super().__init__(judge)
        self._tracer = tracer
        self._include_state = include_state

    def _attrs(self, states: Sequence[Any], questions: Mapping[str, Any]) -> dict[str, Any]:
        attrs: dict[str, Any] = {"seams.judge.model": self.judge.model_id, "seams.judge.questions": list(questions),
                                 "seams.judge.states": len(states)}
        if self._include_state:
            attrs["seams.state"] = canonical_json(states[0] if len(states) == 1 else list(states))
        return attrs

    def ask(self, state: Any, questions: Mapping[str, Any]) -> Answers:
        with _span(self._tracer, JUDGE, self._attrs([state], questions)) as span:
            answers = self.judge.ask(state, questions)
            _set(span, _answers_attributes(answers))
            return answers

    async def aask(self, state: Any, questions: Mapping[str, Any]) -> Answers:
        with _span(self._tracer, JUDGE, self._attrs([state], questions)) as span:
            answers = await self.judge.aask(state, questions)
            _set(span, _answers_attributes(answers))
            return answers

    def ask_many(self, states: Sequence[Any], questions: Mapping[str, Any]) -> list[Answers]:
        """One span for a batch (batched the way the wrapped judge batches)."""
        with _span(self._tracer, JUDGE, self._attrs(states, questions)) as span:
            out = self.judge.ask_many(states, questions)
            _set(span, _many_attributes(out))
            return out

    async def aask_many(self, states: Sequence[Any], questions: Mapping[str, Any]) -> list[Answers]:
        with _span(self._tracer, JUDGE, self._attrs(states, questions)) as span:
            out = await self.judge.aask_many(states, questions)
            _set(span, _many_attributes(out))
            return out

    def __repr__(self) -> str:
        return f"TracingJudge({self.judge!r})"


def traced(judge: Judge | None = None, tracer_provider: trace.TracerProvider | None = None, *,
           include_state: bool = False) -> TracingJudge:
    """`judge` (None: the shipped model) with a span for each of its calls."""
    from ..judges import default_judge

    return TracingJudge(judge if judge is not None else default_judge(), _tracer(tracer_provider),
                        include_state=include_state)


# --------------------------------------------------------------------------- instrument()

_originals: dict[tuple[type, str], Callable[..., Any]] = {}


def _decide_attrs(rubric: Any, state: Any, include_state: bool) -> dict[str, Any]:
    attrs = {"seams.rubric.name": rubric.name, "seams.rubric.version": rubric.version,
             "seams.rubric.hash": rubric.hash}
    if include_state:
        attrs["seams.state"] = canonical_json(state)
    return attrs


def _finish(span: Span, decision: Decision) -> None:
    _set(span, decision_attributes(decision))
    if decision.error is not None:  # a judge failure the policy turned into its on_error outcome
        span.set_status(Status(StatusCode.ERROR, decision.error))


def _decided(tracer: Tracer, span: Span, states: Sequence[Any], decisions: Sequence[Any], started: int,
             include_state: bool) -> None:
    """One decision: its attributes on the span that made it. Several (a batch shares one judge
    call): one `seams.decide` child span each, spanning the batch, under the `seams.decide_many` span."""
    if len(decisions) == 1 and isinstance(decisions[0], Decision):
        _finish(span, decisions[0])
        return
    parent = trace.set_span_in_context(span)
    for state, decision in zip(states, decisions, strict=True):
        if not isinstance(decision, Decision):  # a state the judge refused (return_exceptions)
            continue
        child = tracer.start_span(DECIDE, context=parent, start_time=started)
        _set(child, {"seams.state": canonical_json(state)} if include_state else {})
        _finish(child, decision)
        child.end()


def instrument(tracer_provider: trace.TracerProvider | None = None, *, include_state: bool = False) -> None:
    """Emit spans for every decision and cascade in this process (idempotent; see the module docstring).

    `Rubric.decide` and `Cascade.route` (and their async and many-state forms) all go through
    `Rubric.decide_many` / `adecide_many` and `Cascade.route_many` / `aroute_many`; those are the
    four methods wrapped."""
    from ..judges import default_judge
    from ..routing import Cascade
    from ..rubric import Rubric

    uninstrument()
    tracer = _tracer(tracer_provider)

    def wrap(judge: Judge | None) -> TracingJudge:
        judge = judge if judge is not None else default_judge()
        return judge if isinstance(judge, TracingJudge) else TracingJudge(judge, tracer, include_state=include_state)

    def opened(rubric: Rubric, states: Sequence[Any], name: str) -> Any:
        attrs = _decide_attrs(rubric, states[0], include_state) if len(states) == 1 else \
            {**_decide_attrs(rubric, None, False), "seams.states": len(states)}
        return _span(tracer, name if len(states) == 1 else f"{name}_many", attrs)

    decide_many, adecide_many = Rubric.decide_many, Rubric.adecide_many
    route_many, aroute_many = Cascade.route_many, Cascade.aroute_many

    @functools.wraps(decide_many)
    def traced_decide_many(self: Rubric, states: Sequence[Any], judge: Judge | None = None, **kw: Any) -> list[Any]:
        if not states:
            return decide_many(self, states, judge, **kw)
        with opened(self, states, DECIDE) as span:
            started = time.time_ns()
            out = decide_many(self, states, wrap(judge), **kw)
            _decided(tracer, span, states, out, started, include_state)
            return out

    @functools.wraps(adecide_many)
    async def traced_adecide_many(self: Rubric, states: Sequence[Any], judge: Judge | None = None,
                                  **kw: Any) -> list[Any]:
        if not states:
            return await adecide_many(self, states, judge, **kw)
        with opened(self, states, DECIDE) as span:
            started = time.time_ns()
            out = await adecide_many(self, states, wrap(judge), **kw)
            _decided(tracer, span, states, out, started, include_state)
            return out

    def routed(span: Span, results: Sequence[Any]) -> None:
        if len(results) == 1:
            r = results[0]
            _set(span, {"seams.cascade.route": r.route, "seams.cascade.escalated": r.escalated,
                        **decision_attributes(r.decision)})
        else:
            _set(span, {"seams.cascade.escalated_count": sum(r.escalated for r in results)})

    @functools.wraps(route_many)
    def traced_route_many(self: Cascade, rubric: Rubric, states: Sequence[Any], **kw: Any) -> list[Any]:
        if not states:
            return route_many(self, rubric, states, **kw)
        with opened(rubric, states, CASCADE) as span:
            out = route_many(self, rubric, states, **kw)
            routed(span, out)
            return out

    @functools.wraps(aroute_many)
    async def traced_aroute_many(self: Cascade, rubric: Rubric, states: Sequence[Any], **kw: Any) -> list[Any]:
        if not states:
            return await aroute_many(self, rubric, states, **kw)
        with opened(rubric, states, CASCADE) as span:
            out = await aroute_many(self, rubric, states, **kw)
            routed(span, out)
            return out

    for cls, name, new in ((Rubric, "decide_many", traced_decide_many), (Rubric, "adecide_many", traced_adecide_many),
                           (Cascade, "route_many", traced_route_many), (Cascade, "aroute_many", traced_aroute_many)):
        _originals[(cls, name)] = getattr(cls, name)
        setattr(cls, name, new)


def uninstrument() -> None:
    """Put back what `instrument` wrapped (nothing happens when it was not called)."""
    while _originals:
        (cls, name), original = _originals.popitem()
        setattr(cls, name, original)


__all__ = ["CASCADE", "DECIDE", "JUDGE", "TracingJudge", "decision_attributes", "instrument", "traced",
           "uninstrument"]
