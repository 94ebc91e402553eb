"""Reporting findings: text for people, JSON for machines, SARIF 2.1.0 for code scanning, and
GitHub Actions workflow commands for annotations on a pull request.

Every format names, for each finding, the rule, the file and lines, the probability and the
threshold it crossed (a deterministic check is certain: probability 1, no threshold).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from ..wording import plural
from .engine import Finding, LintResult

FORMATS = ("text", "json", "sarif", "github")
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
#: SARIF and GitHub levels for a seams severity.
_SARIF_LEVEL = {"error": "error", "warning": "warning", "note": "note"}
_GITHUB_LEVEL = {"error": "error", "warning": "warning", "note": "notice"}


def render(result: LintResult, fmt: str, *, root: Path | None = None) -> str:
    """The report in `fmt` (one of `FORMATS`), ending with a newline."""
    if fmt == "text":
        return render_text(result)
    if fmt == "json":
        return json.dumps(to_json(result), indent=2, ensure_ascii=False) + "\n"
    if fmt == "sarif":
        return json.dumps(to_sarif(result, root=root), indent=2, ensure_ascii=False) + "\n"
    if fmt == "github":
        return render_github(result)
    raise ValueError(f"unknown format {fmt!r}; known: {FORMATS}")


def _evidence(f: Finding) -> str:
    if f.source == "check":
        return "certain: deterministic check"
    if f.probability is None:
        return "not judged"
    cut = "" if f.threshold is None else (f" ≥ {f.threshold:.2f}" if f.probability >= f.threshold
                                          else f" < {f.threshold:.2f}")
    return f"p={f.probability:.2f}{cut}"


def summary(result: LintResult) -> dict[str, Any]:
    by_sev = Counter(f.severity for f in result.findings)
    return {
        "findings": len(result.findings),
        "by_severity": {s: by_sev.get(s, 0) for s in ("error", "warning", "note")},
        "files": result.files,
        "units": result.units,
        "judged": result.judged,
        "checked": result.checked,
        "unsure": len(result.unsure),
        "suppressed": result.suppressed,
        "baselined": len(result.baselined),
        "model": result.model,
        "elapsed_s": round(result.elapsed_s, 3),
    }


def render_text(result: LintResult) -> str:
    lines = []
    for f in result.findings:
        lines.append(f"{f.path}:{f.lines}: {f.severity} [{f.rule}] {f.message} — {f.unit} ({_evidence(f)})")
    s = summary(result)
    sev = ", ".join(f"{n} {k}" for k, n in s["by_severity"].items() if n)
    head = plural(s["findings"], "finding") + (f" ({sev})" if sev else "")
    judge = f"{s['judged']} asked of judge {result.model}" if result.model else "no judge asked (checks only)"
    lines.append(
        f"{head} in {plural(s['files'], 'file')}, {plural(s['units'], 'unit')}; {judge}, "
        f"{s['checked']} decided by checks; {s['unsure']} unsure (not shown; --show-unsure lists them); "
        f"{s['suppressed']} suppressed inline, {s['baselined']} accepted by the baseline; {s['elapsed_s']:.1f}s"
    )
    return "\n".join(lines) + "\n"


def _rule_info(result: LintResult) -> list[dict[str, Any]]:
    return [
        {
            "id": r.id,
            "severity": r.severity,
            "message": r.message,
            "rubric": r.rubric.name,
            "rubric_hash": r.rubric.hash,
            "calibrated": r.rubric.calibration is not None,
            "source": r.source,
        }
        for r in result.rules
    ]


def to_json(result: LintResult) -> dict[str, Any]:
    return {
        "tool": "seams lint",
        "version": 1,
        "summary": summary(result),
        "findings": [f.to_dict() for f in result.findings],
        "rules": _rule_info(result),
    }


def to_sarif(result: LintResult, *, root: Path | None = None) -> dict[str, Any]:
    """A SARIF 2.1.0 log with one run; paths relative to `%SRCROOT%` (the repository root)."""
    from ..version import __version__

    rules = sorted(result.rules, key=lambda r: r.id)
    index = {r.id: i for i, r in enumerate(rules)}
    driver: dict[str, Any] = {
        "name": "seams-lint",
        "semanticVersion": __version__,
        "version": __version__,
        "rules": [
            {
                "id": r.id,
                "name": r.id.replace("-", " ").title().replace(" ", ""),
                "shortDescription": {"text": r.message},
                "fullDescription": {"text": r.rubric.spec.description or r.message},
                "defaultConfiguration": {"level": _SARIF_LEVEL[r.severity]},
                "properties": {"rubric": r.rubric.name, "rubricHash": r.rubric.hash,
                               "calibrated": r.rubric.calibration is not None, "tags": ["seams", "semantic-lint"]},
            }
            for r in rules
        ],
    }
    results = []
    for f in result.findings:
        res: dict[str, Any] = {
            "ruleId": f.rule,
            "level": _SARIF_LEVEL[f.severity],
            "message": {"text": f"{f.message} ({_evidence(f)})"},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": f.path, "uriBaseId": "%SRCROOT%"},
                        "region": {"startLine": f.start, "endLine": f.end},
                    },
                    "logicalLocations": [{"fullyQualifiedName": f.unit, "kind": _logical_kind(f.kind)}],
                }
            ],
            "partialFingerprints": {"seamsLintFingerprint/v1": f.fingerprint},
            "properties": {
                "probability": f.probability,
                "threshold": f.threshold,
                "source": f.source,
                "status": f.status,
                "model": f.model,
            },
        }
        if f.rule in index:
            res["ruleIndex"] = index[f.rule]
        results.append(res)
    run: dict[str, Any] = {
        "tool": {"driver": driver},
        "results": results,
        "columnKind": "unicodeCodePoints",
        "invocations": [{"executionSuccessful": True}],
        "properties": {k: v for k, v in summary(result).items() if k != "by_severity"},
    }
    if root is not None:
        run["originalUriBaseIds"] = {"%SRCROOT%": {"uri": root.resolve().as_uri().rstrip("/") + "/"}}
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def _logical_kind(kind: str) -> str:
    return {"function": "function", "method": "member", "class": "type", "module": "module"}.get(kind, "namespace")


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(result: LintResult) -> str:
    """One `::error file=...,line=...::message` workflow command a finding, then a summary."""
    out = []
    for f in result.findings:
        props = ",".join([
            f"file={_escape_prop(f.path)}",
            f"line={f.start}",
            f"endLine={f.end}",
            f"title={_escape_prop(f'seams lint: {f.rule}')}",
        ])
        msg = f"{f.message} — {f.unit} ({_evidence(f)})"
        out.append(f"::{_GITHUB_LEVEL[f.severity]} {props}::{_escape_data(msg)}")
    s = summary(result)
    out.append(f"seams lint: {plural(s['findings'], 'finding')}, {plural(s['judged'], 'unit')} judged, "
               f"{s['checked']} by checks")
    return "\n".join(out) + "\n"


__all__ = ["FORMATS", "SARIF_SCHEMA", "render", "render_github", "render_text", "summary", "to_json", "to_sarif"]
