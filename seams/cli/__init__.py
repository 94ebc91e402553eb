"""The `seams` command line: thin commands over the library.

Each command group lives in its own module and registers itself on `app` here. Exit codes:
0 ok, 1 a check or decision failed where that was asked for, 2 usage or input error.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="seams",
    help="Typed decisions at the seams of AI agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register() -> None:
    # Imported for their side effect of adding commands to `app`; each module is small and
    # imports heavy dependencies (server, onnxruntime) only inside its command.
    import importlib

    for name in ("ask", "rubric", "models", "serve", "calibrate", "lint", "score"):
        try:
            importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise


def main() -> None:
    _register()
    app()


__all__ = ["app", "main"]
