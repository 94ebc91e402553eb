"""What code knows for certain survives every decider: each built-in seam through a `Cascade`.

The weak judge's answers below are chosen so that dropping the known answers changes the outcome
(an irreversible `DROP TABLE` would proceed, a draft without sources would be escalated for
contradicting them, a one-word correction would be skipped as a duplicate). A cascade decides as
the weak judge alone does when the weak decision is confident, and as the strong one does (with
the same known answers) when it is not.
"""

from __future__ import annotations

import asyncio

import pytest

from seams.builtin.escalation import ConfirmBeforeAct, Escalation, ModelRouter, OutputCheck
from seams.builtin.memory import MemoryGate
from seams.builtin.passages import PassageGate
from seams.builtin.tools import ToolSelector
from seams.errors import InputError
from seams.routing import Cascade
from seams.rubric import Rubric

from .fixed_judge import FixedJudge

pytestmark = pytest.mark.filterwarnings("ignore::seams.rubric.CalibrationWarning")


def both(fn):
    """Run a seam's sync call and its async twin; both must agree."""
    sync, async_ = fn()
    got = async_()
    return sync, asyncio.run(got) if asyncio.iscoroutine(got) else got


# --------------------------------------------------------------------------- confirm before act

GUESSES_REVERSIBLE = {"irreversible": 0.05, "matches": 0.9}


@pytest.mark.parametrize("strong", ["judge", "callable"])
def test_confirm_before_act_keeps_a_known_irreversible_action_through_a_cascade(strong):
    weak = FixedJudge(GUESSES_REVERSIBLE, model="weak")
    alone = ConfirmBeforeAct(judge=weak).check("DROP TABLE users", request="tidy up", irreversible=True)
    assert alone.outcome == "confirm" and alone.irreversible == 1.0
    seen = []

    def target(rubric, state, first):
        seen.append(first.answers["irreversible"].noul)
        return "confirm"

    other = FixedJudge(GUESSES_REVERSIBLE, model="strong") if strong == "judge" else target
    cascade = Cascade(FixedJudge(GUESSES_REVERSIBLE, model="weak"), other)
    seam = ConfirmBeforeAct(judge=cascade)
    sync = seam.check("DROP TABLE users", request="tidy up", irreversible=True)
    async_ = asyncio.run(seam.acheck("DROP TABLE users", request="tidy up", irreversible=True))
    for got in (sync, async_):
        assert got.outcome == "confirm" and not got.proceed
        assert got.irreversible == 1.0 and got.decision.answers["irreversible"].noul == 1.0
    assert cascade.strong_calls == 2  # the weak decision was in the band, so the strong side decided
    if strong == "judge":
        assert sync.decision.model == "strong" and other.calls == 2
        # the known question was asked of neither judge
        assert set(GUESSES_REVERSIBLE) - {"irreversible"} == {"matches"}
    else:
        assert seen == [1.0, 1.0]
    # without the fact the same judges proceed: the fact is what decided
    assert seam.check("DROP TABLE users", request="tidy up").outcome == "proceed"


def test_a_known_answer_is_not_asked():
    class Recording(FixedJudge):
        def ask(self, state, questions):
            self.asked = set(questions)
            return super().ask(state, questions)

    weak, strong = Recording(GUESSES_REVERSIBLE, model="weak"), Recording(GUESSES_REVERSIBLE, model="strong")
    ConfirmBeforeAct(judge=Cascade(weak, strong)).check("rm -rf build", request="clean", irreversible=False)
    assert weak.asked == {"matches"}


# --------------------------------------------------------------------------- output check

# `injected` in the severe band sends the weak decision to the strong side; both judges would
# flag the (absent) sources as contradicted and unsupported if they were asked.
WEAK_OUTPUT = {"contradicts_sources": 0.9, "injected": 0.3, "unanswered": 0.05, "unsupported": 0.9}
STRONG_OUTPUT = {**WEAK_OUTPUT, "injected": 0.05}


def test_output_check_keeps_the_source_flags_known_through_a_cascade():
    alone = OutputCheck(judge=FixedJudge(STRONG_OUTPUT)).grade("summarise", "a summary")
    assert alone.outcome == "ship"
    cascade = Cascade(FixedJudge(WEAK_OUTPUT, model="weak"), FixedJudge(STRONG_OUTPUT, model="strong"))
    seam = OutputCheck(judge=cascade)
    sync = seam.grade("summarise", "a summary")
    async_ = asyncio.run(seam.agrade("summarise", "a summary"))
    for got in (sync, async_):
        assert got.outcome == "ship" and got.ship and got.decision.model == "strong"
        assert got.flags["contradicts_sources"] == 0.0 and got.flags["unsupported"] == 0.0
    assert cascade.strong_calls == 2
    # with sources the flags are asked, and the same judges escalate
    assert seam.grade("summarise", "a summary", sources=["a source"]).outcome == "escalate"


# --------------------------------------------------------------------------- memory admission

QUIET = {"poison": 0.02, "secret": 0.01}
# Beside the stored memory, both judges call the one-word correction a poorer restatement.
LOOKS_LIKE_A_DUPLICATE = {**QUIET, "poorer": 0.9, "related": 0.3, "worth": 0.9,
                          "relation": {"restatement": 0.9, "correction": 0.05, "enrichment": 0.05}}


def test_memory_gate_keeps_a_minimal_edit_known_through_a_cascade():
    """The weak judge is unsure about `secret` (its band), so the strong judge decides; both are
    overruled on the relation by the edit code sees."""
    weak = FixedJudge({**LOOKS_LIKE_A_DUPLICATE, "secret": 0.7}, model="weak")
    strong = FixedJudge(LOOKS_LIKE_A_DUPLICATE, model="strong")
    cascade = Cascade(weak, strong)
    gate = MemoryGate(judge=cascade)
    nearest = [("m1", "the project deploys on Fridays")]
    sync = gate.admit("the project deploys on Thursdays", nearest=nearest)
    async_ = asyncio.run(gate.aadmit("the project deploys on Thursdays", nearest=nearest))
    for got in (sync, async_):
        assert (got.outcome, got.replaces) == ("supersede", "m1"), got.reason
        assert got.decision.model == "strong" and got.decision.answers["relation"].choice == "correction"
    assert cascade.strong_calls == 2


def test_memory_gate_batches_a_cascade_and_escalates_only_the_unsure_pairs():
    """Two stored memories: the weak judge is sure about one pair and unsure about the other."""

    class ByMemory(FixedJudge):
        def __init__(self, table, model):
            super().__init__({}, model=model)
            self.table = table

        def ask(self, state, questions):
            self.values = self.table[state["memory"]]
            return super().ask(state, questions)

    unrelated = {**QUIET, "poorer": 0.05, "related": 0.1, "worth": 0.9,
                 "relation": {"restatement": 0.2, "correction": 0.1, "enrichment": 0.7}}
    weak = ByMemory({"nothing stored": unrelated, "the user likes tea": unrelated,
                     "the user likes green tea": {**unrelated, "related": 0.4}}, "weak")
    strong = ByMemory({"nothing stored": unrelated, "the user likes green tea": unrelated}, "strong")
    cascade = Cascade(weak, strong)
    r = MemoryGate(judge=cascade).admit("the user walks to work",
                                        nearest=[("m1", "the user likes tea"), ("m2", "the user likes green tea")])
    assert r.outcome == "admit" and [d.model for d in r.decisions] == ["weak", "strong"]
    assert (cascade.weak_calls, cascade.strong_calls) == (2, 1)


# --------------------------------------------------------------------------- the other seams


def test_escalation_router_and_passage_gate_decide_through_a_cascade():
    """No known answers here: the cascade's strong side decides what the weak one is unsure of."""
    esc = Escalation(judge=Cascade(FixedJudge({"harm": 0.2, "asks_human": 0.1, "upset": 0.1, "out_of_scope": 0.1}),
                                   FixedJudge({"harm": 0.9, "asks_human": 0.1, "upset": 0.1, "out_of_scope": 0.1})))
    sync, async_ = esc.check("help"), asyncio.run(esc.acheck("help"))
    assert sync.escalate and async_.escalate and sync.outcome == async_.outcome == "escalate"

    router = ModelRouter({"small": "s", "medium": "m", "strong": "L"},
                         judge=Cascade(FixedJudge({"difficulty": [0.1, 0.2, 0.4, 0.2, 0.1]}),
                                       FixedJudge({"difficulty": [0.9, 0.1, 0.0, 0.0, 0.0]})))
    assert router.route("sum two numbers").tier == asyncio.run(router.aroute("sum two numbers")).tier == "small"

    keep = {"injection": 0.05, "contradicts": {"entailment": 0.1, "neutral": 0.8, "contradiction": 0.1},
            "evidence": 0.9, "relevant": 0.9}
    unsure = {**keep, "injection": 0.4}
    cascade = Cascade(FixedJudge(unsure, model="weak"), FixedJudge(keep, model="strong"))
    gate = PassageGate(judge=cascade)
    sel = gate.decide("what is the capital?", ["Paris is the capital.", "It is Paris."])
    assert [d.outcome for d in sel] == ["keep", "keep"] and [d.model for d in sel] == ["strong", "strong"]
    again = asyncio.run(gate.aselect("what is the capital?", ["Paris is the capital."]))
    assert [p.text for p in again.kept] == ["Paris is the capital."]


def test_the_tool_selector_refuses_a_cascade():
    with pytest.raises(InputError, match="not a Cascade"):
        ToolSelector({"search": "find things"}, judge=Cascade(FixedJudge({}), FixedJudge({})))


# --------------------------------------------------------------------------- the API itself


def test_known_answers_are_checked_before_anything_is_sent():
    rubric = Rubric.builtin("confirm-before-act")
    judge = FixedJudge(GUESSES_REVERSIBLE)
    state = {"request": "r", "action": "a"}
    with pytest.raises(InputError, match="'nope', which is not a question"):
        rubric.decide(state, judge, known={"nope": 1.0})
    with pytest.raises(InputError, match=r"probability in \[0, 1\]"):
        rubric.decide(state, judge, known={"irreversible": 2.0})
    with pytest.raises(InputError, match="noul question 'matches' must be a probability or a noul answer"):
        rubric.decide(state, judge, known={"matches": "yes"})
    assert judge.calls == 0
    every = rubric.decide(state, judge, known={"irreversible": 0.0, "matches": 1.0})
    assert every.outcome == "proceed" and judge.calls == 0 and every.model == "fixed-1"
