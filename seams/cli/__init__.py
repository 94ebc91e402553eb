"""The `seams` command line: thin commands over the library.

Each command group lives in its own module and registers itself on `app` here. Exit codes:
0 ok, 1 a check or decision failed where that was asked for, 2 usage or input error.
"""

from __future__ import annotations

from typing import Annotated

import typer

app = typer.Typer(
    name="seams",
    help="Typed decisions at the seams of AI agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            v = version("seams")
        except PackageNotFoundError:  # a source tree that was never installed
            v = "unknown (not installed)"
        typer.echo(f"seams {v}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", is_eager=True, callback=_version,
                                          help="Print the installed version of seams and exit.")] = False,
) -> None:
    """Typed decisions at the seams of AI agents."""
    from ._common import cli_warnings, fit_consoles

    fit_consoles()
    # Warnings (a stale calibration, a moving model alias) print as one `warning: ...` line on
    # stderr while a command runs, not as Python's two-line form with a source line.
    ctx.with_resource(cli_warnings())


def _register() -> None:
    # Imported for their side effect of adding commands to `app`; each module is small and
    # imports heavy dependencies (server, onnxruntime) only inside its command.
    import importlib

    for name in ("ask", "rubric", "models", "serve", "calibrate", "distill", "lint", "score", "review"):
        try:
            importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise


def main() -> None:
    _register()
    app()


__all__ = ["app", "main"]
