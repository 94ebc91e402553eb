"""OpenTelemetry spans for every decision and every judge call under it (`pip install seams[otel]`).

Only `opentelemetry-api` is used; which SDK and exporter receive the spans is the application's
choice. Nothing in seams imports this module, so OpenTelemetry is never loaded until asked:

* `instrument(tracer_provider=None)` wraps `Rubric.decide`/`adecide` and `Cascade.route`/`aroute`
  (the way OpenTelemetry's own instrumentations wrap a library), so every decision in the process
  emits a `seams.decide` span whose child is the `seams.judge.ask` span of the call it made, and a
  cascade's two stages sit under one `seams.cascade` span; `uninstrument()` undoes it;
* `traced(judge)` wraps one judge only, for code that wants spans for its own calls.

A span carries the rubric's name, version and hash, the outcome and its kind, the rule that fired,
the zone, the probability and threshold that decided, the model id, latency and windows — never
the raw state unless `include_state=True`, since a trace backend is not where user data belongs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode, Tracer

from .. import __version__
from ..answers import Answers
from ..decision import Decision
from ..judges.base import Judge, ask_each
from ..state import canonical_json

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


class TracingJudge:
    """A judge whose every call is a `seams.judge.ask` span; answers pass through unchanged."""

    def __init__(self, judge: Judge, tracer: Tracer, *, include_state: bool = False) -> None:
        self.judge = judge
        self._tracer = tracer
        self._include_state = include_state

    @property
    def model_id(self) -> str:
        return self.judge.model_id

    def __getattr__(self, name: str) -> Any:  # answer_identity, close, ...: the wrapped judge's
        if name == "judge":  # not set yet (copying, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.judge, name)

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
            out = ask_each(self.judge, states, questions)
            if out:
                _set(span, {"seams.model": out[0].model, "seams.latency_ms": sum(a.latency_ms for a in out)})
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


def _finish(span: Span, decision: Decision) -> Decision:
    _set(span, decision_attributes(decision))
    if decision.error is not None:  # a judge failure the policy turned into its on_error outcome
        span.set_status(Status(StatusCode.ERROR, decision.error))
    return decision


def instrument(tracer_provider: trace.TracerProvider | None = None, *, include_state: bool = False) -> None:
    """Emit spans for every decision and cascade in this process (idempotent; see the module docstring)."""
    from ..judges import default_judge
    from ..routing import Cascade
    from ..rubric import Rubric

    uninstrument()
    tracer = _tracer(tracer_provider)

    def wrap(judge: Judge | None) -> TracingJudge:
        judge = judge if judge is not None else default_judge()
        return judge if isinstance(judge, TracingJudge) else TracingJudge(judge, tracer, include_state=include_state)

    decide, adecide = Rubric.decide, Rubric.adecide
    route, aroute = Cascade.route, Cascade.aroute

    @functools.wraps(decide)
    def traced_decide(self: Rubric, state: Any, judge: Judge | None = None, **kw: Any) -> Decision:
        with _span(tracer, DECIDE, _decide_attrs(self, state, include_state)) as span:
            return _finish(span, decide(self, state, wrap(judge), **kw))

    @functools.wraps(adecide)
    async def traced_adecide(self: Rubric, state: Any, judge: Judge | None = None, **kw: Any) -> Decision:
        with _span(tracer, DECIDE, _decide_attrs(self, state, include_state)) as span:
            return _finish(span, await adecide(self, state, wrap(judge), **kw))

    def routed(span: Span, result: Any) -> Any:
        _set(span, {"seams.cascade.route": result.route, "seams.cascade.escalated": result.escalated,
                    **decision_attributes(result.decision)})
        return result

    @functools.wraps(route)
    def traced_route(self: Cascade, rubric: Rubric, state: Any, **kw: Any) -> Any:
        with _span(tracer, CASCADE, _decide_attrs(rubric, state, include_state)) as span:
            return routed(span, route(self, rubric, state, **kw))

    @functools.wraps(aroute)
    async def traced_aroute(self: Cascade, rubric: Rubric, state: Any, **kw: Any) -> Any:
        with _span(tracer, CASCADE, _decide_attrs(rubric, state, include_state)) as span:
            return routed(span, await aroute(self, rubric, state, **kw))

    for cls, name, new in ((Rubric, "decide", traced_decide), (Rubric, "adecide", traced_adecide),
                           (Cascade, "route", traced_route), (Cascade, "aroute", traced_aroute)):
        _originals[(cls, name)] = getattr(cls, name)
        setattr(cls, name, new)


def uninstrument() -> None:
    """Put back what `instrument` wrapped (nothing happens when it was not called)."""
    while _originals:
        (cls, name), original = _originals.popitem()
        setattr(cls, name, original)


__all__ = ["CASCADE", "DECIDE", "JUDGE", "TracingJudge", "decision_attributes", "instrument", "traced",
           "uninstrument"]
