"""A rubric's calibration block: applied by the policy when current, ignored (with a warning)
when stale, and a warning when a calibrated rubric runs on a moving alias."""

import warnings

import pytest

from seams.errors import CalibrationWarning, MovingAliasWarning
from seams.rubric import Rubric, question_fingerprint

from .fixed_judge import FixedJudge

SPEC = {
    "name": "t",
    "state": "text",
    "questions": {"q": {"type": "noul", "instructions": "Is it urgent?"},
                  "c": {"type": "choice", "instructions": "Which team?", "criteria": ["billing", "tech"]}},
    "policy": {"outcomes": {"go": "act", "stop": "refuse"}, "default": "stop",
               "rules": [{"id": "r", "question": "q", "high": 0.9, "low": 0.1, "then": "go", "else": "stop"}]},
}


def calibrated(model: str = "fixed-1", **changes) -> Rubric:
    base = Rubric.from_dict(SPEC)
    block = {
        "model": model, "fitted_at": "2026-11-29T00:00:00Z", "data_hash": "abc", "n": 500,
        "policy_fingerprint": base.policy_fingerprint(),
        "questions": {
            "q": {"fingerprint": question_fingerprint(base.questions["q"]), "n": 500,
                  "calibrator": {"method": "isotonic", "x": [0.0, 0.5, 1.0], "y": [0.0, 0.8, 1.0]}},
            "c": {"fingerprint": question_fingerprint(base.questions["c"]), "n": 500,
                  "calibrator": {"method": "temperature", "temperature": 2.0}},
        },
        "thresholds": {"r": {"high": 0.7, "low": 0.3, "method": "costs"}},
    }
    spec = {**SPEC, **changes, "calibration": block}
    return Rubric.from_dict(spec)


def test_current_calibration_transforms_answers_and_overrides_thresholds():
    r = calibrated()
    # raw 0.5 → isotonic 0.8 ≥ fitted high 0.7 (the declared high is 0.9)
    d = r.decide("x", judge=FixedJudge({"q": 0.5, "c": {"billing": 0.8, "tech": 0.2}}))
    assert d.calibrated and d.outcome == "go" and d.threshold == 0.7
    assert d.probability == pytest.approx(0.8)
    # the raw answers are what the decision records
    assert d.answers["q"].noul == 0.5


def test_temperature_softens_a_choice():
    r = calibrated()
    cal = r.calibration
    from seams.answers import ChoiceAnswer

    soft = cal.transform("c", ChoiceAnswer.from_probabilities({"billing": 0.8, "tech": 0.2}))
    assert soft.probabilities["billing"] == pytest.approx(2 / 3)  # √.8 / (√.8 + √.2)


def test_stale_when_model_differs_is_not_applied():
    r = calibrated(model="other-model")
    with pytest.warns(CalibrationWarning, match="fitted on model 'other-model'"):
        d = r.decide("x", judge=FixedJudge({"q": 0.5, "c": {"billing": 0.8, "tech": 0.2}}))
    assert not d.calibrated and d.outcome == "review"  # declared 0.1/0.9 band


def test_stale_when_wording_or_policy_changes():
    changed_q = {**SPEC["questions"], "q": {"type": "noul", "instructions": "Is it very urgent?"}}
    assert "changed wording" in " ".join(calibrated(questions=changed_q).stale_reasons("fixed-1"))
    changed_p = {**SPEC["policy"], "default": "go"}
    assert "policy changed" in " ".join(calibrated(policy=changed_p).stale_reasons("fixed-1"))
    assert calibrated().stale_reasons("fixed-1") == []


def test_moving_alias_warns_when_calibrated():
    r = calibrated(model="jev-1.13.0")

    class Served(FixedJudge):  # asks for the alias, the server answers with a dated id
        @property
        def model_id(self):
            return "jev-latest"

    with pytest.warns(MovingAliasWarning, match="jev-latest"):
        r.decide("x", judge=Served({"q": 0.5, "c": {"billing": 0.8, "tech": 0.2}}, model="jev-1.13.0"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r.decide("x", judge=FixedJudge({"q": 0.5, "c": {"billing": 0.8, "tech": 0.2}}, model="jev-1.13.0"))


def test_the_policy_fingerprint_ignores_unset_optional_fields_but_not_set_ones():
    from seams.rubric import Rubric

    base = Rubric.builtin("passage-gate")
    data = base.spec.model_dump(by_alias=True, exclude_none=True)
    data.pop("calibration", None)
    assert Rubric.from_dict(data).policy_fingerprint() == base.policy_fingerprint()
    data["policy"]["rules"][0]["costs"] = {"act": 9}
    assert Rubric.from_dict(data).policy_fingerprint() != base.policy_fingerprint()
