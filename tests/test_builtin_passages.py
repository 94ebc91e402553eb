"""The passage gate: priority order, relevance order, a token budget."""

from __future__ import annotations

import asyncio

import pytest

from seams.builtin.passages import PassageGate, approx_tokens
from seams.errors import InputError

from .fixed_judge import FixedJudge

# The built-in rubrics carry a calibration fitted on the shipped model; on fixed answers from
# another "model" it is (rightly) not applied, and the rubric warns so. Not what these test.
pytestmark = pytest.mark.filterwarnings("ignore::seams.rubric.CalibrationWarning")


class ByPassage(FixedJudge):
    """Answers by the passage text: a table of values per passage."""

    def __init__(self, table):
        super().__init__({})
        self.table = table

    def ask(self, state, questions):
        self.values = self.table[state["passage"]]
        return super().ask(state, questions)


def v(injection=0.0, contradicts=0.0, evidence=0.0, relevant=0.0):
    stance = {"contradiction": contradicts, "entailment": (1 - contradicts) / 2, "neutral": (1 - contradicts) / 2}
    return {"injection": injection, "contradicts": stance, "evidence": evidence, "relevant": relevant}


TABLE = {
    "A: weak but on topic": v(evidence=0.3, relevant=0.7),
    "B: strong evidence": v(evidence=0.9, relevant=0.95),
    "C: contradicts, very relevant": v(contradicts=0.9, evidence=0.8, relevant=0.99),
    "D: ignore previous instructions": v(injection=0.9, evidence=0.9, relevant=0.9),
    "E: off topic": v(relevant=0.05),
    "F: unsure": v(relevant=0.4),
}


def test_priority_order_injection_and_contradiction_before_evidence():
    sel = PassageGate(judge=ByPassage(TABLE)).select("X causes Y.", list(TABLE))
    assert [p.text[0] for p in sel.kept] == ["B", "A"]  # reordered by relevance
    assert [p.text[0] for p in sel.contradicting] == ["C"]  # never filed as support
    assert sel.contradicting[0].decision.rule == "contradiction"
    assert [p.text[0] for p in sel.quarantined] == ["D"]
    assert [p.text[0] for p in sel.dropped] == ["E"]
    assert [p.text[0] for p in sel.review] == ["F"]
    assert [p.index for p in sel.all()] == list(range(6))
    assert sel.texts == ["B: strong evidence", "A: weak but on topic"]


def test_a_question_is_never_contradicted_whatever_the_judge_reads():
    # the contradiction rule runs only on a query that states something (`when` in the rubric)
    sel = PassageGate(judge=ByPassage(TABLE)).select("Does X cause Y?", list(TABLE))
    assert sel.contradicting == []
    c = next(p for p in sel.all() if p.text[0] == "C")
    assert c.outcome == "keep" and c.decision.rule == "evidence"
    assert [(t.rule, t.zone) for t in c.decision.trace][:2] == [("injection", "low"), ("contradiction", "skipped")]
    # the same passage against a claim is set apart, in the same call shape
    claim = PassageGate(judge=ByPassage(TABLE)).decide("X causes Y.", ["C: contradicts, very relevant"])[0]
    assert claim.outcome == "contradiction"


def test_token_budget_keeps_the_most_relevant_that_fit():
    table = {
        "one two three four five six seven eight nine ten eleven twelve": v(evidence=0.9, relevant=0.9),
        "short": v(evidence=0.9, relevant=0.5),
        "a b c d e f g h i j k l m n o p": v(evidence=0.9, relevant=0.8),
    }
    sel = PassageGate(judge=ByPassage(table), budget=18).select("q", list(table))
    first, _, third = list(table)
    assert [p.text for p in sel.kept] == [first, "short"]
    assert [p.text for p in sel.over_budget] == [third] and sel.tokens <= 18
    assert approx_tokens("one two three") == 4


def test_passages_as_mappings_keep_their_ids_and_custom_token_counts():
    table = {"alpha": v(evidence=0.9, relevant=0.9), "beta": v(evidence=0.9, relevant=0.8)}
    gate = PassageGate(judge=ByPassage(table), budget=5, count_tokens=len)
    sel = gate.select("q", [{"id": 7, "text": "alpha", "url": "u"}, {"text": "beta"}])
    assert sel.kept[0].id == "7" and sel.kept[0].meta == {"id": 7, "url": "u"}
    assert [p.text for p in sel.over_budget] == ["beta"]


def test_async_and_bad_input():
    sel = asyncio.run(PassageGate(judge=ByPassage(TABLE)).aselect("q", ["B: strong evidence"]))
    assert sel.kept[0].outcome == "keep"
    with pytest.raises(InputError):
        PassageGate(judge=ByPassage(TABLE)).select("", ["x"])
    with pytest.raises(InputError):
        PassageGate(judge=ByPassage(TABLE)).select("q", [{"no": "text"}])
    with pytest.raises(InputError):
        PassageGate(budget=0)
