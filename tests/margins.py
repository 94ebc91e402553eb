"""How far a decision on the shipped model is from flipping: the margin a claim about it needs.

A test that asserts what the shipped model decides holds on every CPU only if every number the
decision read is farther from its rule's cut-points than two CPUs' logits can differ. That bound is
`tests/test_cpu_parity.py`'s (`LOGIT_MAX`), so the margin is measured in logits too: the smallest
|logit(p) − logit(cut)| over every rule in the decision's trace, against the cut-points that were
applied (the fitted ones when the calibration was in force, else the rubric's own).

A Noul read through the Noul floor (0.6.1: `a·logit + b·cos + c`, docs/local-judge.md) has a
logit two CPUs move by at most `a·LOGIT_MAX + b·COSINE_MAX`, less than the cross-encoder's own;
its distance is scaled by `LOGIT_MAX` over that bound, so every margin is in the cross-encoder's
logits and compares with `LOGIT_MAX`. A question that names two or more fields in backticks, or
refers to two parts in words ("the first … the second"), is taken to relate them (the logit alone,
unscaled): the safe side when the state does not hold them. A question a fitted head answers is
unscaled too.
"""

from __future__ import annotations

import math
from functools import cache

from seams import Decision, Noul, Rubric
from seams.decision import RuleTrace
from seams.judges.local import read_model_dir, shipped_model_dir
from seams.judges.local.config import BlendWeights
from seams.judges.local.hypotheses import relates_fields
from seams.state import backtick_refs

#: Two CPUs' logits differ by at most this much on the parity pairs (the bound that test holds).
LOGIT_MAX = 0.35
#: ... and the encoder's cosines by at most this much (tests/test_cpu_parity.py's COSINE_MAX).
COSINE_MAX = 0.02


@cache
def _floor_scale() -> float:
    """LOGIT_MAX over what two CPUs can move a floor-blended Noul's logit by (1 without a floor)."""
    blend = read_model_dir(shipped_model_dir()).config.blend
    w = blend.noul if blend is not None else BlendWeights()
    return LOGIT_MAX / (abs(w.logit) * LOGIT_MAX + abs(w.cosine) * COSINE_MAX)


def _scale(rubric: Rubric, row: RuleTrace) -> float:
    q = rubric.questions.get(row.question)
    relates = not isinstance(q, Noul) or (len(set(backtick_refs(q.instructions))) >= 2 or relates_fields(q, ""))
    if relates or row.question in rubric.current_heads:
        return 1.0  # the logit alone, or a head's (its own bound is not measured: unscaled, the safe side)
    return _floor_scale()


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
            out = min(out, abs(_logit(row.probability) - _logit(cut)) * _scale(rubric, row))
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
