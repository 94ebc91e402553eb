"""Calibration: measure a rubric against labelled data, fit its thresholds, keep them honest.

* `dataset` — labelled sets (JSONL, CSV), validated line by line;
* `run` — a judge over a set, concurrent, cached, resumable;
* `metrics` — accuracy, Brier, ECE, AUROC, κ, … with bootstrap intervals;
* `calibrators` — Platt, isotonic, temperature (scikit-learn estimators);
* `thresholds` — three-zone cut-points from costs or from a target error with a guarantee;
* `fit` / `evaluate` / `check` / `stability` — what `seams calibrate|eval|check|stability` run;
* `writeback` — the fitted block into the rubric file, comments and layout kept;
* `report` — reliability diagrams and an HTML report.

The stored calibration block that the policy applies at decision time lives with the rubric
(`seams.rubric.calibration`, no scikit-learn) and is re-exported here; this package imports the
rubric, never the other way round. The fitting names are imported lazily, so `import
seams.calibration` does not load scikit-learn.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..rubric.calibration import CalibrationBlock, Calibrator, QuestionCalibration, RuleThresholds

_LAZY = {
    "LabelledItem": "dataset", "LabelledSet": "dataset", "LabelledSetError": "dataset", "load_jsonl": "dataset",
    "load_csv": "dataset", "loads_jsonl": "dataset",
    "RunResult": "run", "run_set": "run", "arun_set": "run",
    "Costs": "metrics",
    "PlattCalibrator": "calibrators", "IsotonicCalibrator": "calibrators", "TemperatureCalibrator": "calibrators",
    "CostThresholds": "thresholds", "TargetErrorThresholds": "thresholds", "bayes_thresholds": "thresholds",
    "FitOptions": "fit", "CalibrationResult": "fit", "fit_calibration": "fit",
    "evaluate_set": "evaluate", "check_calibration": "check",
    "write_calibration": "writeback",
}

if TYPE_CHECKING:  # the same names for a type checker, which cannot see through `__getattr__`
    from .calibrators import IsotonicCalibrator, PlattCalibrator, TemperatureCalibrator
    from .check import check_calibration
    from .dataset import LabelledItem, LabelledSet, LabelledSetError, load_csv, load_jsonl, loads_jsonl
    from .evaluate import evaluate_set
    from .fit import CalibrationResult, FitOptions, fit_calibration
    from .metrics import Costs
    from .run import RunResult, arun_set, run_set
    from .thresholds import CostThresholds, TargetErrorThresholds, bayes_thresholds
    from .writeback import write_calibration


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'seams.calibration' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{mod}", __name__), name)


__all__ = [  # noqa: RUF022 - the eager names first, then the lazy ones as _LAZY lists them
    "CalibrationBlock", "Calibrator", "QuestionCalibration", "RuleThresholds",
    "LabelledItem", "LabelledSet", "LabelledSetError", "load_jsonl", "load_csv", "loads_jsonl",
    "RunResult", "run_set", "arun_set", "Costs", "PlattCalibrator", "IsotonicCalibrator", "TemperatureCalibrator",
    "CostThresholds", "TargetErrorThresholds", "bayes_thresholds", "FitOptions", "CalibrationResult",
    "fit_calibration", "evaluate_set", "check_calibration", "write_calibration",
]
