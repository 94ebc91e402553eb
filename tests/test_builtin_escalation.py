"""Escalation, confirm-before-act, model routing and output check: policies scaled to consequence."""

from __future__ import annotations

import asyncio

import pytest

from seams.builtin.escalation import ConfirmBeforeAct, Escalation, ModelRouter, OutputCheck
from seams.errors import InputError, ServiceUnavailable

from .fixed_judge import FixedJudge

# The built-in rubrics carry a calibration fitted on the shipped model; on fixed answers from
# another "model" it is (rightly) not applied, and the rubric warns so. Not what these test.
pytestmark = pytest.mark.filterwarnings("ignore::seams.rubric.CalibrationWarning")

DOWN = ServiceUnavailable("down", status_code=503)


# --------------------------------------------------------------------------- escalation


def esc(**kw):
    return {"harm": 0.0, "asks_human": 0.0, "upset": 0.0, "out_of_scope": 0.0, **kw}


def test_harm_escalates_on_a_weaker_signal_than_a_request_for_a_person():
    e = Escalation(judge=FixedJudge(esc(harm=0.4)))
    r = e.check("I took twice my dose, what now?")
    assert r.escalate and r.outcome == "escalate" and r.decision.rule == "harm"
    r = Escalation(judge=FixedJudge(esc(asks_human=0.4))).check("can I talk to someone?")
    assert r.decision.kind == "review" and r.outcome == "review"  # in the band: a look, not a handover
    r = Escalation(judge=FixedJudge(esc(upset=0.75, asks_human=0.1))).check("this is useless")
    assert r.outcome == "escalate" and r.decision.question == "upset"  # max over flags
    assert Escalation(judge=FixedJudge(esc())).check("thanks!").outcome == "continue"


def test_escalation_fails_closed_and_checks_input():
    assert Escalation(judge=FixedJudge({}, error=DOWN)).check("hello").outcome == "escalate"
    with pytest.raises(InputError):
        Escalation(judge=FixedJudge(esc())).check("")


# --------------------------------------------------------------------------- confirm before act


def test_irreversible_actions_need_a_near_certain_match():
    c = ConfirmBeforeAct(judge=FixedJudge({"irreversible": 0.9, "matches": 0.9}))
    r = c.check("DELETE FROM orders", request="remove the test orders")
    assert r.outcome == "confirm" and not r.proceed and r.decision.rule == "irreversible_match"
    c = ConfirmBeforeAct(judge=FixedJudge({"irreversible": 0.1, "matches": 0.9}))
    r = c.check("draft a reply", request="reply to Bob")
    assert r.outcome == "proceed" and r.proceed and r.decision.rule == "reversible_match"
    c = ConfirmBeforeAct(judge=FixedJudge({"irreversible": 0.9, "matches": 0.05}))
    assert c.check("wire $5,000", request="check my balance").outcome == "refuse"


def test_what_code_knows_overrides_the_model():
    # the model thinks it is reversible; code knows a payment is not
    j = FixedJudge({"irreversible": 0.05, "matches": 0.9})
    r = ConfirmBeforeAct(judge=j).check("pay invoice 7", request="pay invoice 7", irreversible=True)
    assert r.outcome == "confirm" and r.irreversible == 1.0 and r.decision.rule == "irreversible_match"
    r = ConfirmBeforeAct(judge=FixedJudge({"irreversible": 0.99, "matches": 0.9})).check(
        "save draft", request="save it", irreversible=False)
    assert r.outcome == "proceed"
    assert ConfirmBeforeAct(judge=FixedJudge({}, error=DOWN)).check("x", request="y", irreversible=True).outcome == "confirm"


# --------------------------------------------------------------------------- model routing


def test_router_maps_zones_to_models_and_falls_back_to_strong():
    models = {"small": "mini", "medium": "mid", "strong": "big"}
    assert ModelRouter(models, judge=FixedJudge({"difficulty": [1, 0, 0, 0]})).route("hi").model == "mini"
    r = ModelRouter(models, judge=FixedJudge({"difficulty": [0, 0.5, 0.5, 0]})).route("sort a list")
    assert r.tier == "medium" and r.difficulty == pytest.approx(0.5)
    assert ModelRouter(models, judge=FixedJudge({"difficulty": [0, 0, 0, 1]})).route("prove it").model == "big"
    failed = ModelRouter(models, judge=FixedJudge({}, error=DOWN)).route("x")
    assert failed.tier == "strong" and failed.decision.outcome == "fallback"
    with pytest.raises(InputError, match="miss tier"):
        ModelRouter({"small": "a", "strong": "b"})
    with pytest.raises(InputError, match="fallback tier"):
        ModelRouter({"small": "a"}, fallback="huge")


# --------------------------------------------------------------------------- output check


def flags(**kw):
    return {"contradicts_sources": 0.0, "injected": 0.0, "unanswered": 0.0, "unsupported": 0.0, **kw}


def test_one_flag_over_its_threshold_escalates_never_the_mean():
    # the mean of the flags is 0.15; one of them is over its threshold
    g = OutputCheck(judge=FixedJudge(flags(contradicts_sources=0.6))).grade("q", "d", sources=["s"])
    assert g.outcome == "escalate" and g.worst == "contradicts_sources" and not g.ship
    g = OutputCheck(judge=FixedJudge(flags(unanswered=0.65, contradicts_sources=0.3))).grade("q", "d", sources="s")
    assert g.outcome == "review" and g.decision.rule == "severe_band"  # every flag's high is read before any band
    g = OutputCheck(judge=FixedJudge(flags(unanswered=0.8, contradicts_sources=0.3))).grade("q", "d", sources="s")
    assert g.outcome == "escalate" and g.decision.rule == "quality"
    g = OutputCheck(judge=FixedJudge(flags(unanswered=0.1))).grade("q", "d", sources="s")
    assert g.outcome == "ship" and g.ship and g.worst is None


def test_without_sources_the_source_flags_are_not_asked():
    j = FixedJudge(flags(unsupported=0.99, contradicts_sources=0.99))
    g = OutputCheck(judge=j).grade("what is 2+2?", "4")
    assert g.outcome == "ship" and g.flags["unsupported"] == 0.0
    assert OutputCheck(judge=FixedJudge({}, error=DOWN)).grade("q", "d").outcome == "review"


def test_a_draft_its_sources_contain_word_for_word_is_supported():
    loud = FixedJudge(flags(unsupported=0.99, contradicts_sources=0.99))
    source = "Mount Kilimanjaro is about 5,895 metres tall, the highest mountain in Africa."
    for draft, sources in [(source, [source]), (source, source), ("about 5,895  metres TALL", ["x", source]),
                           ("Paris. It was built in 1889.", ["It is in Paris.", "It was built in 1889."])]:
        g = OutputCheck(judge=loud).grade("How tall?", draft, sources=sources)
        assert g.outcome == "ship" and g.flags["unsupported"] == g.flags["contradicts_sources"] == 0.0, draft
    # not word for word: a word cut in two, or a changed number, is asked about as usual
    for draft in ["5,89", "Mount Kilimanjaro is about 6,000 metres tall"]:
        assert OutputCheck(judge=loud).grade("How tall?", draft, sources=[source]).outcome == "escalate"
    assert asyncio.run(OutputCheck(judge=loud).agrade("How tall?", source, sources=[source])).ship


def test_the_shipped_model_ships_a_draft_that_is_its_own_source():
    from tests.margins import assert_clear

    source = "Mount Kilimanjaro is about 5,895 metres tall, the highest mountain in Africa."
    check = OutputCheck()
    grade = check.grade("How tall is Mount Kilimanjaro?", source, sources=[source])
    assert grade.ship
    assert_clear(check.rubric, grade.decision, "a draft that is its own source")


def test_async_faces():
    async def run():
        g = await OutputCheck(judge=FixedJudge(flags())).agrade("q", "d", sources="s")
        r = await ModelRouter({"small": 1, "medium": 2, "strong": 3},
                              judge=FixedJudge({"difficulty": [1, 0, 0, 0]})).aroute("hi")
        e = await Escalation(judge=FixedJudge(esc())).acheck("hi")
        c = await ConfirmBeforeAct(judge=FixedJudge({"irreversible": 0.0, "matches": 0.9})).acheck("a", request="b")
        return g.outcome, r.model, e.outcome, c.outcome

    assert asyncio.run(run()) == ("ship", 1, "continue", "proceed")
