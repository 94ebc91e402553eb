"""`seams check`: is a rubric's calibration still true? For CI.

Fails when the calibration is stale (another model, a changed question wording or policy), when a
metric measured now has fallen beyond the confidence interval stored with it, or when the judge's
answers flip significantly against the stored run (an exact McNemar test on the items both runs
answered: were right → now wrong against were wrong → now right; for yes/no questions also
yes → no against no → yes).

On the same data set (same hash) metrics are measured on the stored held-out split, so an
unchanged judge reproduces the stored figures exactly; on other data, on every item.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ..policy import Rule
from ..rubric import Rubric
from ..rubric.calibration import (
    HIGHER_BETTER,
    LOWER_BETTER,
    CalibrationBlock,
    Interval,
    QuestionCalibration,
    QuestionMetrics,
    RuleThresholds,
    ZoneMetrics,
)
from .dataset import LabelledSet
from .extract import (
    QuestionData,
    correct_in_id_order,
    current_answers,
    decode_answers,
    ids_hash,
    question_data,
    rule_data,
    rules_and_gates,
    split_ids,
)
from .fit import noul_threshold
from .metrics import mcnemar, zone_metrics
from .run import RunResult

Level = Literal["fail", "ok", "info"]


@dataclass(frozen=True)
class CheckFinding:
    """One line of `seams check`'s verdict: a failed, passed or informational check."""

    level: Level
    where: str
    message: str


@dataclass
class CheckResult:
    findings: list[CheckFinding] = field(default_factory=list)
    measured: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not any(f.level == "fail" for f in self.findings)

    def add(self, level: Level, where: str, message: str) -> None:
        self.findings.append(CheckFinding(level, where, message))

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "findings": [f.__dict__ for f in self.findings], "measured": self.measured}


@dataclass(frozen=True)
class _Scope:
    """What is measured now: the stored held-out items (`same`: same data, same answered items)
    or every answered item of another data set."""

    keep: set[str]
    same: bool


def served_model(run: RunResult) -> str:
    models = [a.model for a in run.answers.values()]
    return max(set(models), key=models.count) if models else run.model


def check_calibration(rubric: Rubric, dataset: LabelledSet, run: RunResult, *, alpha: float = 0.01,
                      n_boot: int = 300) -> CheckResult:
    """Every check against `run` (the judge's answers to `dataset` now).

    On the stored held-out items a metric fails when its value leaves the stored interval. On
    other items the new value has its own sampling noise (two estimates of the same quantity
    differ by more than one interval's half-width about one time in six), so it fails only when
    its own bootstrap interval lies wholly beyond the stored one. The error rate on automated
    decisions is judged the same way, with Clopper–Pearson intervals.
    """
    out = CheckResult()
    cal = rubric.calibration
    if cal is None:
        out.add("fail", "rubric", "has no calibration block: run `seams calibrate` first")
        return out
    model = served_model(run)
    from ..rubric.heads import head_stale_reasons

    for reason in rubric.stale_reasons(model) + head_stale_reasons(rubric, model):
        out.add("fail", "stale", reason)
    if not out.ok:
        return out
    if run.errors:
        out.add("info", "judge", f"{len(run.errors)} item(s) failed to judge and are left out")
    scope = _scope(cal, dataset, run, out)
    for qid, qc in cal.questions.items():
        qd = question_data(dataset, run, qid)
        if not len(qd):
            out.add("info", qid, "no labelled answers in this data set")
            continue
        _check_question_metrics(rubric, cal, qid, qc, qd, scope, n_boot, out)
        _check_answer_flips(cal, qid, qd, alpha, out)
    for unit, rule, is_gate in rules_and_gates(rubric.policy.rules):
        rt = (cal.gates if is_gate else cal.thresholds).get(rule.id)
        if rt is not None:
            _check_rule(rubric, cal, unit, rule, rt, dataset, run, scope, out)
    return out


def _scope(cal: CalibrationBlock, dataset: LabelledSet, run: RunResult, out: CheckResult) -> _Scope:
    """The stored held-out split when the data and the answered items are the fitted ones, else all."""
    answered = [it.id for it in dataset.items if it.id in run.answers]
    split = cal.metrics.split
    if split is not None and dataset.hash == cal.data_hash and split.ids == ids_hash(answered):
        _, keep = split_ids(answered, split.share, split.seed)
        out.add("info", "data", f"same data set ({cal.data_hash}): measuring the stored held-out split ({len(keep)} items)")
        return _Scope(keep, same=True)
    keep = set(answered)
    out.add("info", "data", f"data set {dataset.hash} differs from the fitted one ({cal.data_hash}): "
                            f"measuring all {len(keep)} items against the stored intervals")
    return _Scope(keep, same=False)


def _check_question_metrics(rubric: Rubric, cal: CalibrationBlock, qid: str, qc: QuestionCalibration,
                            qd: QuestionData, scope: _Scope, n_boot: int, out: CheckResult) -> None:
    """Each stored quality metric of a question against the same metric measured now."""
    now_raw = qd.take(scope.keep).metrics(
        cal.transform, threshold=noul_threshold(rubric.policy.rules, qid, cal.threshold_overrides()),
        n_boot=0 if scope.same else n_boot)
    out.measured[qid] = now_raw
    if qc.metrics.heldout is None:
        out.add("fail", qid, "the calibration stores no held-out metrics to check against: re-run `seams calibrate`")
        return
    stored, now = qc.metrics.heldout.after, QuestionMetrics.of(now_raw)
    for name in HIGHER_BETTER + LOWER_BETTER:
        ci, value = stored.interval(name), now.value(name)
        if ci is None or value is None:
            continue
        # same items: the value itself must stay inside; new items carry their own sampling
        # noise, so there the new interval must lie wholly beyond the stored one to fail
        mine = now.interval(name) if not scope.same else None
        lo_now, hi_now = mine or (value, value)
        worse = hi_now < ci[0] if name in HIGHER_BETTER else lo_now > ci[1]
        shown = f"{value:.4f}" + (f" [{lo_now:.4f}, {hi_now:.4f}]" if mine else "")
        if worse:
            out.add("fail", qid, f"{name} {shown} is beyond its stored interval "
                                 f"[{ci[0]:.4f}, {ci[1]:.4f}] (fitted value {stored.value(name)})")
        else:
            out.add("ok", qid, f"{name} {shown} within [{ci[0]:.4f}, {ci[1]:.4f}]")


def _check_answer_flips(cal: CalibrationBlock, qid: str, qd: QuestionData, alpha: float, out: CheckResult) -> None:
    """Exact McNemar tests of the answers now against the stored run, on the same items."""
    st = (cal.metrics.answers or {}).get(qid)
    if st is None:
        return
    if st.ids != ids_hash(qd.keys):
        out.add("info", qid, "not the items of the stored run: answer flips not tested")
        return
    before, after = decode_answers(st), current_answers(qd)
    right = mcnemar(correct_in_id_order(qd, before), correct_in_id_order(qd, after))
    tests = [("right→wrong vs wrong→right", right)]
    if qd.kind == "noul":
        tests.append(("yes→no vs no→yes", mcnemar(before.astype(bool), after.astype(bool))))
    flips = int(np.sum(before != after))
    out.measured.setdefault(qid, {})["flips"] = flips
    for label, t in tests:
        if t["p_value"] < alpha:
            out.add("fail", qid, f"answers flipped significantly against the stored run ({label}: "
                                 f"{t['b']} vs {t['c']}, McNemar p = {t['p_value']:.2g} < {alpha})")
        else:
            out.add("ok", qid, f"{flips} of {len(qd)} answers flipped; McNemar ({label}) p = {t['p_value']:.2g}")


def _check_rule(rubric: Rubric, cal: CalibrationBlock, unit: str, rule: Rule, rt: RuleThresholds,
                dataset: LabelledSet, run: RunResult, scope: _Scope, out: CheckResult) -> None:
    """A rule's error rate on automated decisions and its automation rate against the stored ones."""
    _, p, y = rule_data(rule, rubric.questions, dataset, run, cal.transform, scope.keep)
    if not len(p):
        return
    z = zone_metrics(p, y, rt.high, rt.low)
    out.measured[f"rule:{unit}"] = z
    name = f"rule {unit}"
    if rt.metrics.heldout is None:
        out.add("fail", name, "the calibration stores no held-out metrics to check against: re-run `seams calibrate`")
        return
    stored, now = rt.metrics.heldout, ZoneMetrics.of(z)
    ci, err = _bounds(stored.error_rate_ci), now.error_rate
    if ci and err is not None:
        mine = _bounds(now.error_rate_ci)
        err_lo = err if scope.same or not mine else mine[0]
        if err_lo > ci[1]:
            out.add("fail", name, f"error rate on automated decisions {err:.4f} is above "
                                  f"its stored interval [{ci[0]:.4f}, {ci[1]:.4f}]")
        else:
            out.add("ok", name, f"error rate on automated decisions {err:.4f} within "
                                f"[{ci[0]:.4f}, {ci[1]:.4f}]")
    aci, auto = _bounds(stored.automation_rate_ci), now.automation_rate
    if aci and auto is not None:
        mine = _bounds(now.automation_rate_ci)
        auto_hi = auto if scope.same or not mine else mine[1]
        if auto_hi < aci[0]:
            out.add("fail", name, f"automation rate {auto:.4f} is below its stored "
                                  f"interval [{aci[0]:.4f}, {aci[1]:.4f}]")


def _bounds(ci: Interval | None) -> tuple[float, float] | None:
    return None if ci is None or ci[0] is None or ci[1] is None else (ci[0], ci[1])


__all__ = ["CheckFinding", "CheckResult", "check_calibration"]
