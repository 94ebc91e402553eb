"""Questions and answers: the System One shapes, limits and formulas."""

import math

import pytest

from seams import Choice, ChoiceAnswer, Noul, Score, ScoreAnswer, normalize_score, rank_options
from seams.answers import choice_confidence, parse_answer, parse_answers, score_confidence
from seams.errors import ProtocolError, QuestionError
from seams.questions import parse_questions


def test_wire_shapes_match_the_protocol():
    assert Noul(instructions="Is this about billing?", criteria={"true": "Charges"}).wire() == {
        "type": "noul", "instructions": "Is this about billing?", "criteria": {"true": "Charges"}}
    assert Choice(instructions="Which team?", criteria={"billing": "Payments", "technical": None}).wire() == {
        "type": "choice", "instructions": "Which team?", "criteria": {"billing": "Payments", "technical": None}}
    assert Score(criteria=["Calm", "Angry"]).wire() == {"type": "score", "criteria": ["Calm", "Angry"]}


def test_instructions_may_be_string_object_or_array():
    for ins in ("text", {"task": "rate", "scale": [1, 2]}, ["a", {"b": 1}]):
        assert Noul(instructions=ins).instructions == ins


def test_choice_list_shorthand_and_options():
    q = Choice(criteria=["a", "b"])
    assert q.criteria == {"a": None, "b": None}
    assert q.options == ["a", "b"]


@pytest.mark.parametrize("n", [0, 1, 256])
def test_choice_option_count_limits(n):
    with pytest.raises(QuestionError, match=rf"2–255 options, got {n}"):
        Choice(criteria={f"o{i}": None for i in range(n)})


def test_choice_accepts_2_and_255():
    assert len(Choice(criteria={f"o{i}": None for i in range(255)}).options) == 255


def test_choice_duplicate_names_rejected():
    with pytest.raises(QuestionError, match="unique"):
        Choice(criteria=["a", "b", "a"])
    with pytest.raises(QuestionError, match="unique"):  # same name in two Unicode normal forms
        Choice(criteria={"caf\u00e9": None, "cafe\u0301": None})


@pytest.mark.parametrize("n", [1, 11])
def test_score_level_limits(n):
    with pytest.raises(QuestionError, match=rf"2–10 levels, got {n}"):
        Score(criteria=[f"l{i}" for i in range(n)])


def test_score_map_criteria_rejected():
    with pytest.raises(QuestionError, match="ordered list"):
        Score(criteria={"0": "a", "1": "b"})


def test_noul_yaml_boolean_keys():
    assert Noul(criteria={True: "yes", False: "no"}).criteria.true == "yes"


def test_parse_questions_rejects_empty_ids():
    with pytest.raises(ValueError, match="non-empty"):
        parse_questions({"": {"type": "noul"}})


def test_confidence_formulas():
    assert choice_confidence([0.88, 0.12]) == pytest.approx(0.76)
    assert choice_confidence([0.5, 0.5]) == 0.0
    assert choice_confidence([1.0]) == 1.0
    # the protocol's example: 3 levels, p = (0, .95, .05) → 0.925
    assert score_confidence([0.0, 0.95, 0.05]) == pytest.approx(0.925)
    assert score_confidence([1 / 3] * 3) < 0.01 + 1 / 3  # near-uniform ladders are unconfident


def test_answer_helpers():
    a = ChoiceAnswer.from_probabilities({"a": 0.2, "b": 0.5, "c": 0.3})
    assert a.choice == "b" and rank_options(a) == ["b", "c", "a"] and rank_options(a, 1) == ["b"]
    s = ScoreAnswer.from_probabilities([0.0, 0.95, 0.05], ["Calm", "Frustrated", "Very angry"])
    assert s.score == pytest.approx(1.05) and s.level == 1 and s.legend["0"] == "Calm"
    assert s.normalized == pytest.approx(0.525)
    assert normalize_score(3, 4) == 1.0
    with pytest.raises(ValueError):
        normalize_score(0, 1)


TEAM = Choice(criteria={"billing": "Payments", "technical": None})
ANGER = Score(criteria=["Calm", "Frustrated", "Very angry"])


def test_parse_answer_accepts_the_protocol_example():
    a = parse_answer(TEAM, {"type": "choice", "choice": "billing", "probabilities": {"billing": 0.88, "technical": 0.12},
                            "confidence": 0.76})
    assert a.choice == "billing"
    s = parse_answer(ANGER, {"type": "score", "score": 1.05, "legend": {"0": "Calm", "1": "Frustrated", "2": "Very angry"},
                             "probabilities": {"0": 0.0, "1": 0.95, "2": 0.05}, "confidence": 0.925})
    assert s.level == 1


@pytest.mark.parametrize(
    "question,raw,match",
    [
        (Noul(), {"type": "noul", "noul": 1.2}, "outside"),
        (Noul(), {"type": "noul", "noul": math.nan}, "finite"),
        (Noul(), {"type": "boolean", "noul": 0.5}, "type"),
        (TEAM, {"type": "choice", "choice": "technical", "probabilities": {"billing": 0.88, "technical": 0.12}, "confidence": 0.76}, "most probable"),
        (TEAM, {"type": "choice", "choice": "billing", "probabilities": {"billing": 0.9, "technical": 0.3}, "confidence": 0.8}, "sum"),
        (TEAM, {"type": "choice", "choice": "billing", "probabilities": {"billing": 0.88, "technical": 0.12}, "confidence": 0.76 - 0.0}
         | {"confidence": 0.5}, "formula"),
        (TEAM, {"type": "choice", "choice": "billing", "probabilities": {"billing": 0.88, "Technical": 0.12}, "confidence": 0.76}, "keys"),
        (ANGER, {"type": "score", "score": 1.05, "legend": {"1": "Calm", "2": "Frustrated", "3": "Very angry"},
                 "probabilities": {"0": 0.0, "1": 0.95, "2": 0.05}, "confidence": 0.925}, "0-based"),
        (ANGER, {"type": "score", "score": 1.0, "legend": {"0": "Calm", "1": "Frustrated", "2": "Very angry"},
                 "probabilities": {"0": 0.0, "1": 0.7, "2": 0.3}, "confidence": 0.7}, "expectation"),
    ],
)
def test_parse_answer_rejects_protocol_violations(question, raw, match):
    with pytest.raises(ProtocolError, match=match):
        parse_answer(question, raw)


def test_parse_answers_needs_exactly_one_answer_per_id():
    qs = {"a": Noul(), "b": Noul()}
    with pytest.raises(ProtocolError, match="missing"):
        parse_answers(qs, {"a": {"type": "noul", "noul": 0.5}})
    with pytest.raises(ProtocolError, match="unexpected"):
        parse_answers(qs, {"a": {"type": "noul", "noul": 0.5}, "b": {"type": "noul", "noul": 0.5},
                           "c": {"type": "noul", "noul": 0.5}})
