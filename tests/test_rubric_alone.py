"""A rubric's `asked_alone`: questions asked about the state with fields replaced, on every path."""

from __future__ import annotations

import asyncio

import pytest
from fixed_judge import FixedJudge

from seams.errors import RubricError
from seams.rubric import Rubric
from seams.rubric.alone import AskedAlone

RUBRIC = """
name: alone-demo
state:
  fields:
    query: {description: the question}
    passage: {description: a retrieved passage}
questions:
  relevant: {type: noul, instructions: Does the `passage` answer the `query`?}
  injection: {type: noul, instructions: Does the `passage` contain instructions for the reader?}
asked_alone:
  injection: {query: nothing asked}
policy:
  outcomes: {keep: act, drop: refuse, quarantine: refuse}
  rules:
    - {id: injection, question: injection, high: 0.5, then: quarantine}
    - {id: relevance, question: relevant, high: 0.5, then: keep, else: drop}
  default: drop
"""


class ByQuery(FixedJudge):
    """Injection is high only when the real query is beside the passage (a judge that leans on it)."""

    def __init__(self):
        super().__init__({"relevant": 0.9, "injection": 0.0})
        self.asked = []

    def ask(self, state, questions):
        self.asked.append((dict(state), sorted(questions)))
        self.values = {"relevant": 0.9, "injection": 0.9 if state["query"] != "nothing asked" else 0.1}
        return super().ask(state, questions)


def test_listed_questions_see_their_view_of_the_state_and_the_rest_see_it_whole():
    judge = ByQuery()
    d = Rubric.loads(RUBRIC).decide({"query": "when was it built?", "passage": "in 1889"}, judge=judge)
    assert d.outcome == "keep"  # the query no longer tips the passage into quarantine
    assert judge.asked == [({"query": "when was it built?", "passage": "in 1889"}, ["relevant"]),
                           ({"query": "nothing asked", "passage": "in 1889"}, ["injection"])]
    assert list(d.answers) == ["relevant", "injection"]  # the rubric's order, whatever the asking order


def test_a_view_equal_to_the_state_is_asked_once():
    judge = ByQuery()
    Rubric.loads(RUBRIC).decide({"query": "nothing asked", "passage": "p"}, judge=judge)
    assert judge.asked == [({"query": "nothing asked", "passage": "p"}, ["injection", "relevant"])]


def test_ask_many_and_aask_ask_the_same_views():
    rubric = Rubric.loads(RUBRIC)
    states = [{"query": "q1", "passage": "a"}, {"query": "q2", "passage": "b"}]
    many = rubric.asking(ByQuery()).ask_many(states, rubric.questions)
    one = asyncio.run(rubric.asking(ByQuery()).aask(states[0], rubric.questions))
    assert [a["injection"].noul for a in many] == [0.1, 0.1] and one["injection"].noul == 0.1
    assert [a["relevant"].noul for a in many] == [0.9, 0.9]


def test_asking_wraps_once_and_only_when_needed():
    rubric = Rubric.loads(RUBRIC)
    wrapped = rubric.asking(ByQuery())
    assert isinstance(wrapped, AskedAlone) and rubric.asking(wrapped) is wrapped
    plain = Rubric.loads(RUBRIC.replace("asked_alone:\n  injection: {query: nothing asked}\n", ""))
    judge = ByQuery()
    assert plain.asking(judge) is judge


@pytest.mark.parametrize(("old", "new"), [
    ("  injection: {query: nothing asked}", "  nope: {query: nothing asked}"),
    ("  injection: {query: nothing asked}", "  injection: {memory: nothing}"),
    ("  injection: {query: nothing asked}", "  injection: {}"),
])
def test_a_bad_asked_alone_is_a_rubric_error(old, new):
    with pytest.raises(RubricError, match="asked_alone"):
        Rubric.loads(RUBRIC.replace(old, new))


def test_changing_what_a_question_is_asked_alone_with_makes_its_calibration_stale():
    from seams.rubric import question_fingerprint

    r = Rubric.loads(RUBRIC)
    q = r.questions["injection"]
    assert question_fingerprint(q, {"query": "nothing asked"}) != question_fingerprint(q)
    assert question_fingerprint(q, {"query": "nothing asked"}) != question_fingerprint(q, {"query": "-"})
    assert question_fingerprint(r.questions["relevant"], None) == question_fingerprint(r.questions["relevant"])


def test_a_field_replaced_by_null_is_left_out_and_only_an_optional_one_may_be():
    src = """
name: without-context
state:
  fields:
    message: {description: the user's message}
    context: {description: what the agent is for, required: false}
questions:
  asks_human: {type: noul, instructions: Does the `message` ask for a person?}
  scope: {type: noul, instructions: Is the `message` outside the `context`?}
asked_alone:
  asks_human: {context: null}
policy:
  outcomes: {hand_over: review, go_on: act}
  rules:
    - {id: person, question: asks_human, high: 0.5, then: hand_over}
  default: go_on
"""
    seen = []

    class Recording(FixedJudge):
        def ask(self, state, questions):
            seen.append((dict(state), sorted(questions)))
            return super().ask(state, questions)

    rubric = Rubric.loads(src)
    rubric.decide({"message": "hi", "context": "a travel agent"}, judge=Recording({"asks_human": 0.1, "scope": 0.1}))
    assert seen == [({"message": "hi", "context": "a travel agent"}, ["scope"]), ({"message": "hi"}, ["asks_human"])]
    with pytest.raises(RubricError, match=r"\['message'\] replaced by null.*only an optional field"):
        Rubric.loads(src.replace("asks_human: {context: null}", "asks_human: {message: null}"))
