"""Every decision as an OpenTelemetry span: a cascade whose local stage escalates the uncertain
cases, printed as the span tree a tracing backend would receive.

    pip install "seams[otel]" opentelemetry-sdk && python examples/otel_tracing.py

`seams.integrations.otel.instrument()` is the one line an application adds (with its own tracer
provider and exporter: OTLP to a collector, Jaeger, Honeycomb ...); here an in-memory exporter
lets the example print what was sent. The strong side is a stand-in for a stronger model.
"""

from __future__ import annotations

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from seams import Cascade, Rubric
from seams.integrations import otel

SHOWN = ("seams.rubric.name", "seams.decision.outcome", "seams.decision.rule", "seams.decision.zone",
         "seams.decision.probability", "seams.decision.threshold", "seams.model", "seams.latency_ms")


def stronger_model(rubric, state, weak_decision) -> str:
    """A stand-in for a bigger LLM asked to pick one of the rubric's outcomes."""
    return "escalate" if "human" in state["message"] else "continue"


def show(spans, parent=None, depth=0) -> None:
    pid = parent.context.span_id if parent else None
    for s in sorted((s for s in spans if (s.parent.span_id if s.parent else None) == pid), key=lambda s: s.start_time):
        attrs = ", ".join(f"{k.split('.')[-1]}={round(v, 3) if isinstance(v, float) else v}"
                          for k, v in s.attributes.items() if k in SHOWN)
        print(f"{'  ' * depth}{s.name}  {attrs}")
        show(spans, s, depth + 1)


def main() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    otel.instrument(provider)  # the raw state stays out of the spans unless include_state=True

    rubric = Rubric.builtin("escalation")
    cascade = Cascade(None, stronger_model)
    for text in ("My prints come out too dark. Which colour setting should I change?",
                 "This is the third time I write. Get me a human now or I cancel.",
                 "Hmm, not sure this is what I meant."):
        exporter.clear()
        routed = cascade.route(rubric, {"message": text, "context": "Support for a photo-printing app."})
        print(f"\n{text!r} -> {routed.decision.outcome} ({routed.route} side)")
        show(exporter.get_finished_spans())
    otel.uninstrument()


if __name__ == "__main__":
    main()
