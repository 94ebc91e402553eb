"""The cut-points a rubric's rules apply: the ones written in the file and the ones fitted.

A reviewer reads `high: 0.6` in the YAML while a fresh calibration block applies another cut, to
calibrated rather than raw probabilities. Everything that shows a rule (`seams ask`, `seams rubric
check`, the HTML reports) lists both, and says which is in force, from this one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..rubric import Rubric
    from ..rubric.calibration import CalibrationBlock


@dataclass(frozen=True)
class CutPoints:
    """One rule's (or one rule's gate's) thresholds: written, fitted, and which apply."""

    rule: str
    #: What the rule reads: a question id, `question=option`, `max(a, b)`, or a Choice's winner.
    reads: str
    written: tuple[float, float]
    #: From the calibration block; None when nothing was fitted for this rule.
    fitted: tuple[float, float] | None
    #: Whether the fitted cut-points (and calibrated probabilities) are the ones in force.
    calibrated: bool

    @property
    def applied(self) -> tuple[float, float]:
        return self.fitted if self.calibrated and self.fitted is not None else self.written

    @property
    def source(self) -> str:
        """`fitted` or `written`: where the applied cut-points come from."""
        return "fitted" if self.calibrated and self.fitted is not None else "written"

    def as_dict(self) -> dict[str, Any]:
        def zones(cut: tuple[float, float] | None) -> dict[str, float] | None:
            return None if cut is None else {"high": cut[0], "low": cut[1]}

        return {"rule": self.rule, "reads": self.reads, "written": zones(self.written), "fitted": zones(self.fitted),
                "applied": self.source}


def fmt_cut(cut: tuple[float, float] | None, *, compact: bool = False) -> str:
    """`high 0.6 / low 0.3` (`0.6 / 0.3` compact, for a table whose header names them); `≥ 0.6`
    when high and low coincide; `—` for none."""
    if cut is None:
        return "—"
    high, low = round(cut[0], 3), round(cut[1], 3)
    if high == low:
        return f"≥ {high:g}"
    return f"{high:g} / {low:g}" if compact else f"high {high:g} / low {low:g}"


def rule_cutpoints(rubric: Rubric, calibrated: bool, calibration: CalibrationBlock | None = None) -> list[CutPoints]:
    """Every rule's cut-points in priority order, a gate as its own row before its rule.

    `calibrated` says whether the calibration applies (present and not stale for the model in
    use); fitted cut-points are listed either way, so a stale fit is still visible.
    `calibration` is a block other than the rubric's own (one just fitted, not yet written).
    """
    cal = calibration if calibration is not None else rubric.calibration
    fitted = cal.threshold_overrides() if cal is not None else {}
    gates = cal.gate_overrides() if cal is not None else {}
    out: list[CutPoints] = []
    for rule in rubric.policy.rules:
        if rule.gate is not None:
            g = rule.gate
            out.append(CutPoints(f"{rule.id} (gate)", g.question, (g.high, g.effective_low), gates.get(rule.id),
                                 calibrated))
        if rule.any is not None:
            reads = f"max({', '.join(rule.any)})"
        elif rule.choice is not None:
            reads = f"{rule.choice} (winner)"
        else:
            reads = f"{rule.question}" + (f"={rule.option}" if rule.option else "")
        out.append(CutPoints(rule.id, reads, (rule.high, rule.effective_low), fitted.get(rule.id), calibrated))
    return out


__all__ = ["CutPoints", "fmt_cut", "rule_cutpoints"]
