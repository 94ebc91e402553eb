"""OpenTelemetry spans (seams/integrations/otel.py) through the real SDK and its in-memory exporter:
the span tree of a cascade whose local stage (the tiny ONNX model) escalates to a second judge (the
jevcompat mock System One server on loopback), what the spans carry and what they leave out."""

from __future__ import annotations

import asyncio

import pytest
from gate_rubric import gate_text

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed: pip install seams[otel]")

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import StatusCode  # noqa: E402

from seams import Cascade, Rubric  # noqa: E402
from seams.integrations import otel  # noqa: E402
from seams.judges import LocalJudge, RemoteJudge  # noqa: E402

RUBRIC = Rubric.loads(gate_text("traced-gate"))
PRIVATE = "the ticket text from customer 4711"  # the tiny model reads it at about 0.27: the band
# Look for the phrase, not the number: a latency or probability can hold the digits 4711 (CI did).


@pytest.fixture
def exporter():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    otel.instrument(provider)
    yield exporter
    otel.uninstrument()


def children(spans: tuple[ReadableSpan, ...], parent: ReadableSpan | None) -> list[ReadableSpan]:
    pid = parent.context.span_id if parent is not None else None
    return sorted((s for s in spans if (s.parent.span_id if s.parent else None) == pid), key=lambda s: s.start_time)


def test_the_span_tree_of_a_cascade_that_escalates(exporter, tiny_model_dir, mock):
    with RemoteJudge(base_url=mock.url) as strong:
        routed = Cascade(LocalJudge(tiny_model_dir), strong).route(RUBRIC, PRIVATE)
    assert routed.escalated
    spans = exporter.get_finished_spans()
    [root] = children(spans, None)
    assert root.name == "seams.cascade"
    assert root.attributes["seams.cascade.route"] == "strong" and root.attributes["seams.cascade.escalated"]
    assert root.attributes["seams.decision.outcome"] == routed.decision.outcome
    weak, second = children(spans, root)
    assert weak.name == second.name == "seams.decide"
    first = routed.steps[0]
    assert weak.attributes["seams.model"] == "seams-tiny-test"
    assert weak.attributes["seams.decision.zone"] == "band" and weak.attributes["seams.decision.kind"] == "review"
    assert weak.attributes["seams.decision.probability"] == first.probability
    assert weak.attributes["seams.decision.rule"] == "agreed"
    assert weak.attributes["seams.rubric.hash"] == RUBRIC.hash and weak.attributes["seams.rubric.name"] == "traced-gate"
    assert second.attributes["seams.model"] == routed.decision.model != "seams-tiny-test"
    for decide, model in ((weak, "seams-tiny-test"), (second, routed.decision.model)):
        [ask] = children(spans, decide)
        assert ask.name == "seams.judge.ask" and ask.attributes["seams.model"] == model
        assert list(ask.attributes["seams.judge.questions"]) == ["agreed"]
        assert ask.attributes["seams.latency_ms"] >= 0 and ask.attributes["seams.windows"] >= 1
    assert len(spans) == 5
    # the raw state is in no span
    assert not any("customer 4711" in str(v) for s in spans for v in s.attributes.values())


def test_a_confident_decision_is_one_stage_and_async_nests_the_same(exporter, tiny_model_dir, mock):
    with RemoteJudge(base_url=mock.url) as strong:
        routed = asyncio.run(Cascade(LocalJudge(tiny_model_dir), strong).aroute(RUBRIC, "yes it is"))
    assert not routed.escalated
    spans = exporter.get_finished_spans()
    [root] = children(spans, None)
    [decide] = children(spans, root)
    [ask] = children(spans, decide)
    assert (root.name, decide.name, ask.name) == ("seams.cascade", "seams.decide", "seams.judge.ask")
    assert decide.attributes["seams.decision.outcome"] == "go"
    assert decide.attributes["seams.decision.threshold"] == 0.8


def test_a_failing_judge_marks_its_span_and_the_decision_names_the_error(exporter, mock):
    with RemoteJudge("no-such-model", base_url=mock.url) as bad:
        decision = RUBRIC.decide("yes it is", judge=bad)
    assert decision.rule == "on_error" and decision.outcome == "review"
    spans = exporter.get_finished_spans()
    [decide] = children(spans, None)
    [ask] = children(spans, decide)
    assert ask.status.status_code == StatusCode.ERROR and ask.events[0].name == "exception"
    assert decide.status.status_code == StatusCode.ERROR
    assert decide.attributes["seams.decision.error"] == decision.error


def test_the_state_only_when_asked_and_uninstrument_stops_the_spans(tiny_model_dir):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    judge = LocalJudge(tiny_model_dir)
    otel.instrument(provider, include_state=True)
    try:
        RUBRIC.decide(PRIVATE, judge=judge)
    finally:
        otel.uninstrument()
    decide, ask = sorted(exporter.get_finished_spans(), key=lambda s: s.name)
    assert decide.attributes["seams.state"] == ask.attributes["seams.state"] == f'"{PRIVATE}"'
    RUBRIC.decide(PRIVATE, judge=judge)
    assert len(exporter.get_finished_spans()) == 2
    # one judge, traced without instrumenting anything
    RUBRIC.decide("yes it is", judge=otel.traced(judge, provider))
    assert [s.name for s in exporter.get_finished_spans()][2:] == ["seams.judge.ask"]


def test_a_batch_is_one_judge_call_under_one_span_with_a_span_per_decision(exporter, tiny_model_dir):
    states = ["yes it is", "no it is not", PRIVATE]
    decisions = RUBRIC.decide_many(states, LocalJudge(tiny_model_dir))
    spans = exporter.get_finished_spans()
    [batch] = children(spans, None)
    assert batch.name == "seams.decide_many" and batch.attributes["seams.states"] == 3
    under = children(spans, batch)
    assert [s.name for s in under].count("seams.judge.ask") == 1
    [ask] = [s for s in under if s.name == "seams.judge.ask"]
    assert ask.attributes["seams.judge.states"] == 3
    each = [s for s in under if s.name == "seams.decide"]
    assert [s.attributes["seams.decision.outcome"] for s in each] == [d.outcome for d in decisions] == \
        ["go", "stop", "review"]
    assert not any("customer 4711" in str(v) for s in spans for v in s.attributes.values())
