"""`seams lint`: semantic lint of the code a change touches, for pre-commit and CI.

Exit codes: 0 clean, 1 findings at or above `--fail-on`, 2 a usage or input error (a missing
path, a bad rule file, not a git repository for `--diff`, an unknown revision).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from . import app
from ._common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    FormatChoice,
    JudgeOptions,
    err_console,
    errors_to_exit,
    escape,
)
from .progress import progress_bar

if TYPE_CHECKING:
    from ..judges.base import Judge
    from ..lint import Baseline, LintConfig, LintResult, Rule

#: Where answers are cached by default, under the repository root: unchanged units cost nothing.
DEFAULT_CACHE = Path(".seams") / "lint-cache.sqlite"


@app.command()
def lint(
    paths: Annotated[list[Path] | None, typer.Argument(help="Files or folders to lint (default: the current folder).")] = None,
    diff: Annotated[str | None, typer.Option("--diff", metavar="BASE", help="Judge only units touched since this git revision (e.g. origin/main, HEAD).")] = None,
    fmt: Annotated[FormatChoice, typer.Option("--format", "-f", help="text, json, sarif or github (workflow annotations).")] = FormatChoice.text,
    rules_dir: Annotated[list[Path] | None, typer.Option("--rules", help="A folder of user rules (repeatable); adds to the built-in rules.")] = None,
    judge: Annotated[str | None, typer.Option(help="'local' (the shipped model) or the base URL of a System One server. Default: \\[tool.seams.lint] judge, else local.")] = None,
    model: Annotated[str | None, typer.Option(help="Model id for a remote judge.")] = None,
    api_key: Annotated[str | None, typer.Option(help="Bearer key for a remote judge (default: $TYPESAFE_API_KEY).", show_default=False)] = None,
    model_dir: Annotated[Path | None, typer.Option(help="A local model directory instead of the shipped model (default: $SEAMS_MODEL_DIR).")] = None,
    threads: Annotated[int | None, typer.Option(help="onnxruntime threads for the local model (default: one per core).")] = None,
    no_judge: Annotated[bool, typer.Option("--no-judge", help="Run the deterministic checks only; ask no judge.")] = False,
    fail_on: Annotated[str | None, typer.Option(help="Exit 1 on findings at or above this severity: error, warning or note. Default: \\[tool.seams.lint] fail-on, else error.")] = None,
    baseline: Annotated[Path | None, typer.Option(help="A baseline file: findings it lists are accepted, not reported.")] = None,
    write_baseline: Annotated[Path | None, typer.Option(help="Write every current finding to this baseline file and exit 0.")] = None,
    show_unsure: Annotated[bool, typer.Option("--show-unsure", help="Also report units the judge is unsure about (between a rule's thresholds) as notes.")] = False,
    rule: Annotated[list[str] | None, typer.Option("--rule", "-r", help="Run only this rule id (repeatable).")] = None,
    cache: Annotated[Path | None, typer.Option(help=f"Answer cache (SQLite). Default: \\[tool.seams.lint] cache, else {DEFAULT_CACHE} under the project root.")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not cache answers.")] = False,
    config: Annotated[Path | None, typer.Option(help="The pyproject.toml to read \\[tool.seams.lint] from (default: the nearest one).")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the report to this file instead of stdout.")] = None,
) -> None:
    """Ask the lint rules (rubrics) about functions, methods and classes, or changed hunks.

    Deterministic checks run first; only what they cannot decide goes to the judge.
    """
    code = EXIT_USAGE
    with errors_to_exit():
        _check_options(fail_on, config)
        cwd = Path.cwd()
        cfg, rules = _config_and_rules(config, cwd, rule, rules_dir)
        targets = paths or [cwd]
        root, changed = _root_and_changes(cfg, cwd, targets, diff)
        accepted = _accepted(baseline or cfg.baseline) if write_baseline is None else None
        the_judge = None
        if not no_judge:
            _say_judge_off(rules)
        if not no_judge and any(r.asks_judge for r in rules):
            the_judge = _lint_judge(judge or cfg.judge or "local", model=model, api_key=api_key, model_dir=model_dir,
                                    threads=threads, cache=None if no_cache else cache or cfg.cache or root / DEFAULT_CACHE)
        with progress_bar("judging units") as progress:
            result = _run_showing_warnings(targets, rules, judge=the_judge, root=root, changed=changed,
                                           exclude=cfg.exclude, baseline=accepted, progress=progress,
                                           show_unsure=show_unsure)
        if write_baseline is not None:
            from ..lint import Baseline

            n = Baseline.write(write_baseline, result.findings)
            err_console.print(f"wrote {n} finding(s) to {write_baseline}", highlight=False)
            code = EXIT_OK
        else:
            _write_report(result, fmt.value, root, output)
            code = EXIT_FAILED if result.failing(fail_on or cfg.fail_on or "error") else EXIT_OK
    raise typer.Exit(code)


def _check_options(fail_on: str | None, config: Path | None) -> None:
    from ..lint import SEVERITY_RANK

    if fail_on is not None and fail_on not in SEVERITY_RANK:
        raise _usage(f"--fail-on must be one of {list(SEVERITY_RANK)}, got {fail_on!r}")
    if config is not None and not config.is_file():
        raise _usage(f"no such config file: {config}")


def _config_and_rules(config: Path | None, cwd: Path, rule: list[str] | None,
                      rules_dir: list[Path] | None) -> tuple[LintConfig, list[Rule]]:
    """`[tool.seams.lint]` (the given file or the nearest one) and the rules it leaves enabled."""
    from ..lint import find_pyproject, load_rules, read_config

    cfg = read_config(config or find_pyproject(cwd))
    if rule:
        cfg.select = sorted(set(rule))
    rules = load_rules(dirs=rules_dir or [], config=cfg)
    if not rules:
        raise _usage("no rules to run (all disabled or none selected)")
    return cfg, rules


def _root_and_changes(cfg: LintConfig, cwd: Path, targets: list[Path],
                      diff: str | None) -> tuple[Path, dict[Path, set[int]] | None]:
    """The root finding paths are relative to, and with `--diff` the lines changed since BASE."""
    from ..lint import changed_lines, git_root

    if diff is not None:
        return git_root(cwd), changed_lines(diff, cwd, targets)
    return _repo_root_or(cwd, cfg.root if cfg.path is not None else cwd), None


def _accepted(baseline_path: Path | None) -> Baseline | None:
    from ..lint import Baseline

    return None if baseline_path is None else Baseline.load(baseline_path)


def _say_judge_off(rules: list[Rule]) -> None:
    """One note per rule whose model half is switched off: why, and what still runs."""
    for r in rules:
        if not r.asks_judge:  # the judge is never asked for it
            after = ("its deterministic check still runs" if r.meta.check
                     else "it has no deterministic check, so it finds nothing")
            err_console.print(f"[yellow]note:[/yellow] rule {r.id}: the judge is not asked "
                              f"({escape(r.meta.judge_off or '')}); {after}", highlight=False)


def _lint_judge(spec: str, *, model: str | None, api_key: str | None, model_dir: Path | None, threads: int | None,
                cache: Path | None) -> Judge:
    """The judge the rules ask, behind an answer cache unless `cache` is None."""
    the_judge = JudgeOptions(spec, model, api_key, model_dir).make(threads=threads)
    if cache is None:
        return the_judge
    from ..judges.cache import CachedJudge

    if cache.parent.name == DEFAULT_CACHE.parent.name:
        _ignore_folder(cache.parent)
    return CachedJudge(the_judge, cache)


def _run_showing_warnings(*args: Any, **kwargs: Any) -> LintResult:
    """`seams.lint.lint`, with each distinct warning it raised printed once on stderr."""
    from ..lint import lint as run_lint

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run_lint(*args, **kwargs)
    for w in {str(w.message) for w in caught}:
        err_console.print(f"[yellow]warning:[/yellow] {w}", highlight=False)
    return result


def _write_report(result: LintResult, fmt: str, root: Path, output: Path | None) -> None:
    from ..lint import render

    report = render(result, fmt, root=root)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(report, encoding="utf-8")
    else:
        sys.stdout.write(report)
        sys.stdout.flush()


def _ignore_folder(folder: Path) -> None:
    """Create the default cache folder with a `.gitignore` of `*`, as pytest does for its cache,
    so the answer cache never shows up as an untracked file."""
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / ".gitignore"
    if not marker.exists():
        marker.write_text("# created by seams lint: the answer cache is not for version control\n*\n")


def _repo_root_or(cwd: Path, fallback: Path) -> Path:
    """The git root, so finding paths match what CI shows; outside a repository, `fallback`."""
    from ..errors import InputError
    from ..lint import git_root

    try:
        return git_root(cwd)
    except InputError:
        return fallback


def _usage(message: str) -> Exception:
    from ..errors import InputError

    return InputError(message)
