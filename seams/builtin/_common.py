"""What the typed seams share: resolving the rubric a seam was given.

A seam often asks the same rubric about several states at once (one per retrieved passage, one
per nearest memory): it calls its decider's `decide_many`, which batches when the judge can
(`Rubric.decide_many`) and, for a `Cascade`, sends only the uncertain states to the strong side.
"""

from __future__ import annotations

from pathlib import Path

from ..rubric import Rubric


def load_rubric(rubric: Rubric | str | Path | None, default: str) -> Rubric:
    """The rubric a seam was given (`Rubric.resolve`: an object, a path or a built-in name); the
    seam's own built-in when None."""
    return Rubric.resolve(default if rubric is None else rubric)


__all__ = ["load_rubric"]
