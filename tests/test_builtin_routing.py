"""Cascades: the strong judge (or a callable) is paid for only in the uncertain band."""

from __future__ import annotations

import asyncio
import textwrap

import pytest

from seams.builtin.escalation import OutputCheck
from seams.decorators import gate
from seams.errors import InputError, ServiceUnavailable
from seams.routing import Cascade, JudgeDecider, as_decider
from seams.rubric import Rubric

from .fixed_judge import FixedJudge

# The built-in rubrics carry a calibration fitted on the shipped model; on fixed answers from
# another "model" it is (rightly) not applied, and the rubric warns so. Not what these test.
pytestmark = pytest.mark.filterwarnings("ignore::seams.rubric.CalibrationWarning")

RUBRIC = Rubric.loads(textwrap.dedent("""\
    name: ok
    state: text
    questions:
      ok: {type: noul, instructions: Is this fine?}
    policy:
      outcomes: {go: act, stop: refuse}
      rules:
        - {id: ok, question: ok, high: 0.8, low: 0.2, then: go, else: stop}
      default: stop
    """))


def test_confident_weak_decisions_never_pay_for_the_strong_judge():
    weak, strong = FixedJudge({"ok": 0.95}, model="weak"), FixedJudge({"ok": 0.1}, model="strong")
    c = Cascade(weak, strong)
    r = c.route(RUBRIC, "x")
    assert r.route == "weak" and not r.escalated and r.decision.outcome == "go" and strong.calls == 0
    weak.values = {"ok": 0.05}
    assert c.decide(RUBRIC, "x").outcome == "stop" and strong.calls == 0


def test_band_escalates_to_the_strong_judge():
    weak, strong = FixedJudge({"ok": 0.5}, model="weak"), FixedJudge({"ok": 0.9}, model="strong")
    c = Cascade(weak, strong)
    r = c.route(RUBRIC, "x")
    assert r.escalated and r.decision.outcome == "go" and r.decision.model == "strong"
    assert [d.model for d in r.steps] == ["weak", "strong"] and r.steps[0].zone == "band"
    assert (c.weak_calls, c.strong_calls, c.escalation_rate) == (1, 1, 1.0)
    assert "cascade(weak->strong)" == c.model_id


def test_a_failing_weak_judge_escalates():
    weak = FixedJudge({}, error=ServiceUnavailable("down", status_code=503))
    r = Cascade(weak, FixedJudge({"ok": 0.9})).route(RUBRIC, "x")
    assert r.escalated and r.steps[0].zone == "error" and r.decision.outcome == "go"


def test_a_callable_target_names_an_outcome():
    seen = []

    def stronger_llm(rubric, state, decision):
        seen.append((rubric.name, state, decision.zone))
        return "stop"

    r = Cascade(FixedJudge({"ok": 0.5}), stronger_llm).route(RUBRIC, "x")
    assert r.decision.outcome == "stop" and r.decision.kind == "refuse" and r.decision.rule == "escalation"
    assert r.decision.model == "stronger_llm" and seen == [("ok", "x", "band")]
    with pytest.raises(InputError, match="must return one of the outcomes"):
        Cascade(FixedJudge({"ok": 0.5}), lambda *a: "maybe").route(RUBRIC, "x")


def test_async_cascade_with_an_async_target():
    async def target(rubric, state, decision):
        await asyncio.sleep(0)
        return "go"

    d = asyncio.run(Cascade(FixedJudge({"ok": 0.5}), target).adecide(RUBRIC, "x"))
    assert d.outcome == "go"
    with pytest.raises(InputError, match="async path"):
        Cascade(FixedJudge({"ok": 0.5}), target).route(RUBRIC, "x")


def test_cascade_plugs_into_seams_and_decorators():
    weak, strong = FixedJudge({"ok": 0.5}), FixedJudge({"ok": 0.9})

    @gate(RUBRIC, state=lambda text: text, judge=Cascade(weak, strong))
    def step(text: str) -> str:
        return "ran"

    assert step("x") == "ran" and strong.calls == 1
    flags = {"contradicts_sources": 0.3, "injected": 0.0, "unanswered": 0.0, "unsupported": 0.0}
    calm = {**flags, "contradicts_sources": 0.0}
    g = OutputCheck(judge=Cascade(FixedJudge(flags), FixedJudge(calm))).grade("q", "d", sources="s")
    assert g.outcome == "ship"


def test_as_decider():
    assert isinstance(as_decider(None), JudgeDecider)
    j = FixedJudge({})
    assert as_decider(j).judge is j
    c = Cascade(j, j)
    assert as_decider(c) is c
    with pytest.raises(InputError):
        as_decider(42)
