"""The heads a rubric stores, and laying them over a judge the rubric asks.

The heads come from a rubric's calibration block (`seams calibrate --heads`, `seams distill`);
what a head is lives in `seams.judges.head`, and the headed judge beside the local judge whose
features it reads (`seams.judges.local.headed`). The rubric lays its heads over a judge through
the judge contract (`Judge.with_heads`): a local model the heads were fitted on gets them, any
other judge is left as it is, and the rubric layer never reaches into the local judge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..judges.base import Judge, JudgeLike, as_judge
from ..judges.head import Head

if TYPE_CHECKING:
    from .rubric import Rubric


def rubric_heads(rubric: Rubric, *, current: bool = False) -> dict[str, Head]:
    """The heads stored in a rubric's calibration block, by question id; with `current`, only
    those whose question is asked as it was when they were fitted (same wording, same
    `asked_alone` view of the state)."""
    return dict(rubric.current_heads if current else rubric.stored_heads)


def with_heads(judge: Judge | JudgeLike, rubric: Rubric) -> Judge:
    """`judge` with the rubric's heads when they were fitted on it; `judge` itself otherwise.

    A rubric without heads, a remote judge, or a local model the heads were not fitted on gets
    the judge back unchanged: no head is applied, and the calibration fitted on the headed judge
    reads as stale for it (`rubric.stale_reasons`, `seams check`). The head of a question whose
    wording or `asked_alone` view changed since the fit is left out.
    """
    judge = as_judge(judge)
    heads = rubric.current_heads
    return judge.with_heads(heads) if heads else judge


def head_stale_reasons(rubric: Rubric, model_id: str | None) -> list[str]:
    """Why the rubric's heads do not apply to the judge whose answers carry `model_id`."""
    if model_id is None:
        return []
    base = model_id.split("+heads:")[0]
    return [f"question {qid!r} has a head fitted on model {h.model!r}; it is never applied to {base!r}"
            for qid, h in rubric.stored_heads.items() if h.model != base]


__all__ = ["head_stale_reasons", "rubric_heads", "with_heads"]
