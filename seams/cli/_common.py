"""Pieces the CLI commands share: building a judge, reading a state, reporting errors."""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from ..errors import InputError, JudgeError, SeamsError
from ..wording import plural

console = Console()
# Errors are never wrapped (a path or a message split over lines is hard to grep).
err_console = Console(stderr=True, soft_wrap=True)
#: The width of output that goes to a pipe or a file (a CI log): wide enough that no line is cut
#: or wrapped; a table still takes only the width its cells need.
PIPE_WIDTH = 10_000


def fit_consoles() -> None:
    """Size the consoles for where they write: a terminal's own width; on a pipe or a file, no
    wrapping (rich would wrap at 80 columns and split a CI log line in two). `COLUMNS`, when set,
    wins, as it does for rich."""
    for c in (console, err_console):
        wide = not c.is_terminal and "COLUMNS" not in os.environ
        c.width = PIPE_WIDTH if wide else None  # type: ignore[assignment]  # None: measure the terminal


def show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                 file: Any = None, line: str | None = None) -> None:
    """`warnings.showwarning` for the CLI: one line, `warning: ...`, without Python's source line."""
    err_console.print(f"[yellow]warning:[/yellow] {escape(str(message))}", highlight=False)


@contextmanager
def cli_warnings() -> Iterator[None]:
    """Warnings raised while a command runs print as `warning: ...` lines on stderr."""
    saved = warnings.showwarning
    warnings.showwarning = show_warning
    try:
        yield
    finally:
        warnings.showwarning = saved

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
#: The judge failed (unreachable, a refused key, a broken answer): never "ok", and not a "no"
#: either, so scripts can tell a judge that could not answer from a decision that was negative.
EXIT_JUDGE = 3


# The judge options, declared once (`JudgeOptions` below holds them); a command whose help says
# more of one (`seams ask`, `seams lint`) declares its own text.
JudgeOpt = Annotated[str, typer.Option(help="'local' (the shipped model), 'local-once' (it, reading the state once) or the base URL of a System One server.")]
ModelOpt = Annotated[str | None, typer.Option(help="Model id for a remote judge (default: $TYPESAFE_DEFAULT_MODEL, else jev-latest; pin a dated id to calibrate).")]
KeyOpt = Annotated[str | None, typer.Option(help="Bearer key for a remote judge (default: $TYPESAFE_API_KEY).", show_default=False)]
DirOpt = Annotated[Path | None, typer.Option(help="A local model directory instead of the shipped model (default: $SEAMS_MODEL_DIR).")]


# Choices, as typer checks them (the help lists them; a value outside is a usage error, exit 2).
# Each mirrors the library's own list, which tests/test_cli.py keeps equal.


class CalibratorChoice(str, Enum):
    """`seams calibrate --calibrator` (`seams.calibration.calibrators.CALIBRATOR_METHODS`)."""

    auto = "auto"
    platt = "platt"
    isotonic = "isotonic"
    none = "none"


class EngineChoice(str, Enum):
    """`seams score --engine`."""

    local = "local"
    ray = "ray"


class FormatChoice(str, Enum):
    """`seams lint --format` (`seams.lint.FORMATS`)."""

    text = "text"
    json = "json"
    sarif = "sarif"
    github = "github"


class LogLevelChoice(str, Enum):
    """`seams serve --log-level` (uvicorn's levels)."""

    critical = "critical"
    error = "error"
    warning = "warning"
    info = "info"
    debug = "debug"


@dataclass(frozen=True)
class JudgeOptions:
    """The judge options every command that asks a judge takes (`--judge`, `--model`,
    `--api-key`, `--model-dir`), in one type: `make()` builds the judge they name."""

    judge: str = "local"
    model: str | None = None
    api_key: str | None = None
    model_dir: Path | None = None

    def make(self, *, threads: int | None = None, batch_size: int | None = None) -> Any:
        return make_judge(self.judge, model=self.model, api_key=self.api_key, model_dir=self.model_dir,
                          threads=threads, batch_size=batch_size)


def make_judge(judge: str, *, model: str | None = None, api_key: str | None = None,
               model_dir: Path | None = None, threads: int | None = None, batch_size: int | None = None):
    """`local` (the shipped model, or `model_dir`), `local-once` (the same model reading the state
    once: `LocalJudge(reading="once")`) or a System One base URL.

    `batch_size` is the local judge's pairs per model run (None: its default, one pair a run for
    the shipped batch-dependent int8 model, whose answers move with their batch mates)."""
    if is_local(judge):
        from ..judges.local import LocalJudge

        kwargs: dict[str, Any] = {"reading": "once"} if judge == "local-once" else {}
        if threads is not None:
            kwargs["intra_op_threads"] = threads
        if batch_size is not None:
            kwargs["max_batch_size"] = batch_size
        return LocalJudge(model_dir, **kwargs) if model_dir else LocalJudge(**kwargs)
    if judge.startswith(("http://", "https://")):
        from ..judges.remote import RemoteJudge

        return RemoteJudge(model, base_url=judge, api_key=api_key)
    raise InputError(f"--judge must be 'local', 'local-once' or an http(s) URL of a System One server, got {judge!r}")


def is_local(judge: str) -> bool:
    """Whether `--judge` names the local model (in either reading)."""
    return judge in ("local", "local-once")


def read_state(text: str | None, file: Path | None, as_json: bool) -> Any:
    """The state from an argument, a file or stdin; parsed as JSON when asked or when the file is .json."""
    if text is not None and file is not None:
        raise InputError("give the state as --state or --state-file, not both")
    if file is not None:
        if str(file) == "-":
            raw = sys.stdin.read()
        else:
            try:
                raw = file.read_text(encoding="utf-8")
            except OSError as exc:
                raise InputError(f"cannot read state file {file}: {exc.strerror or exc}") from None
        as_json = as_json or file.suffix == ".json"
    elif text is not None:
        raw = sys.stdin.read() if text == "-" else text
    elif not sys.stdin.isatty():
        raw = sys.stdin.read()
        if not raw.strip():
            raise InputError("no state: stdin was empty; give --state TEXT, --state-file PATH, or pipe a state in")
    else:
        raise InputError("no state: give --state TEXT, --state-file PATH, or pipe it on stdin")
    if not as_json:
        return raw.rstrip("\n") if raw.endswith("\n") else raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(f"state is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None


@contextmanager
def errors_to_exit(judge_exit: int = EXIT_JUDGE) -> Iterator[None]:
    """Map seams errors to a message on stderr and an exit code (2 input, 3 judge failure)."""
    try:
        yield
    except InputError as exc:
        err_console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
        raise typer.Exit(EXIT_USAGE) from None
    except JudgeError as exc:
        err_console.print(f"[red]judge failed:[/red] {type(exc).__name__}: {escape(str(exc))}", highlight=False)
        raise typer.Exit(judge_exit) from None
    except SeamsError as exc:
        err_console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
        raise typer.Exit(EXIT_USAGE) from None


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def fmt_p(p: float | None) -> str:
    return "—" if p is None else f"{p:.3f}"


__all__ = [
    "EXIT_FAILED",
    "EXIT_JUDGE",
    "EXIT_OK",
    "EXIT_USAGE",
    "CalibratorChoice",
    "DirOpt",
    "EngineChoice",
    "FormatChoice",
    "JudgeOpt",
    "JudgeOptions",
    "KeyOpt",
    "LogLevelChoice",
    "ModelOpt",
    "cli_warnings",
    "console",
    "err_console",
    "errors_to_exit",
    "escape",
    "fit_consoles",
    "fmt_p",
    "make_judge",
    "plural",
    "print_json",
    "read_state",
]
