"""`seams score`: a rubric over a file of traces, one decision a line, resumable."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Annotated

import typer

from . import app
from ._common import (
    DirOpt,
    EngineChoice,
    JudgeOpt,
    JudgeOptions,
    KeyOpt,
    ModelOpt,
    console,
    errors_to_exit,
    print_json,
)
from .ask import load_rubric
from .calibrate import JsonOpt, QuietOpt, RubricArg
from .progress import progress_bar


@app.command()
def score(
    rubric: RubricArg,
    traces: Annotated[Path, typer.Argument(help="JSONL ({\"id\", \"state\"} a line) or Parquet (id and state columns, or one column per field).")],
    out: Annotated[Path | None, typer.Option(help="Where the decisions go (JSONL; default TRACES.decisions.jsonl). A re-run resumes it.")] = None,
    engine: Annotated[EngineChoice, typer.Option(help="'local' (this process) or 'ray' (a Ray actor pool; pip install seams[ray]).")] = EngineChoice.local,
    workers: Annotated[int | None, typer.Option(min=1, help="Ray: actors in the pool, each loading the judge once (default: one per CPU).")] = None,
    batch_size: Annotated[int, typer.Option(min=1, help="States judged per call (and per Ray task).")] = 64,
    judge: JudgeOpt = "local",
    model: ModelOpt = None,
    api_key: KeyOpt = None,
    model_dir: DirOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Decide every trace not yet in the output; print how many were scored, by outcome."""
    from ..traces import done_ids, read_traces
    from ..traces import score as run

    with errors_to_exit():
        engine_name = engine.value
        r = load_rubric(rubric)
        dest = out if out is not None else traces.with_suffix(".decisions.jsonl")
        # a factory, not a judge: the Ray engine builds one judge inside each worker
        # (a Ray actor holds one CPU, so its local model runs one thread)
        factory = functools.partial(JudgeOptions(judge, model, api_key, model_dir).make,
                                    threads=1 if engine_name == "ray" else None)
        if quiet or as_json:
            total = 0
        else:
            done = done_ids(dest)
            total = sum(1 for t in read_traces(traces) if t.id not in done)
        with progress_bar("scoring", quiet=quiet or as_json) as progress:
            counted = 0

            def advance(k: int) -> None:  # the scorer counts traces a batch wrote; the bar wants done/total
                nonlocal counted
                counted += k
                if progress is not None:
                    progress(counted, total)

            summary = run(r, traces, dest, engine=engine_name, workers=workers, batch_size=batch_size,  # type: ignore[arg-type]
                          judge=factory() if engine_name == "local" else None, judge_factory=factory,
                          progress=advance)
        data = {"out": str(dest), "total": summary.total, "skipped": summary.skipped, "scored": summary.scored,
                "outcomes": summary.outcomes, "items_per_s": round(summary.items_per_s, 1)}
        if as_json:
            print_json(data)
        else:
            shown = ", ".join(f"{k} {v}" for k, v in sorted(summary.outcomes.items())) or "nothing new"
            console.print(f"scored {summary.scored} of {summary.total} traces ({summary.skipped} already in {dest}): "
                          f"{shown}", highlight=False)
