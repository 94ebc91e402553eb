"""The lint run: files → units → deterministic checks → the judge → findings.

For every file a rule applies to, the engine splits the file into units (`units.py`), keeps
only the units a diff touched when there is one (`diff.py`), drops units an inline comment
suppresses, runs each rule's deterministic check (`checks.py`) and sends to the judge only the
units no check was sure about and that pass the rule's prefilter. All units of one rule go to
the judge together (`Rubric.decide_many`: one `ask_many`), so a local model batches them.

A rule's rubric decides each unit: an outcome of kind `refuse` is a finding at the rule's
severity; one of kind `review` (the band between the thresholds: the judge is unsure) is a
`note`; a failing judge becomes the rubric's `on_error` outcome, which is never a pass.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..decision import Decision
from ..errors import InputError, StateError
from ..judges.base import as_judge
from .baseline import Baseline, finding_fingerprint, is_suppressed
from .checks import CHECKS
from .rules import SEVERITY_RANK, Rule, glob_match
from .units import Unit, block_units, hunk_units, python_units, split_lines

if TYPE_CHECKING:
    from ..judges.base import Judge

#: Folders never walked into: virtual environments, caches, build output, VCS metadata.
SKIP_DIRS = {"node_modules", "__pycache__", "build", "dist", "site-packages", "venv", ".venv"}
#: Files larger than this are not read (generated or vendored code, data files).
MAX_FILE_BYTES = 1_000_000
#: States per `ask_many` call: large enough for a local model to batch well, small enough for
#: progress to move.
BATCH_STATES = 32

Status = Literal["flag", "review", "error"]


@dataclass(frozen=True)
class Finding:
    """One finding: which rule, where, how sure, against which threshold, and why."""

    rule: str
    severity: str
    path: str
    start: int
    end: int
    message: str
    unit: str
    kind: str
    source: Literal["check", "judge"]
    status: Status
    probability: float | None
    threshold: float | None
    fingerprint: str
    model: str | None = None
    zone: str | None = None

    @property
    def lines(self) -> str:
        return f"{self.start}" if self.start == self.end else f"{self.start}-{self.end}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class LintResult:
    """Everything a run found, with the counts a report needs."""

    findings: list[Finding]
    rules: list[Rule]
    baselined: list[Finding] = field(default_factory=list)
    #: Units the judge was unsure about (between a rule's thresholds), when not reported.
    unsure: list[Finding] = field(default_factory=list)
    suppressed: int = 0
    files: int = 0
    units: int = 0
    checked: int = 0
    judged: int = 0
    model: str | None = None
    elapsed_s: float = 0.0

    def failing(self, fail_on: str) -> list[Finding]:
        """The findings at or above `fail_on` (error > warning > note)."""
        if fail_on not in SEVERITY_RANK:
            raise InputError(f"--fail-on must be one of {list(SEVERITY_RANK)}, got {fail_on!r}")
        cut = SEVERITY_RANK[fail_on]
        return [f for f in self.findings if SEVERITY_RANK[f.severity] >= cut]


@dataclass
class _Job:
    rule: Rule
    unit: Unit


Progress = Callable[[int, int], None]


def lint(
    paths: Sequence[Path],
    rules: Sequence[Rule],
    *,
    judge: Judge | None,
    root: Path,
    changed: dict[Path, set[int]] | None = None,
    exclude: Sequence[str] = (),
    baseline: Baseline | None = None,
    progress: Progress | None = None,
    show_unsure: bool = False,
) -> LintResult:
    """Lint `paths` (files or folders) with `rules`.

    Parameters
    ----------
    judge
        Asked about every unit that no deterministic check decided; None runs the checks only.
    root
        Paths in findings are relative to it (the repository root, so SARIF and annotations
        point at the right file).
    changed
        Absolute path → changed lines (from `diff.changed_lines`); only files in it, and only
        units whose lines it touches, are linted. None lints everything under `paths`.
    exclude
        Globs of relative paths never linted.
    show_unsure
        Report units the judge was unsure about (the band between a rule's thresholds) as
        `note` findings. Off by default: on a weak judge the band can hold most units, and a
        pull request should not drown in them; they are counted in `unsure` either way.
    """
    started = time.perf_counter()
    root = root.resolve()
    files = collect_files(paths, root, rules, exclude, changed)
    judge = as_judge(judge) if judge is not None else None
    model = judge.model_id if judge is not None else None
    result = LintResult(findings=[], rules=list(rules), model=model)
    jobs: list[_Job] = []
    found: list[Finding] = []
    for abs_path, rel in files:
        text = _read(abs_path)
        if text is None:
            continue
        result.files += 1
        file_rules = [r for r in rules if r.applies_to_file(rel)]
        kinds = sorted({k for r in file_rules for k in r.meta.kinds})
        lines = split_lines(text)
        touched = changed.get(abs_path) if changed is not None else None
        for unit in file_units(rel, text, kinds, touched):
            result.units += 1
            for rule in file_rules:
                if unit.kind not in rule.meta.kinds:
                    continue
                if is_suppressed(rule.id, unit, lines):
                    result.suppressed += 1
                    continue
                hits = CHECKS[rule.meta.check](unit) if rule.meta.check else []
                if hits:
                    result.checked += len(hits)
                    for h in hits:
                        found.append(Finding(
                            rule=rule.id, severity=rule.severity, path=rel, start=h.line, end=h.end_line,
                            message=f"{rule.message} ({h.message})", unit=unit.name, kind=unit.kind,
                            source="check", status="flag", probability=1.0, threshold=None,
                            fingerprint=finding_fingerprint(rule.id, unit, h.message),
                        ))
                    continue
                if judge is not None and rule.wants(unit.text):
                    jobs.append(_Job(rule, unit))
    if judge is not None and jobs:
        found.extend(_judge_all(jobs, judge, progress))
        result.judged = len(jobs)
    found.sort(key=lambda f: (f.path, f.start, f.rule, f.end))
    for f in found:
        if f.status == "review" and not show_unsure:
            result.unsure.append(f)
        elif baseline is not None and baseline.take(f.fingerprint):
            result.baselined.append(f)
        else:
            result.findings.append(f)
    result.elapsed_s = time.perf_counter() - started
    return result


def file_units(rel: str, text: str, kinds: Sequence[str], touched: set[int] | None) -> list[Unit]:
    """The units of one file of the requested kinds; only those `touched` lines hit, if given."""
    if rel.endswith(".py"):
        units = python_units(rel, text, kinds)
    elif "hunk" in kinds:
        units = hunk_units(rel, text, touched) if touched is not None else block_units(rel, text)
    else:
        units = []
    if touched is not None:
        units = [u for u in units if u.touched_by(touched)]
    return units


def _judge_all(jobs: list[_Job], judge: Judge, progress: Progress | None) -> list[Finding]:
    by_rule: dict[str, list[_Job]] = {}
    for job in jobs:
        by_rule.setdefault(job.rule.id, []).append(job)
    out: list[Finding] = []
    done = 0
    for group in by_rule.values():
        for i in range(0, len(group), BATCH_STATES):
            chunk = group[i : i + BATCH_STATES]
            for job, decision in zip(chunk, _decide_batch(chunk, judge)):
                f = _finding(job, decision)
                if f is not None:
                    out.append(f)
            done += len(chunk)
            if progress is not None:
                progress(done, len(jobs))
    return out


def _decide_batch(chunk: list[_Job], judge: Judge) -> list[Decision | str]:
    """Decisions for one rule's units: one batched call when the judge can, else one by one.

    A judge error in a batch is retried unit by unit, so each unit gets its own decision
    (the rubric's `on_error` outcome for the ones that still fail). A unit the judge refuses as
    input (over its token budget) comes back as the reason, and is reported as not judged.
    """
    rubric = chunk[0].rule.rubric
    states = [job.rule.state_for(job.unit.state()) for job in chunk]
    decided = rubric.decide_many(states, judge, return_exceptions=True)
    return [str(d) if isinstance(d, StateError) else d for d in decided]


def _finding(job: _Job, d: Decision | str) -> Finding | None:
    rule, unit = job.rule, job.unit
    if isinstance(d, str):
        return Finding(
            rule=rule.id, severity="note", path=unit.path, start=unit.start, end=unit.end,
            message=f"{rule.message} (not judged: {d})", unit=unit.name, kind=unit.kind, source="judge",
            status="error", probability=None, threshold=None, fingerprint=finding_fingerprint(rule.id, unit),
        )
    if d.kind == "act":
        return None
    if d.error is not None:
        status: Status = "error"
        message = f"{rule.message} (the judge failed, so this is not a pass: {d.error})"
        severity = rule.severity
    elif d.kind == "review":
        status, severity = "review", "note"
        message = f"{rule.message} (the judge is unsure: between the thresholds)"
    else:
        status, severity, message = "flag", rule.severity, rule.message
    return Finding(
        rule=rule.id, severity=severity, path=unit.path, start=unit.start, end=unit.end, message=message,
        unit=unit.name, kind=unit.kind, source="judge", status=status, probability=d.probability,
        threshold=d.threshold, fingerprint=finding_fingerprint(rule.id, unit), model=d.model, zone=d.zone,
    )


# --------------------------------------------------------------------------- files


def collect_files(
    paths: Sequence[Path], root: Path, rules: Sequence[Rule], exclude: Sequence[str],
    changed: dict[Path, set[int]] | None,
) -> list[tuple[Path, str]]:
    """(absolute path, path relative to root) of every file some rule applies to, sorted.

    A path that does not exist is an `InputError`; folders are walked, skipping hidden folders
    and `SKIP_DIRS`. With `changed`, only changed files under `paths` count.
    """
    roots = []
    for p in paths:
        ap = Path(p).resolve()
        if not ap.exists():
            raise InputError(f"no such file or folder: {p}")
        roots.append(ap)
    seen: dict[Path, str] = {}

    def consider(ap: Path) -> None:
        rel = _rel(ap, root)
        if any(glob_match(g, rel) for g in exclude):
            return
        if any(r.applies_to_file(rel) for r in rules):
            seen[ap] = rel

    if changed is not None:
        for ap in changed:
            if ap.is_file() and any(ap == r or r in ap.parents for r in roots):
                consider(ap)
    else:
        for r in roots:
            if r.is_file():
                consider(r)
                continue
            for dirpath, dirnames, filenames in os.walk(r):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS
                                     and not d.endswith(".egg-info"))
                for name in sorted(filenames):
                    consider(Path(dirpath) / name)
    return sorted(((ap, rel) for ap, rel in seen.items()), key=lambda t: t[1])


def _rel(ap: Path, root: Path) -> str:
    try:
        return ap.relative_to(root).as_posix()
    except ValueError:
        return ap.as_posix()


def _read(path: Path) -> str | None:
    """The file's text; None for a file too large, unreadable, or not UTF-8 text."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8-sig")  # a BOM is not part of the code (ast rejects it)
    except UnicodeDecodeError:
        return None


__all__ = ["BATCH_STATES", "Finding", "LintResult", "collect_files", "file_units", "lint"]
