"""Rubrics: declarative files holding a seam's questions, policy and calibration."""

from .rubric import CalibrationWarning, Rubric, builtin_names, builtin_path, fingerprint, question_fingerprint
from .schema import RubricSpec, StateField, StateSpec

__all__ = [
    "CalibrationWarning",
    "Rubric",
    "RubricSpec",
    "StateField",
    "StateSpec",
    "builtin_names",
    "builtin_path",
    "fingerprint",
    "question_fingerprint",
]
