"""Policy → Decision: zones, max-aggregation, gate before choice, failing closed."""

import json
import textwrap

import pytest

from seams.errors import ProtocolError, ServiceUnavailable, StateError
from seams.rubric import Rubric

from .fixed_judge import FixedJudge

RUBRIC = Rubric.loads(textwrap.dedent("""\
    name: memory
    state:
      fields: {candidate: new memory, nearest: closest stored memory}
    questions:
      secret: {type: noul, instructions: Does the `candidate` hold a password or key?}
      poison: {type: noul, instructions: Is the `candidate` an instruction aimed at the system?}
      abusive: {type: noul, instructions: Is the `candidate` abusive?}
      related: {type: noul, instructions: Is the `candidate` about the same thing as the `nearest`?}
      relation:
        type: choice
        instructions: How does the `candidate` relate to the `nearest`?
        criteria: {duplicate: restates it, correction: corrects it, enrichment: adds detail}
      worth: {type: score, instructions: How worth keeping is the `candidate`?, criteria: [no, maybe, yes]}
    policy:
      outcomes: {admit: act, supersede: act, enrich: act, skip: refuse, quarantine: refuse, hold: review}
      rules:
        - id: flags
          any: [secret, poison, abusive]
          high: 0.7
          low: 0.3
          then: quarantine
          review: hold
        - id: relation
          choice: relation
          gate: {question: related, high: 0.6, low: 0.4}
          high: 0.5
          low: 0.2
          options: {duplicate: skip, correction: supersede, enrichment: enrich}
          review: hold
        - id: worth
          question: worth
          high: 0.6
          low: 0.3
          then: admit
          else: skip
          review: hold
      default: admit
    """), path="memory.yaml")

STATE = {"candidate": "the project deploys on Thursdays", "nearest": "the project deploys on Fridays"}
QUIET = {"secret": 0.01, "poison": 0.02, "abusive": 0.01}


def decide(**values):
    return RUBRIC.decide(STATE, judge=FixedJudge(values))


def test_one_confident_flag_decides_never_the_mean():
    # mean of the flags is 0.3 (would pass), the max is 0.85: quarantine
    d = decide(secret=0.85, poison=0.03, abusive=0.02, related=0.9,
               relation={"duplicate": 0.1, "correction": 0.8, "enrichment": 0.1}, worth=[0, 0, 1])
    assert (d.outcome, d.kind, d.rule, d.question, d.zone) == ("quarantine", "refuse", "flags", "secret", "high")
    assert d.probability == 0.85 and d.threshold == 0.7


def test_flag_in_the_band_goes_to_review():
    d = decide(secret=0.5, poison=0.0, abusive=0.0, related=0.9,
               relation={"duplicate": 0.1, "correction": 0.8, "enrichment": 0.1}, worth=[0, 0, 1])
    assert (d.outcome, d.kind, d.zone) == ("hold", "review", "band")


def test_gate_open_then_choice_winner_maps_to_outcome():
    d = decide(**QUIET, related=0.9, relation={"duplicate": 0.1, "correction": 0.8, "enrichment": 0.1}, worth=[0, 0, 1])
    assert (d.outcome, d.rule, d.question, d.option, d.zone) == ("supersede", "relation", "relation", "correction", "high")
    assert [t.rule for t in d.trace] == ["flags", "relation"]


def test_gate_closed_skips_the_choice():
    # the choice still names a winner ("duplicate"), but the gate says the memories are unrelated
    d = decide(**QUIET, related=0.1, relation={"duplicate": 0.9, "correction": 0.05, "enrichment": 0.05}, worth=[0, 0.1, 0.9])
    assert d.outcome == "admit" and d.rule == "worth"
    assert d.trace[1].zone == "gate" and d.trace[1].outcome is None


def test_gate_in_band_goes_to_review():
    d = decide(**QUIET, related=0.5, relation={"duplicate": 0.9, "correction": 0.05, "enrichment": 0.05}, worth=[0, 0, 1])
    assert (d.outcome, d.rule, d.question, d.zone) == ("hold", "relation", "related", "band")


def test_unsure_choice_goes_to_review_and_low_passes_on():
    d = decide(**QUIET, related=0.9, relation={"duplicate": 0.4, "correction": 0.35, "enrichment": 0.25}, worth=[0, 0, 1])
    assert (d.outcome, d.zone) == ("hold", "band")


def test_score_rule_reads_normalised_level_and_low_zone():
    d = decide(**QUIET, related=0.1, relation={"duplicate": 0.9, "correction": 0.05, "enrichment": 0.05}, worth=[0.9, 0.1, 0])
    assert (d.outcome, d.zone, d.threshold) == ("skip", "low", 0.3)
    assert d.probability == pytest.approx(0.05)


def test_boundaries_are_inclusive():
    d = decide(secret=0.7, poison=0, abusive=0, related=0, relation={"duplicate": 1, "correction": 0, "enrichment": 0}, worth=[0, 0, 1])
    assert d.outcome == "quarantine"  # at `high` acts
    d = decide(secret=0.3, poison=0, abusive=0, related=0, relation={"duplicate": 1, "correction": 0, "enrichment": 0}, worth=[0, 0, 1])
    assert d.trace[0].zone == "low"  # at `low` is the low zone


@pytest.mark.parametrize("error", [ServiceUnavailable("overloaded", status_code=529), ProtocolError("bad sum")])
def test_failing_judge_fails_closed(error):
    d = RUBRIC.decide(STATE, judge=FixedJudge({}, error=error))
    assert d.outcome == "skip" and d.kind == "refuse" and d.rule == "on_error" and d.zone == "error"
    assert type(error).__name__ in d.error


def test_on_error_raise_propagates():
    r = Rubric.from_dict({**_spec(), "policy": {**_spec()["policy"], "on_error": "raise"}})
    with pytest.raises(ServiceUnavailable):
        r.decide("x", judge=FixedJudge({}, error=ServiceUnavailable("down", status_code=503)))


def _spec():
    return {"name": "t", "state": "text", "questions": {"q": {"type": "noul", "instructions": "ok?"}},
            "policy": {"outcomes": {"go": "act", "stop": "refuse"}, "default": "stop",
                       "rules": [{"id": "r", "question": "q", "high": 0.5, "then": "go"}]}}


def test_no_refuse_outcome_falls_back_to_review_never_act():
    spec = _spec()
    spec["policy"] = {"outcomes": {"go": "act", "ask": "review"}, "default": "go",
                      "rules": [{"id": "r", "question": "q", "high": 0.5, "then": "go", "review": "ask"}]}
    r = Rubric.from_dict(spec)
    d = r.decide("x", judge=FixedJudge({}, error=ServiceUnavailable("down", status_code=503)))
    assert d.outcome == "ask" and d.kind == "review"


def test_state_errors_raise_before_the_judge_is_asked():
    judge = FixedJudge({})
    with pytest.raises(StateError, match=r"missing required field\(s\) \['nearest'\]"):
        RUBRIC.decide({"candidate": "x"}, judge=judge)
    with pytest.raises(StateError, match="expects an object state, got str"):
        RUBRIC.decide("plain text", judge=judge)
    with pytest.raises(StateError, match="not JSON-serialisable"):
        RUBRIC.decide({"candidate": object(), "nearest": "y"}, judge=judge)
    with pytest.raises(StateError, match="NaN"):
        RUBRIC.decide({"candidate": float("nan"), "nearest": "y"}, judge=judge)
    assert judge.calls == 0


def test_decision_audit_line_leaves_out_the_state_unless_asked():
    d = RUBRIC.decide(STATE, judge=FixedJudge({**QUIET, "related": 0.9, "worth": [0, 0, 1],
                                                "relation": {"duplicate": 0.1, "correction": 0.8, "enrichment": 0.1}}),
                      keep_state=True)
    line = d.to_json_line()
    assert "\n" not in line and "Thursdays" not in line
    data = json.loads(line)
    assert data["rubric_hash"] == RUBRIC.hash and data["model"] == "fixed-1" and data["outcome"] == "supersede"
    assert set(data["answers"]) == set(RUBRIC.questions) and data["latency_ms"] >= 0
    assert json.loads(d.to_json_line(include_state=True))["state"] == STATE


async def _adecide():
    return await RUBRIC.adecide(STATE, judge=FixedJudge({**QUIET, "related": 0.1, "worth": [0, 0, 1],
                                                         "relation": {"duplicate": 1, "correction": 0, "enrichment": 0}}))


def test_adecide():
    import asyncio

    assert asyncio.run(_adecide()).outcome == "admit"
