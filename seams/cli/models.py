"""`seams models`: the models a judge can use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from . import app
from ._common import console, errors_to_exit, print_json

if TYPE_CHECKING:
    from ..judges.local.runtime import Machine


@app.command()
def models(
    judge: Annotated[str, typer.Option(help="'local' or the base URL of a System One server.")] = "local",
    api_key: Annotated[str | None, typer.Option(help="Bearer key for a remote server (default: $TYPESAFE_API_KEY).", show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List the shipped local model, or the models a System One server serves.

    For the local model it also prints the machine it runs on (CPU, int8-relevant instruction
    sets, onnxruntime and tokenizers versions), since speed and the arithmetic path depend on them."""
    runtime: Machine | None = None
    with errors_to_exit():
        if judge == "local":
            from ..judges.local import LocalJudge
            from ..judges.local.runtime import machine

            lj = LocalJudge()
            rows = [{"name": lj.model_id, "description": lj.description, "release_date": lj.release_date}]
            runtime = machine()
        else:
            from ..judges.remote import RemoteJudge

            with RemoteJudge(base_url=judge, api_key=api_key) as rj:
                rows = rj.list_models()
    if as_json:
        print_json({"models": rows, **({"machine": runtime.to_dict()} if runtime is not None else {})})
        return
    table = Table(title=f"models ({judge})")
    table.add_column("name", no_wrap=True)  # a model id is copied whole into --model
    table.add_column("description")
    table.add_column("release date", no_wrap=True)
    for m in rows:
        table.add_row(str(m.get("name")), str(m.get("description") or ""), str(m.get("release_date") or ""))
    console.print(table)
    if runtime is not None:
        console.print(runtime.line(), soft_wrap=True, markup=False, highlight=False)
