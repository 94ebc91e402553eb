"""`when` on a rule: the form of a state field, decided in code, says whether the rule runs."""

from __future__ import annotations

import json

import pytest
from fixed_judge import FixedJudge

from seams.calibration.dataset import loads_jsonl
from seams.calibration.extract import rule_data
from seams.calibration.run import run_set
from seams.forms import is_question
from seams.rubric import Rubric


@pytest.mark.parametrize("text", [
    "How tall is Mount Everest?", "how to reset my password", "Is it raining", "  What's new? ",
    "Does the API support pagination", 'He asked "why?"', "what was the next winner after Lee.",
    '"how do I reset my password"', "(what changed in v2)", "“Where is the invoice”",
])
def test_questions(text):
    assert is_question(text)


@pytest.mark.parametrize("text", [
    "Mount Everest is 8,849 metres tall.", "The shop opens at nine.", "Isolation forests find outliers.",
    "Howard wrote the report.", "", "   ", "Will Smith won an Oscar.",
    "Do not take aspirin with ibuprofen!", "Can openers date from 1858.", '"Howard wrote it."', "(see above)",
])
def test_statements(text):
    assert not is_question(text)


def _rubric(**rule_extra):
    return Rubric.from_dict({
        "name": "r", "state": {"fields": {"query": "a question or a claim", "passage": "a passage"}},
        "questions": {"c": {"type": "noul"}, "e": {"type": "noul"}},
        "policy": {"outcomes": {"apart": "act", "keep": "act", "drop": "refuse"}, "default": "drop", "rules": [
            {"id": "contra", "question": "c", "high": 0.5, "then": "apart", **rule_extra},
            {"id": "evidence", "question": "e", "high": 0.5, "then": "keep"}]},
    })


def test_a_rule_runs_only_where_its_when_holds():
    rubric = _rubric(when={"field": "query", "is": "statement"})
    judge = FixedJudge({"c": 0.9, "e": 0.8})
    claim = rubric.decide({"query": "X causes Y.", "passage": "p"}, judge)
    question = rubric.decide({"query": "Does X cause Y?", "passage": "p"}, judge)
    assert claim.outcome == "apart"
    assert question.outcome == "keep" and question.trace[0].zone == "skipped"
    assert question.state is None  # the state decided the condition; it is not recorded unless asked
    # answers replayed without a state: every rule runs, as written
    assert rubric.decide_answers(question_answers(rubric, judge)).outcome == "apart"


def question_answers(rubric, judge):
    return judge.ask({"query": "Does X cause Y?", "passage": "p"}, rubric.questions)


def test_when_must_name_a_declared_field_of_an_object_state():
    with pytest.raises(Exception, match="unknown field 'question'"):
        _rubric(when={"field": "question", "is": "statement"})
    with pytest.raises(Exception, match="'question' or 'statement'"):
        _rubric(when={"field": "query", "is": "claim"})


def test_a_rule_is_calibrated_only_on_the_items_it_decides():
    rubric = _rubric(when={"field": "query", "is": "statement"})
    items = [{"id": "1", "state": {"query": "X causes Y.", "passage": "p"}, "labels": {"c": True}},
             {"id": "2", "state": {"query": "Does X cause Y?", "passage": "p"}, "labels": {"c": False}},
             {"id": "3", "state": {"query": "Y follows X.", "passage": "p"}, "labels": {"c": False}}]
    ds = loads_jsonl("\n".join(json.dumps(i) for i in items), rubric.questions)
    run = run_set(ds, FixedJudge({"c": 0.9, "e": 0.1}))
    ids, _, y = rule_data(rubric.policy.rules[0], rubric.questions, ds, run)
    assert ids == ["1", "3"] and list(y) == [True, False]
