"""`seams rubric check`: static validation of rubric files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..calibration.cutpoints import fmt_cut, rule_cutpoints
from ..errors import RubricError
from . import app
from ._common import EXIT_FAILED, EXIT_USAGE, console, err_console, escape, plural, print_json

rubric_app = typer.Typer(help="Work with rubric files.", no_args_is_help=True)
app.add_typer(rubric_app, name="rubric")


@rubric_app.command("check")
def check(
    files: Annotated[list[Path], typer.Argument(help="Rubric files to validate.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one result per file as JSON.")] = False,
) -> None:
    """Validate rubric files without asking any judge. Exit 1 if any is invalid, 2 if one is missing."""
    from ..rubric import Rubric

    results: list[dict[str, Any]] = []
    missing = invalid = False
    for f in files:
        if not f.is_file():
            missing = True
            results.append({"file": str(f), "ok": False, "error": "no such file"})
            continue
        try:
            r = Rubric.load(f)
        except RubricError as exc:
            invalid = True
            results.append({"file": str(f), "ok": False, "error": str(exc), "line": exc.line,
                            "column": exc.column, "field": exc.field,
                            "errors": [{"message": e.message, "line": e.line, "column": e.column, "field": e.field}
                                       for e in (exc, *exc.others)]})
            continue
        stale = r.stale_reasons(None)
        calibrated = r.calibration is not None and not stale
        results.append({"file": str(f), "ok": True, "name": r.name, "version": r.version, "hash": r.hash,
                        "questions": len(r.questions), "rules": len(r.policy.rules),
                        "calibrated": r.calibration is not None, "stale": stale,
                        "model": r.calibration.model if r.calibration is not None else None,
                        "cutpoints": [c.as_dict() for c in rule_cutpoints(r, calibrated)]})
    if as_json:
        print_json(results)
    else:
        for res in results:
            if res["ok"]:
                cal = f"calibrated on {res['model']}" if res["calibrated"] else "not calibrated"
                if res["stale"]:
                    cal = "calibration stale: " + "; ".join(res["stale"])
                console.print(f"[green]ok[/green]   {escape(res['file'])}: {res['name']} v{res['version']} "
                              f"({plural(res['questions'], 'question')}, {plural(res['rules'], 'rule')}, "
                              f"{escape(cal)}) hash {res['hash']}", highlight=False, soft_wrap=True)
                for c in res["cutpoints"]:
                    console.print("     " + escape(_cut_line(c)), highlight=False, soft_wrap=True)
            else:
                msg = res["error"] if res["error"] != "no such file" else f"{res['file']}: no such file"
                for line in msg.splitlines():  # one line per error, each with its own position
                    err_console.print(f"[red]fail[/red] {escape(line)}", highlight=False)
    if missing:
        raise typer.Exit(EXIT_USAGE)
    if invalid:
        raise typer.Exit(EXIT_FAILED)


def _cut_line(c: dict) -> str:
    """`rule injection (reads injection): written high 0.6 / low 0.3; fitted high 0.71 / low 0.2 (applied)`."""
    def cut(d: dict | None) -> str:
        return fmt_cut(None if d is None else (d["high"], d["low"]))

    written = cut(c["written"]) + (" (applied)" if c["applied"] == "written" else "")
    fitted = "not fitted" if c["fitted"] is None else (
        cut(c["fitted"]) + (" (applied)" if c["applied"] == "fitted" else ""))
    return f"rule {c['rule']} (reads {c['reads']}): written {written}; fitted {fitted}"


@rubric_app.command("list")
def list_builtin() -> None:
    """List the rubrics shipped with seams."""
    from ..rubric import builtin_names

    for name in builtin_names():
        console.print(name, highlight=False)
