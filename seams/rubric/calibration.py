"""The calibration block of a rubric: what was fitted, on what, and how to apply it.

Written by `seams calibrate`, read by the policy. Applying a calibration needs nothing beyond
the standard library (no scikit-learn at decision time): Platt scaling is a logistic map of the
logit, isotonic regression a monotone piecewise-linear interpolation, temperature a power of
the distribution.
"""

from __future__ import annotations

import bisect
import math
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..answers import ChoiceAnswer, NoulAnswer, ScoreAnswer


class _Block(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Calibrator(_Block):
    """A fitted map from a judge's probability to a calibrated one."""

    method: Literal["platt", "isotonic", "temperature", "identity"]
    a: float | None = None  # platt: p' = sigmoid(a·logit(p) + b)
    b: float | None = None
    x: list[float] | None = None  # isotonic: breakpoints (increasing) and values
    y: list[float] | None = None
    temperature: float | None = Field(default=None, gt=0)  # choice/score: p_i ∝ p_i^(1/T)

    def apply_p(self, p: float) -> float:
        """Calibrate one probability (Nouls)."""
        if self.method == "platt":
            q = min(max(p, 1e-7), 1 - 1e-7)
            a = 1.0 if self.a is None else self.a  # a = 0 is a fitted value (no signal: the base rate)
            z = a * math.log(q / (1 - q)) + (self.b or 0.0)
            return 1 / (1 + math.exp(-z)) if z > -700 else 0.0
        if self.method == "isotonic" and self.x and self.y:
            return _interp(p, self.x, self.y)
        return p

    def apply_dist(self, probs: list[float]) -> list[float]:
        """Calibrate a distribution (Choices and Scores) by temperature."""
        if self.method != "temperature" or not self.temperature:
            return probs
        logs = [math.log(max(p, 1e-12)) / self.temperature for p in probs]
        top = max(logs)
        ex = [math.exp(v - top) for v in logs]
        total = sum(ex)
        return [e / total for e in ex]


def _interp(p: float, xs: list[float], ys: list[float]) -> float:
    if p <= xs[0]:
        return ys[0]
    if p >= xs[-1]:
        return ys[-1]
    i = bisect.bisect_right(xs, p)
    x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
    return y0 if x1 == x0 else y0 + (y1 - y0) * (p - x0) / (x1 - x0)


class QuestionCalibration(_Block):
    """What was fitted for one question, against the wording it was fitted on."""

    fingerprint: str
    n: int = Field(ge=0)
    calibrator: Calibrator | None = None
    metrics: dict[str, Any] = Field(default_factory=dict)


class RuleThresholds(_Block):
    """Fitted cut-points of one rule, how they were fitted and what they achieved."""

    high: float = Field(ge=0, le=1)
    low: float = Field(ge=0, le=1)
    method: str
    params: dict[str, Any] = Field(default_factory=dict)
    metrics: dict[str, Any] = Field(default_factory=dict)


class CalibrationBlock(_Block):
    """A rubric's `calibration:` block."""

    model: str
    fitted_at: datetime
    data_hash: str
    n: int = Field(ge=0)
    policy_fingerprint: str
    questions: dict[str, QuestionCalibration] = Field(default_factory=dict)
    thresholds: dict[str, RuleThresholds] = Field(default_factory=dict)
    #: Fitted cut-points of rules' gates, by the id of the rule the gate belongs to.
    gates: dict[str, RuleThresholds] = Field(default_factory=dict)
    metrics: dict[str, Any] = Field(default_factory=dict)

    def transform(self, qid: str, answer: NoulAnswer | ChoiceAnswer | ScoreAnswer):
        """The answer with this question's calibrator applied (unchanged when none)."""
        qc = self.questions.get(qid)
        if qc is None or qc.calibrator is None:
            return answer
        cal = qc.calibrator
        if isinstance(answer, NoulAnswer):
            return NoulAnswer(noul=min(1.0, max(0.0, cal.apply_p(answer.noul))))
        if isinstance(answer, ChoiceAnswer):
            names = list(answer.probabilities)
            probs = cal.apply_dist([answer.probabilities[n] for n in names])
            return ChoiceAnswer.from_probabilities(dict(zip(names, probs)))
        levels = [answer.legend[str(i)] for i in range(answer.n_levels)]
        probs = cal.apply_dist([answer.probabilities[str(i)] for i in range(answer.n_levels)])
        return ScoreAnswer.from_probabilities(probs, levels)

    def threshold_overrides(self) -> dict[str, tuple[float, float]]:
        return {rule: (t.high, t.low) for rule, t in self.thresholds.items()}

    def gate_overrides(self) -> dict[str, tuple[float, float]]:
        return {rule: (t.high, t.low) for rule, t in self.gates.items()}


__all__ = ["CalibrationBlock", "Calibrator", "QuestionCalibration", "RuleThresholds"]
