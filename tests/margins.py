"""How far a decision on the shipped model is from flipping: the margin a claim about it needs.

A test that asserts what the shipped model decides holds on every CPU only if every number the
decision read is farther from its rule's cut-points than two CPUs' logits can differ. That bound is
`tests/test_cpu_parity.py`'s (`LOGIT_MAX`), so the margin is measured in logits too: the smallest
|logit(p) − logit(cut)| over every rule in the decision's trace, against the cut-points that were
applied (the fitted ones when the calibration was in force, else the rubric's own).
"""

from __future__ import annotations

import math

from seams import Decision, Rubric
from seams.decision import RuleTrace

#: Two CPUs' logits differ by at most this much on the parity pairs (the bound that test holds).
LOGIT_MAX = 0.35


def _logit(p: float) -> float:
    p = min(max(p, 1e-9), 1 - 1e-9)
    return math.log(p / (1 - p))


def cut_points(rubric: Rubric, row: RuleTrace, decision: Decision) -> tuple[float, float]:
    """(high, low) that the number in `row` was compared with: the rule's, or its gate's when the
    row is the gate's (a closed gate, or one in its band)."""
    cal = rubric.spec.calibration if decision.calibrated else None
    rule = next(r for r in rubric.spec.policy.rules if r.id == row.rule)
    if rule.gate is not None and row.question == rule.gate.question and row.zone in ("gate", "band"):
        gates = cal.gate_overrides() if cal is not None else {}
        return gates.get(rule.id, (rule.gate.high, rule.gate.effective_low))
    overrides = cal.threshold_overrides() if cal is not None else {}
    return overrides.get(rule.id, (rule.high, rule.effective_low))


def margin(rubric: Rubric, decision: Decision) -> float:
    """The smallest logit distance of any number the decision's rules read from their cut-points
    (infinite when no rule read a number: code decided). A gate that opened leaves no row in the
    trace, so its number is not counted; a closed gate, or one in its band, is."""
    out = math.inf
    for row in decision.trace:
        if row.probability is None or row.zone in ("skipped", "default", "error"):
            continue
        high, low = cut_points(rubric, row, decision)
        for cut in {high, low}:
            out = min(out, abs(_logit(row.probability) - _logit(cut)))
    return out


def assert_clear(rubric: Rubric, decision: Decision, what: str) -> None:
    """Fail when `decision` is nearer a cut-point than CPUs can differ: the claim would be a knife edge."""
    m = margin(rubric, decision)
    assert m >= LOGIT_MAX, (
        f"{what}: {decision.outcome} by {decision.rule} is {m:.3f} logits from a cut-point, under the "
        f"{LOGIT_MAX} two CPUs can differ by; assert it only with an input farther from the cut-point")


def above(p: float, cut: float = 0.5) -> bool:
    """p is above `cut` by more than two CPUs' logits can differ."""
    return _logit(p) - _logit(cut) >= LOGIT_MAX


def below(p: float, cut: float = 0.5) -> bool:
    """p is below `cut` by more than two CPUs' logits can differ."""
    return _logit(cut) - _logit(p) >= LOGIT_MAX


def choice_clear(probabilities: dict[str, float]) -> bool:
    """The winner leads the runner-up by more than two CPUs' logits can differ (a softmax's log
    ratio is the difference of the two options' logits)."""
    top, second = sorted(probabilities.values(), reverse=True)[:2]
    return math.log(top) - math.log(second) >= LOGIT_MAX
