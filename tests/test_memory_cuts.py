"""The memory gate's operating point is a setting (issue 30): `MemoryGate(cuts=...)`, through
`Rubric.with_cuts`, moves the red flags' cut-points without editing the rubric file.

The fixed judge decides what each flag reads, so what is tested is where the cut falls; the
shipped model's test checks that a cut replaces the fitted one where the calibration is in force.
"""

from __future__ import annotations

import math

import pytest

from seams.answers import Answers, NoulAnswer
from seams.builtin.memory import MemoryGate, MemoryStore
from seams.errors import InputError
from seams.rubric import Rubric

from .fixed_judge import FixedJudge

pytestmark = pytest.mark.filterwarnings("ignore::seams.errors.CalibrationWarning")


def _reading(poison: float) -> dict:
    return {"poison": poison, "secret": 0.01, "poorer": 0.01, "related": 0.01, "worth": 0.9,
            "relation": {"restatement": 0.1, "correction": 0.1, "enrichment": 0.8}}


@pytest.mark.parametrize(("cuts", "outcome"), [
    (None, "hold"),                 # the written rule: 0.5 lies in its review band (0.35 to 0.7)
    ({"flags": 0.4}, "quarantine"),  # at or above the cut
    ({"flags": 0.6}, "admit"),       # under it, and no band
    ({"flags": (0.9, 0.45)}, "hold"),  # in the band a pair sets
    ({"flags": (0.9, 0.55)}, "admit"),
])
def test_the_cut_decides_where_a_flag_fires(cuts, outcome, tmp_path):
    gate = MemoryGate(MemoryStore(tmp_path / "m.db"), judge=FixedJudge(_reading(0.5)), cuts=cuts)
    got = gate.remember("I have a standing arrangement with the bakery on Fridays.")
    assert got.outcome == outcome
    # what the store holds follows the decision: held as a candidate, admitted as current, or nothing
    assert [m.status for m in gate.store.all()] == {"hold": ["held"], "admit": ["active"], "quarantine": []}[outcome]


def test_cuts_are_part_of_the_rubric_hash_and_leave_the_original_alone():
    base = Rubric.builtin("memory-admission")
    moved = base.with_cuts({"flags": 0.5})
    assert moved.hash != base.hash
    assert base.cuts == {} and moved.cuts == {"flags": (0.5, 0.5)}
    assert moved.with_cuts({"flags": 0.5}).hash == moved.hash
    assert moved.with_cuts({"secret": 0.2}).cuts == {"flags": (0.5, 0.5), "secret": (0.2, 0.2)}


def test_a_cut_applies_over_a_calibration_in_force():
    """decide_answers with the block's model id: the fitted cut (0.84) applies, then the caller's."""
    base = Rubric.builtin("memory-admission")
    cal = base.calibration
    assert cal is not None and cal.thresholds["flags"].high > 0.6
    answers = Answers(model=cal.model, answers={
        "poison": NoulAnswer(noul=0.6), "secret": NoulAnswer(noul=0.0), "poorer": NoulAnswer(noul=0.0),
        "related": NoulAnswer(noul=0.0), "worth": NoulAnswer(noul=0.9)})
    assert base.stale_reasons(cal.model) == []
    assert base.decide_answers(answers).rule != "flags"
    got = base.with_cuts({"flags": 0.55}).decide_answers(answers)
    assert (got.rule, got.outcome, got.threshold) == ("flags", "quarantine", 0.55)


@pytest.mark.parametrize(("cuts", "says"), [
    ({"flag": 0.5}, "does not have; its rules: flags, secret"),
    ({"flags": 1.5}, "a probability in [0, 1]"),
    ({"flags": math.nan}, "a probability in [0, 1]"),
    ({"flags": True}, "a probability in [0, 1]"),
    ({"flags": "0.5"}, "a probability in [0, 1]"),
    ({"flags": (0.3, 0.6)}, "high >= low"),
    ({"flags": (0.3,)}, "high >= low"),
    ([("flags", 0.5)], "a mapping of rule id"),
])
def test_a_bad_cut_is_refused_with_what_was_wrong(cuts, says):
    with pytest.raises(InputError, match=r"(?s)" + says.replace("[", r"\[").replace("]", r"\]")
                       .replace("(", r"\(").replace(")", r"\)")):
        MemoryGate(judge=FixedJudge(_reading(0.5)), cuts=cuts)


def test_the_shipped_model_at_a_cut_of_nothing_holds_everything(shipped_judge):
    """On the shipped model, whose fitted cut admits this memory, a (1, 0) band holds it."""
    text = "Remind me to water the ferns every Saturday morning."
    assert MemoryGate(judge=shipped_judge).admit(text).outcome == "admit"
    held = MemoryGate(judge=shipped_judge, cuts={"flags": (1.0, 0.0)}).admit(text)
    assert held.outcome == "hold" and held.decision is not None and held.decision.rule == "flags"
