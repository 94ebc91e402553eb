"""What the typed seams share: resolving the rubric a seam was given.

A seam often asks the same rubric about several states at once (one per retrieved passage, one
per nearest memory): it calls its decider's `decide_many`, which batches when the judge can
(`Rubric.decide_many`) and, for a `Cascade`, sends only the uncertain states to the strong side.
"""

from __future__ import annotations

from pathlib import Path

from ..rubric import Rubric


def load_rubric(rubric: Rubric | str | Path | None, default: str) -> Rubric:
    """A rubric given as an object, a built-in name or a path; the seam's built-in when None."""
    if rubric is None:
        return Rubric.builtin(default)
    if isinstance(rubric, Rubric):
        return rubric
    text = str(rubric)
    if text.endswith((".yaml", ".yml")):
        return Rubric.load(text)
    return Rubric.builtin(text)


__all__ = ["load_rubric"]
