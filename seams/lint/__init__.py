"""Semantic lint: team conventions asked as rubric questions about the code a change touches.

`lint()` runs rules (rubrics with lint metadata, `rules.py`) over units of code (`units.py`),
deterministic checks first (`checks.py`), the judge for the rest (`engine.py`), and reports
findings as text, JSON, SARIF or GitHub annotations (`output.py`). `seams lint` is its CLI.
"""

from .baseline import Baseline, finding_fingerprint
from .diff import changed_lines, git_root
from .engine import Finding, LintResult, lint
from .output import FORMATS, render
from .rules import SEVERITY_RANK, LintConfig, LintMeta, Rule, find_pyproject, load_rules, read_config
from .units import KINDS, Unit, python_units

__all__ = [
    "FORMATS",
    "KINDS",
    "SEVERITY_RANK",
    "Baseline",
    "Finding",
    "LintConfig",
    "LintMeta",
    "LintResult",
    "Rule",
    "Unit",
    "changed_lines",
    "find_pyproject",
    "finding_fingerprint",
    "git_root",
    "lint",
    "load_rules",
    "python_units",
    "read_config",
    "render",
]
