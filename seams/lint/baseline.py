"""Accepting findings: a baseline file for the ones a project already has, and inline comments.

A finding's fingerprint hashes the rule, the file, the unit's qualified name and the unit's text
with each line stripped, never line numbers: code moving down a file keeps its fingerprint, and
an edit to the unit itself makes a new one (changed code is judged afresh). A baseline is a
multiset of fingerprints, so two identical findings need two entries.

An inline comment `# seams: ignore[rule-id, other-id]` (or `# seams: ignore` for every rule)
on a line of the unit, or on the line just above it, suppresses those rules for that unit; any
comment syntax works (`-- seams: ignore[...]` in SQL) since only the text after it is read.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError
from .units import Unit

BASELINE_VERSION = 1
_IGNORE = re.compile(r"seams:\s*ignore(?:\[([^\]]*)\])?")


def finding_fingerprint(rule: str, unit: Unit, detail: str = "") -> str:
    """Stable across line shifts: rule, path, unit name, stripped text, and a detail (the
    message of a deterministic hit, so two hits in one unit stay apart)."""
    body = "\n".join(line.strip() for line in unit.text.splitlines() if line.strip())
    raw = f"{rule}\0{unit.path}\0{unit.name}\0{body}\0{detail}"
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:24]


def suppressed_rules(unit: Unit, file_lines: Sequence[str]) -> set[str] | None:
    """The rule ids an inline comment suppresses for `unit`; None when it suppresses all.

    Looks at the unit's lines and the line above it. An empty set means nothing is suppressed.
    """
    rules: set[str] = set()
    lo = max(1, unit.start - 1)
    for n in range(lo, min(unit.end, len(file_lines)) + 1):
        for m in _IGNORE.finditer(file_lines[n - 1]):
            if m.group(1) is None or not m.group(1).strip():
                return None
            rules.update(r.strip() for r in m.group(1).split(",") if r.strip())
    return rules


def is_suppressed(rule: str, unit: Unit, file_lines: Sequence[str]) -> bool:
    found = suppressed_rules(unit, file_lines)
    return found is None or rule in found


class Baseline:
    """Fingerprints of accepted findings, read from and written to a JSON file."""

    def __init__(self, entries: Iterable[dict[str, Any]] = ()) -> None:
        self.entries = list(entries)
        self._counts = Counter(e["fingerprint"] for e in self.entries)

    @classmethod
    def load(cls, path: Path) -> Baseline:
        """Read a baseline; a missing or malformed file is an `InputError` naming it."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(f"no such baseline file: {path}") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"{path}: not a readable baseline file: {exc}") from None
        if not isinstance(data, dict) or data.get("seams_lint_baseline") != BASELINE_VERSION \
                or not isinstance(data.get("findings"), list):
            raise InputError(f"{path}: not a seams lint baseline (version {BASELINE_VERSION})")
        for i, e in enumerate(data["findings"]):
            if not isinstance(e, dict) or not isinstance(e.get("fingerprint"), str):
                raise InputError(f"{path}: findings[{i}] has no fingerprint")
        return cls(data["findings"])

    def take(self, fp: str) -> bool:
        """Consume one accepted entry for `fp`; False when none is left (a new finding)."""
        if self._counts[fp] > 0:
            self._counts[fp] -= 1
            return True
        return False

    @staticmethod
    def write(path: Path, findings: Iterable[Any]) -> int:
        """Write every finding as accepted, atomically (a crash never leaves half a file)."""
        entries = sorted(
            ({"fingerprint": f.fingerprint, "rule": f.rule, "path": f.path, "unit": f.unit, "lines": f.lines}
             for f in findings),
            key=lambda e: (e["path"], e["rule"], e["unit"], e["fingerprint"]),
        )
        data = {"seams_lint_baseline": BASELINE_VERSION, "findings": entries}
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".baseline-", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
        os.replace(tmp, path)
        return len(entries)


__all__ = ["BASELINE_VERSION", "Baseline", "finding_fingerprint", "is_suppressed", "suppressed_rules"]
