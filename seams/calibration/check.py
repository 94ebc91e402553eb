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

from ..rubric import Rubric
from .dataset import LabelledSet
from .extract import (
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

HIGHER_BETTER = ("accuracy", "top1", "auroc", "kappa")
LOWER_BETTER = ("brier", "ece", "log_loss", "mae")


@dataclass
class Finding:
    level: Literal["fail", "ok", "info"]
    where: str
    message: str


@dataclass
class CheckResult:
    findings: list[Finding] = field(default_factory=list)
    measured: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not any(f.level == "fail" for f in self.findings)

    def add(self, level: Literal["fail", "ok", "info"], where: str, message: str) -> None:
        self.findings.append(Finding(level, where, message))

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "findings": [f.__dict__ for f in self.findings], "measured": self.measured}


def _served_model(run: RunResult) -> str:
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
    model = _served_model(run)
    for reason in rubric.stale_reasons(model):
        out.add("fail", "stale", reason)
    if not out.ok:
        return out
    if run.errors:
        out.add("info", "judge", f"{len(run.errors)} item(s) failed to judge and are left out")
    answered = [it.id for it in dataset.items if it.id in run.answers]
    split = cal.metrics.get("split") or {}
    same = dataset.hash == cal.data_hash and split.get("ids") == ids_hash(answered)
    if same:
        _, keep = split_ids(answered, float(split["share"]), int(split["seed"]))
        out.add("info", "data", f"same data set ({cal.data_hash}): measuring the stored held-out split ({len(keep)} items)")
    else:
        keep = set(answered)
        out.add("info", "data", f"data set {dataset.hash} differs from the fitted one ({cal.data_hash}): "
                                f"measuring all {len(keep)} items against the stored intervals")
    transform = cal.transform
    overrides = cal.threshold_overrides()
    stored_answers = cal.metrics.get("answers") or {}
    for qid, qc in cal.questions.items():
        qd = question_data(dataset, run, qid)
        if not len(qd):
            out.add("info", qid, "no labelled answers in this data set")
            continue
        sub = qd.take(keep)
        now = sub.metrics(transform, threshold=noul_threshold(rubric.policy.rules, qid, overrides),
                          n_boot=0 if same else n_boot)
        out.measured[qid] = now
        stored = (qc.metrics.get("heldout") or {}).get("after") or {}
        for name in HIGHER_BETTER + LOWER_BETTER:
            ci = stored.get(f"{name}_ci")
            value = now.get(name)
            if ci is None or value is None or None in ci:
                continue
            # same items: the value itself must stay inside; new items carry their own sampling
            # noise, so there the new interval must lie wholly beyond the stored one to fail
            mine = now.get(f"{name}_ci") if not same else None
            lo_now, hi_now = (mine if mine and None not in mine else (value, value))
            worse = hi_now < ci[0] if name in HIGHER_BETTER else lo_now > ci[1]
            shown = f"{value:.4f}" + (f" [{lo_now:.4f}, {hi_now:.4f}]" if mine else "")
            if worse:
                out.add("fail", qid, f"{name} {shown} is beyond its stored interval "
                                     f"[{ci[0]:.4f}, {ci[1]:.4f}] (fitted value {stored.get(name)})")
            else:
                out.add("ok", qid, f"{name} {shown} within [{ci[0]:.4f}, {ci[1]:.4f}]")
        st = stored_answers.get(qid)
        if st is None:
            continue
        if st.get("ids") != ids_hash(qd.keys):
            out.add("info", qid, "not the items of the stored run: answer flips not tested")
            continue
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
    for unit, rule, is_gate in rules_and_gates(rubric.policy.rules):
        rt = (cal.gates if is_gate else cal.thresholds).get(rule.id)
        if rt is None:
            continue
        _, p, y = rule_data(rule, rubric.questions, dataset, run, transform, keep)
        if not len(p):
            continue
        z = zone_metrics(p, y, rt.high, rt.low)
        out.measured[f"rule:{unit}"] = z
        name = f"rule {unit}"
        stored = rt.metrics.get("heldout") or {}
        ci = stored.get("error_rate_ci")
        err_lo = z["error_rate"] if same or not z.get("error_rate_ci") else z["error_rate_ci"][0]
        if ci and z.get("error_rate") is not None and err_lo > ci[1]:
            out.add("fail", name, f"error rate on automated decisions {z['error_rate']:.4f} is above "
                                  f"its stored interval [{ci[0]:.4f}, {ci[1]:.4f}]")
        elif ci and z.get("error_rate") is not None:
            out.add("ok", name, f"error rate on automated decisions {z['error_rate']:.4f} within "
                                f"[{ci[0]:.4f}, {ci[1]:.4f}]")
        aci = stored.get("automation_rate_ci")
        auto_hi = z["automation_rate"] if same or not z.get("automation_rate_ci") else z["automation_rate_ci"][1]
        if aci and z.get("automation_rate") is not None and auto_hi < aci[0]:
            out.add("fail", name, f"automation rate {z['automation_rate']:.4f} is below its stored "
                                  f"interval [{aci[0]:.4f}, {aci[1]:.4f}]")
    return out


__all__ = ["CheckResult", "Finding", "check_calibration"]
