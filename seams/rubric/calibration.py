"""The calibration block of a rubric: what was fitted, on what, and how to apply it.

Written by `seams calibrate`, read by the policy. Applying a calibration needs nothing beyond
the standard library (no scikit-learn at decision time): Platt scaling is a logistic map of the
logit, isotonic regression a monotone piecewise-linear interpolation, temperature a power of
the distribution.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal, Self, get_args

from pydantic import BaseModel, ConfigDict, Field, SerializationInfo, model_serializer

from ..answers import ChoiceAnswer, NoulAnswer, ScoreAnswer
from ..judges.head import Head


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


# --------------------------------------------------------------------------- stored measurements
# What `seams calibrate` measured, kept so that `seams check` can test a later run against it.
# Small frozen models rather than string-keyed dicts: a misspelt key in a file is an error at
# load, and a misspelt metric name in code is an error where it is read. Fields are declared in
# the order the files list them and written back only when given (a given None, an undefined
# metric, included), so a block reads and writes back byte for byte.


class _Stored(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_serializer(mode="plain")
    def _as_written(self, info: SerializationInfo) -> dict[str, Any]:
        """The fields the file or the fit gave, a None among them (an undefined metric) included;
        a field named in `exclude` (`model_dump(exclude={"metrics": {"answers"}})`) left out."""
        return {k: getattr(self, k) for k in type(self).model_fields
                if k in self.model_fields_set and not _excluded(info.exclude, k)}

    @classmethod
    def of(cls, measured: Mapping[str, Any]) -> Self:
        """The stored part of what a metrics function returned (`seams.calibration.metrics`)."""
        return cls.model_validate({k: measured[k] for k in cls.model_fields if k in measured})


def _excluded(exclude: Any, key: str) -> bool:
    """Whether pydantic's `exclude` at this level drops `key` whole (not one of its own fields)."""
    if isinstance(exclude, (set, frozenset)):
        return key in exclude
    return isinstance(exclude, dict) and exclude.get(key) in (True, ...)


#: A confidence interval [low, high]; a bound is None where it could not be estimated.
Interval = tuple[float | None, float | None]
#: The quality metrics `seams check` tests, by the direction in which they improve.
HigherBetter = Literal["accuracy", "top1", "auroc", "kappa"]
LowerBetter = Literal["brier", "ece", "log_loss", "mae"]
QualityMetric = HigherBetter | LowerBetter
HIGHER_BETTER: tuple[HigherBetter, ...] = get_args(HigherBetter)
LOWER_BETTER: tuple[LowerBetter, ...] = get_args(LowerBetter)


class QuestionMetrics(_Stored):
    """How a question's answers matched the labels, each with its 95 % bootstrap interval.

    A metric that does not apply to the question type (AUROC for a Choice, MAE for a Noul) is None.
    """

    n: int | None = None
    accuracy: float | None = None
    accuracy_ci: Interval | None = None
    brier: float | None = None
    brier_ci: Interval | None = None
    log_loss: float | None = None
    log_loss_ci: Interval | None = None
    ece: float | None = None
    ece_ci: Interval | None = None
    ece_adaptive: float | None = None
    ece_adaptive_ci: Interval | None = None
    auroc: float | None = None
    auroc_ci: Interval | None = None
    top1: float | None = None
    top1_ci: Interval | None = None
    mae: float | None = None
    mae_ci: Interval | None = None
    kappa: float | None = None
    kappa_ci: Interval | None = None
    kappa_quadratic: float | None = None

    def value(self, name: QualityMetric) -> float | None:
        """One metric's value; an unknown name is a `KeyError`, never a silent None."""
        _check_metric_name(name)
        value: float | None = getattr(self, name)
        return value

    def interval(self, name: QualityMetric) -> tuple[float, float] | None:
        """One metric's interval, or None when it was not measured or a bound is undefined."""
        _check_metric_name(name)
        ci: Interval | None = getattr(self, f"{name}_ci")
        if ci is None or ci[0] is None or ci[1] is None:
            return None
        return (ci[0], ci[1])


def _check_metric_name(name: str) -> None:
    if name not in HIGHER_BETTER + LOWER_BETTER:
        raise KeyError(f"no quality metric {name!r}; known: {list(HIGHER_BETTER + LOWER_BETTER)}")


class HeldOut(_Stored):
    """A question's metrics on the held-out split, before and after its calibrator."""

    before: QuestionMetrics
    after: QuestionMetrics


class QuestionMeasured(_Stored):
    heldout: HeldOut | None = None


class ZoneMetrics(_Stored):
    """What a rule's three zones did on labelled items: how many were automated (act or refuse),
    how many of those were wrong, with exact (Clopper–Pearson) intervals, and the cost per item."""

    n: int | None = None
    automated: int | None = None
    errors: int | None = None
    automation_rate: float | None = None
    automation_rate_ci: Interval | None = None
    review_rate: float | None = None
    review_rate_ci: Interval | None = None
    error_rate: float | None = None
    error_rate_ci: Interval | None = None
    cost_per_item: float | None = None
    cost_per_item_ci: Interval | None = None


class RuleMeasured(_Stored):
    """A rule's zones on the split its cut-points were fitted on, and on the held-out one."""

    fit: ZoneMetrics | None = None
    heldout: ZoneMetrics | None = None


class Split(_Stored):
    """How the labelled set was split into a fitting part and a held-out part, reproducibly."""

    fit: int = Field(ge=0)
    heldout: int = Field(ge=0)
    share: float = Field(ge=0, le=1)
    seed: int
    ids: str  # a hash of the item ids both parts were drawn from


class StoredAnswers(_Stored):
    """The judge's discrete answer per item (yes/no, or the winner's index) in sorted-id order,
    packed and compressed, so that a later run can be compared item by item (McNemar)."""

    n: int = Field(ge=0)
    ids: str  # a hash of the item ids
    encoding: Literal["bits", "bytes"]
    data: str  # base64 of zlib


class BlockMeasured(_Stored):
    split: Split | None = None
    method: str | None = None
    failed_items: int | None = None
    answers: dict[str, StoredAnswers] | None = None


class QuestionCalibration(_Block):
    """What was fitted for one question, against the wording it was fitted on."""

    fingerprint: str
    n: int = Field(ge=0)
    calibrator: Calibrator | None = None
    #: A fitted head (`seams calibrate --heads`, docs/heads.md): the calibrator applies to its answers.
    head: Head | None = None
    metrics: QuestionMeasured = Field(default_factory=QuestionMeasured)


class RuleThresholds(_Block):
    """Fitted cut-points of one rule, how they were fitted and what they achieved."""

    high: float = Field(ge=0, le=1)
    low: float = Field(ge=0, le=1)
    method: str
    #: The fitting method's inputs and by-products (costs, target error, ...): they differ by method.
    params: dict[str, Any] = Field(default_factory=dict)
    metrics: RuleMeasured = Field(default_factory=RuleMeasured)


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
    metrics: BlockMeasured = Field(default_factory=BlockMeasured)

    def transform(self, qid: str, answer: NoulAnswer | ChoiceAnswer | ScoreAnswer) -> NoulAnswer | ChoiceAnswer | ScoreAnswer:
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


__all__ = [
    "HIGHER_BETTER",
    "LOWER_BETTER",
    "BlockMeasured",
    "CalibrationBlock",
    "Calibrator",
    "HeldOut",
    "Interval",
    "QualityMetric",
    "QuestionCalibration",
    "QuestionMeasured",
    "QuestionMetrics",
    "RuleMeasured",
    "RuleThresholds",
    "Split",
    "StoredAnswers",
    "ZoneMetrics",
]
