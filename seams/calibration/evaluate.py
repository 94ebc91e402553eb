"""`seams eval`: how well a judge's answers (and a rubric's policy) match a labelled set."""

from __future__ import annotations

from typing import Any

from ..rubric import Rubric
from .dataset import LabelledSet
from .extract import question_data, rule_data, rules_and_gates
from .fit import noul_threshold
from .metrics import zone_metrics
from .run import RunResult


def evaluate_set(dataset: LabelledSet, run: RunResult, rubric: Rubric | None = None, *, n_boot: int = 1000,
                 seed: int = 0) -> dict[str, Any]:
    """Metrics per labelled question, and per rule the zones at the thresholds in force.

    When the rubric carries a calibration that applies to the judge's model, the figures are of
    the calibrated answers and each question also shows `raw` (the judge as it answered).
    """
    models = [a.model for a in run.answers.values()]
    model = max(set(models), key=models.count) if models else run.model
    stored = rubric.calibration if rubric is not None else None
    stale = rubric.stale_reasons(model) if rubric is not None and stored is not None else []
    cal = stored if not stale else None  # the calibration in force
    applies = cal is not None
    transform = cal.transform if cal is not None else None
    overrides = cal.threshold_overrides() if cal is not None else {}
    gates = cal.gate_overrides() if cal is not None else {}
    rules = list(rubric.policy.rules) if rubric is not None else []
    questions = rubric.questions if rubric is not None else {}
    qids: list[str] = list(questions)
    for it in dataset.items:
        qids.extend(q for q in it.labels if q not in qids)
    out: dict[str, Any] = {
        "model": model, "data_hash": dataset.hash, "n_items": len(dataset), "failed_items": len(run.errors),
        "calibrated": applies, "questions": {}, "rules": {},
    }
    if stale:
        out["stale"] = stale
    for qid in qids:
        qd = question_data(dataset, run, qid)
        if not len(qd):
            continue
        m = qd.metrics(transform, threshold=noul_threshold(rules, qid, overrides), n_boot=n_boot, seed=seed)
        m["type"] = qd.kind
        if applies:
            m["raw"] = qd.metrics(None, threshold=noul_threshold(rules, qid), n_boot=n_boot, seed=seed)
        out["questions"][qid] = m
    for name, rule, is_gate in rules_and_gates(rules):
        cuts = gates if is_gate else overrides
        try:
            _, p, y = rule_data(rule, questions, dataset, run, transform)
        except ValueError:
            continue
        if len(p):
            high, low = cuts.get(rule.id, (rule.high, rule.effective_low))
            out["rules"][name] = zone_metrics(p, y, high, low)
    return out


__all__ = ["evaluate_set"]
