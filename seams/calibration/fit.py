"""`calibrate`: fit a rubric's calibrators and cut-points on one split, report on the other.

The pipeline, in order: check there are enough labels (fewer than `MIN_LABELS` for a question is
an error, fewer than `WARN_LABELS` a warning); split the items once at random; fit one
calibrator per question on the fit split; fit each rule's three zones on the fit split's
calibrated numbers; measure everything on the held-out split with confidence intervals; gather
it into a `CalibrationBlock` that `writeback` puts into the rubric.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal

import numpy as np

from ..errors import InputError, OptionError
from ..policy import NEXT
from ..rubric import Rubric, question_fingerprint
from ..rubric.calibration import (
    BlockMeasured,
    CalibrationBlock,
    Calibrator,
    HeldOut,
    QuestionCalibration,
    QuestionMeasured,
    QuestionMetrics,
    RuleMeasured,
    RuleThresholds,
    Split,
    StoredAnswers,
    ZoneMetrics,
)
from .calibrators import CALIBRATOR_METHODS, TemperatureCalibrator, fit_noul_calibrator
from .dataset import LabelledSet
from .extract import (
    QuestionData,
    RuleNotFittable,
    encode_answers,
    gate_rule,
    ids_hash,
    question_data,
    rule_data,
    split_ids,
    transform_of,
)
from .metrics import Costs, zone_metrics
from .run import RunResult
from .thresholds import CostThresholds, TargetErrorThresholds

MIN_LABELS = 50
WARN_LABELS = 200

class CalibrationDataWarning(UserWarning):
    """Enough labels to fit, too few to trust: the intervals will be wide."""


@dataclass
class FitOptions:
    """How to fit. `method` "cost" uses `costs`; "target" uses `target` (α) and `delta` (δ).

    Every parameter is checked where it is set, scikit-learn's way at the boundary: an
    `OptionError` names the field and its limit (`FitOptions.split must be within (0, 1), got 7`)
    before anything is judged or fitted.
    """

    method: Literal["cost", "target"] = "cost"
    costs: Costs = field(default_factory=Costs)
    target: float = 0.05
    delta: float = 0.05
    capacity: float | None = None
    split: float = 0.5
    seed: int = 0
    calibrator: str = "auto"
    n_boot: int = 1000
    #: "cost" fits cut-points only where scores separate the labels at this level (see `CostThresholds`)
    signal_level: float = 0.05
    #: "target": the error is a share of the automated decisions, or of all of them with the
    #: reviewed ones counted right (a cascade to a trusted judge: `TargetErrorThresholds`' `over`)
    target_over: Literal["automated", "all"] = "automated"

    def __post_init__(self) -> None:
        def bad(name: str, rule: str) -> OptionError:
            return OptionError("FitOptions", name, f"{rule}, got {getattr(self, name)!r}")

        if self.method not in ("cost", "target"):
            raise bad("method", "must be 'cost' or 'target'")
        if self.calibrator not in CALIBRATOR_METHODS:
            raise bad("calibrator", "must be " + ", ".join(CALIBRATOR_METHODS[:-1]) + f" or {CALIBRATOR_METHODS[-1]}")
        if not isinstance(self.costs, Costs):
            raise bad("costs", "must be a Costs (Costs.parse('act=10,refuse=1,review=0.5'))")
        if not _number(self.target) or not 0 < self.target < 1:
            raise bad("target", "must be within (0, 1)")
        if not _number(self.delta) or not 0 < self.delta < 1:
            raise bad("delta", "must be within (0, 1)")
        if self.capacity is not None and (not _number(self.capacity) or not 0 <= self.capacity <= 1):
            raise bad("capacity", "is a share of items within [0, 1]")
        if not _number(self.split) or not 0 < self.split < 1:
            raise bad("split", "must be within (0, 1)")
        if not _number(self.signal_level) or not 0 < self.signal_level <= 1:
            raise bad("signal_level", "is a p-value within (0, 1]")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise bad("seed", "must be an integer")
        if not isinstance(self.n_boot, int) or isinstance(self.n_boot, bool) or self.n_boot < 0:
            raise bad("n_boot", "must be a non-negative integer")
        if self.target_over not in ("automated", "all"):
            raise bad("target_over", "must be 'automated' or 'all'")


def _number(value: Any) -> bool:
    """A real, finite number (a bool is not one)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and bool(np.isfinite(value))


@dataclass(frozen=True)
class QuestionFit:
    """One question's fit, as the report shows it: its calibrator, and every metric measured on
    the held-out split before and after it (the block stores a summary of these)."""

    kind: str
    calibrator: Calibrator | None
    fit_n: int
    report_n: int
    before: dict[str, Any]
    after: dict[str, Any]
    data: QuestionData  # the held-out split, for the reliability diagram


@dataclass(frozen=True)
class RuleFit:
    """One rule's (or gate's) fitted cut-points, and its zones on the fit split, on the held-out
    split, and as written (raw answers at the declared thresholds, held out)."""

    thresholds: RuleThresholds
    params: dict[str, Any]
    fit: dict[str, Any]
    heldout: dict[str, Any]
    as_written: dict[str, Any]


@dataclass
class CalibrationResult:
    """The block to write back, and everything the report shows."""

    block: CalibrationBlock
    questions: dict[str, QuestionFit]
    rules: dict[str, RuleFit]
    notes: list[str]
    fit_ids: set[str]
    report_ids: set[str]


def check_counts(counts: Mapping[str, int], questions: Mapping[str, Any]) -> list[str]:
    """Raise when a labelled question has fewer than MIN_LABELS labels; notes for the rest."""
    notes = []
    short = {q: n for q, n in counts.items() if 0 < n < MIN_LABELS}
    if short:
        listed = ", ".join(f"{q!r} has {n}" for q, n in sorted(short.items()))
        raise InputError(f"too few labels to calibrate: {listed}; at least {MIN_LABELS} per question are needed "
                         f"({WARN_LABELS}+ recommended)")
    if not any(n >= MIN_LABELS for n in counts.values()):
        raise InputError(f"no question has labels to calibrate against (need at least {MIN_LABELS})")
    for q, n in sorted(counts.items()):
        if 0 < n < WARN_LABELS:
            msg = (f"question {q!r} has only {n} labels (< {WARN_LABELS}): the fit will be noisy and the "
                   f"intervals wide")
            warnings.warn(msg, CalibrationDataWarning, stacklevel=3)
            notes.append(msg)
    for q in questions:
        if counts.get(q, 0) == 0:
            notes.append(f"question {q!r} has no labels: not calibrated")
    return notes


def _fit_question(qd: QuestionData, method: str, seed: int) -> tuple[Calibrator | None, str | None]:
    if method == "none":
        return None, None
    if qd.kind == "noul":
        p, y = qd.noul()
        if y.all() or not y.any():
            return None, f"question {qd.qid!r}: fit split has labels of one class only; not recalibrated"
        est = fit_noul_calibrator(p, y, method, seed=seed)
        return (est.to_block() if est is not None else None), None
    dists, _, idx = qd.dists()
    return TemperatureCalibrator().fit(dists, idx).to_block(), None


def noul_threshold(rules: list[Any], qid: str, overrides: Mapping[str, tuple[float, float]] | None = None) -> float:
    """The cut that turns a Noul into yes/no for precision and recall: the `high` of the first rule
    reading the question directly (after fitted overrides), else 0.5."""
    for r in rules:
        if r.question == qid and r.option is None:
            return (overrides or {}).get(r.id, (r.high, r.effective_low))[0]
    return 0.5


def fit_calibration(rubric: Rubric, dataset: LabelledSet, run: RunResult, options: FitOptions) -> CalibrationResult:
    """Fit calibrators and thresholds for `rubric` from `run`'s answers to `dataset`."""
    questions = rubric.questions
    qdata = {qid: question_data(dataset, run, qid) for qid in questions}
    notes = check_counts({q: len(d) for q, d in qdata.items()}, questions)
    if run.errors:
        notes.append(f"{len(run.errors)} item(s) failed to judge and are left out (first: "
                     f"{next(iter(run.errors.items()))})")
    fit_ids, report_ids = split_ids([it.id for it in dataset.items if it.id in run.answers], options.split,
                                    options.seed)

    calibrators: dict[str, Calibrator] = {}
    held: dict[str, tuple[QuestionData, Calibrator | None, int]] = {}  # held-out data, calibrator, fit size
    qblocks: dict[str, QuestionCalibration] = {}
    answers_store: dict[str, StoredAnswers] = {}
    for qid, qd in qdata.items():
        if not len(qd):
            continue
        fit_q, rep_q = qd.take(fit_ids), qd.take(report_ids)
        cal, note = _fit_question(fit_q, options.calibrator, options.seed)
        if note:
            notes.append(note)
        if cal is not None:
            calibrators[qid] = cal
        answers_store[qid] = encode_answers(qd)
        held[qid] = (rep_q, cal, len(fit_q))
    transform = transform_of(calibrators)

    rules_out: dict[str, RuleThresholds] = {}
    gates_out: dict[str, RuleThresholds] = {}
    rresults: dict[str, RuleFit] = {}
    for rule in rubric.policy.rules:
        only: set[str] | None = None
        if rule.gate is not None:
            fitted = _fit_rule(rubric, gate_rule(rule), dataset, run, transform, fit_ids, report_ids, options, notes,
                               label=f"the gate of rule {rule.id!r}", gate_costs=_gate_costs(rubric, rule, options.costs))
            if fitted is not None:
                gates_out[rule.id], rresults[f"{rule.id} (gate)"] = fitted
            only = _gate_opened(rule, dataset, notes)
        fitted = _fit_rule(rubric, rule, dataset, run, transform, fit_ids, report_ids, options, notes,
                           label=f"rule {rule.id!r}", only=only)
        if fitted is not None:
            rules_out[rule.id], rresults[rule.id] = fitted

    overrides = {r: (t.high, t.low) for r, t in rules_out.items()}
    qresults: dict[str, QuestionFit] = {}
    for qid, (held_q, cal, fit_n) in held.items():
        thr_before = noul_threshold(rubric.policy.rules, qid)
        thr_after = noul_threshold(rubric.policy.rules, qid, overrides)
        before = held_q.metrics(None, threshold=thr_before, n_boot=options.n_boot, seed=options.seed)
        after = held_q.metrics(transform, threshold=thr_after, n_boot=options.n_boot, seed=options.seed)
        qresults[qid] = QuestionFit(held_q.kind, cal, fit_n, len(held_q), before, after, held_q)
        qblocks[qid] = QuestionCalibration(
            fingerprint=question_fingerprint(questions[qid], rubric.spec.asked_alone.get(qid)), n=len(qdata[qid]), calibrator=cal,
            metrics=QuestionMeasured(heldout=HeldOut(before=QuestionMetrics.of(before), after=QuestionMetrics.of(after))))

    models = [a.model for a in run.answers.values()]
    model = max(set(models), key=models.count) if models else run.model
    block = CalibrationBlock(
        model=model,
        fitted_at=datetime.now(UTC).replace(microsecond=0),
        data_hash=dataset.hash,
        n=len(dataset),
        policy_fingerprint=rubric.policy_fingerprint(),
        questions=qblocks,
        thresholds=rules_out,
        gates=gates_out,
        metrics=BlockMeasured(
            split=Split(fit=len(fit_ids), heldout=len(report_ids), share=options.split, seed=options.seed,
                        ids=ids_hash(fit_ids | report_ids)),
            method=options.method, failed_items=len(run.errors), answers=answers_store),
    )
    return CalibrationResult(block, qresults, rresults, notes, fit_ids, report_ids)


def _gate_opened(rule: Any, dataset: LabelledSet, notes: list[str]) -> set[str] | None:
    """The items a gated rule is fitted on: all but those whose gate question is labelled closed
    (the rule never decides those while its gate is right). Items that do not label the gate are
    kept: a set may ask the rule's question in a state of its own, as a tool Choice is asked
    without the roster listing its gate reads."""
    q = rule.gate.question
    closed = {it.id for it in dataset.items if it.labels.get(q) is False}
    if not closed:
        return None
    notes.append(f"rule {rule.id!r}: fitted without the {len(closed)} item(s) whose gate {q!r} is labelled closed")
    return {it.id for it in dataset.items} - closed


def _gate_costs(rubric: Rubric, rule: Any, costs: Costs) -> Costs:
    """A gate's zone prices: a wrong open priced like the rule's `then`, a wrong close like a
    refusal, unless the gate states its own (`costs: {open, closed, review}`)."""
    base = _zone_costs(rubric, gate_rule(rule), _rule_costs(rule, costs))
    own = rule.gate.costs
    if own is None:
        return base
    return _laid_over(base, act=own.open, refuse=own.closed, review=own.review)


def _rule_costs(rule: Any, costs: Costs) -> Costs:
    """The calibration's costs with the rule's own (`costs:` in the rubric) laid over them."""
    own = rule.costs
    if own is None:
        return costs
    return _laid_over(costs, act=own.act, refuse=own.refuse, review=own.review)


def _laid_over(costs: Costs, **own: float | None) -> Costs:
    """`costs` with every price the rubric states (not None) in place of the run's."""
    return replace(costs, **{k: v for k, v in own.items() if v is not None})


def _fit_rule(
    rubric: Rubric, rule: Any, dataset: LabelledSet, run: RunResult, transform: Any, fit_ids: set[str],
    report_ids: set[str], options: FitOptions, notes: list[str], *, label: str,
    gate_costs: Costs | None = None, only: set[str] | None = None,
) -> tuple[RuleThresholds, RuleFit] | None:
    """Fit one rule's (or one gate's) cut-points on the fit split and measure them on the held-out
    split; None, with a note saying why, when its labels cannot support a fit.

    A rule's zones are priced with the calibration's costs and the rule's own laid over them, by
    the kind of each zone's outcome; a gate's with `gate_costs` (act = a wrong open, refuse = a
    wrong close). `only` keeps the fit and the measurement to those items.
    """
    questions = rubric.questions
    if only is not None:
        fit_ids, report_ids = fit_ids & only, report_ids & only
    try:
        ids_f, p_f, y_f = rule_data(rule, questions, dataset, run, transform, fit_ids)
    except RuleNotFittable as exc:
        notes.append(f"{exc}: thresholds kept as written")
        return None
    if rule.any is not None:
        partial = sum(1 for it in dataset.items if 0 < sum(q in it.labels for q in rule.any) < len(rule.any))
        if partial:
            notes.append(f"{label}: {partial} item(s) label only some of its flags {rule.any}; "
                         f"the unlabelled flags are read as false")
    if len(ids_f) < MIN_LABELS // 2 or len(np.unique(y_f)) < 2:
        notes.append(f"{label}: {len(ids_f)} labelled items in the fit split "
                     f"{'(one class only) ' if len(ids_f) else ''}— thresholds kept as written")
        return None
    no_band = rule.review == NEXT  # the band passes the item on: one cut, no review zone
    if no_band and options.method != "cost":
        notes.append(f"{label} has no review band (review: next); a target error needs one: "
                     f"thresholds kept as written")
        return None
    if gate_costs is None:
        stated = _rule_costs(rule, options.costs)
        zone_costs = _zone_costs(rubric, rule, stated)
        shown = {"act": stated.act, "refuse": stated.refuse, "review": stated.review}
    else:
        zone_costs = gate_costs
        shown = {"open": gate_costs.act, "closed": gate_costs.refuse, "review": gate_costs.review}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if options.method == "cost":
            capacity = 0.0 if no_band else options.capacity
            est: Any = CostThresholds(zone_costs, capacity, options.signal_level).fit(p_f, y_f)
            params: dict[str, Any] = {"costs": shown, "expected_cost_fit": round(est.cost_, 6),
                                      "signal_p": round(est.signal_p_, 6)}
        else:
            est = TargetErrorThresholds(options.target, options.delta, options.capacity,
                                        over=options.target_over).fit(p_f, y_f)
            params = {"target_error": options.target, "confidence": round(1 - options.delta, 6),
                      **({"error_over": "all"} if options.target_over == "all" else {}),
                      "guaranteed": est.guaranteed_, "lambda": est.lambda_,
                      "error_upper_bound_fit": round(est.upper_bound_, 6)}
    for w in caught:
        notes.append(f"{label}: {w.message}")
    if options.capacity is not None:
        params["capacity"] = options.capacity
    params.update(split=options.split, seed=options.seed)
    high, low = round(est.high_, 6), round(est.low_, 6)
    low = min(low, high)
    _, p_r, y_r = rule_data(rule, questions, dataset, run, transform, report_ids)
    _, p_r_raw, y_r_raw = rule_data(rule, questions, dataset, run, None, report_ids)
    costs = zone_costs if options.method == "cost" else None
    fit_z = zone_metrics(p_f, y_f, high, low, costs=costs)
    rep_z = zone_metrics(p_r, y_r, high, low, costs=costs) if len(p_r) else {}
    before_z = zone_metrics(p_r_raw, y_r_raw, rule.high, rule.effective_low, costs=costs) if len(p_r_raw) else {}
    thresholds = RuleThresholds(
        high=high, low=low, method="cost" if options.method == "cost" else "target-error", params=params,
        metrics=RuleMeasured(fit=ZoneMetrics.of(fit_z), heldout=ZoneMetrics.of(rep_z)))
    return thresholds, RuleFit(thresholds, params, fit=fit_z, heldout=rep_z, as_written=before_z)


def _zone_costs(rubric: Rubric, rule: Any, costs: Costs) -> Costs:
    """The stated costs as a rule's zones see them.

    The fitters price a wrong decision in the high zone as `act` and one in the low zone as
    `refuse`. When the rule's high zone is a refusal (a red flag that quarantines), a wrong
    high-zone decision is a wrong automatic refusal, so the two prices swap.
    """
    then = rule.then
    if then is not None and then != NEXT and rubric.policy.outcomes.get(then) == "refuse":
        return Costs(act=costs.refuse, refuse=costs.act, review=costs.review)
    return costs

__all__ = ["MIN_LABELS", "WARN_LABELS", "CalibrationDataWarning", "CalibrationResult", "FitOptions",
           "check_counts", "fit_calibration", "noul_threshold"]
