"""Moving model aliases (`jev-latest`, `*-preview`): model ids whose model can change unannounced.

Pure string rules, with no client behind them, so the rubric can warn about an alias without
loading the remote judge (httpx, zstandard).
"""

from __future__ import annotations

import re
import warnings

from ..errors import MovingAliasWarning

_MOVING = re.compile(r"(^|[-_.])(latest|preview|beta|nightly)$")


def is_moving_alias(model: str) -> bool:
    """Whether a model id names a moving target (`jev-latest`, `~typesafe/jev-latest`, `*-preview`).

    The model behind such an alias can change without notice, so thresholds calibrated on it
    can go stale silently; pin a dated id (`jev-1.13.0`) for calibrated rubrics.
    """
    name = model.strip().rsplit("/", 1)[-1].lower()
    return bool(_MOVING.search(name))


def warn_if_moving_alias(model: str, *, rubric: str | None = None, stacklevel: int = 2) -> bool:
    """Emit a `MovingAliasWarning` when a calibrated rubric runs on a moving alias; return whether it did."""
    if not is_moving_alias(model):
        return False
    what = f"calibrated rubric {rubric!r}" if rubric else "a calibrated rubric"
    warnings.warn(
        f"{what} runs on the moving alias {model!r}: the model behind it can change under the fitted "
        f"thresholds. Pin a dated model id (e.g. 'jev-1.13.0') to keep the calibration valid.",
        MovingAliasWarning,
        stacklevel=stacklevel + 1,
    )
    return True


__all__ = ["is_moving_alias", "warn_if_moving_alias"]
