"""`seams distill`: fit the local model's heads and calibration on a remote judge's answers."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ..errors import InputError
from . import app
from ._common import DirOpt, KeyOpt, console, err_console, errors_to_exit, make_judge, print_json
from .calibrate import CacheOpt, ConcOpt, JsonOpt, NoCacheOpt, QuietOpt, RubricArg, cache_path
from .progress import progress_bar


@app.command()
def distill(
    rubric: RubricArg,
    states: Annotated[Path, typer.Argument(help="Unlabelled states, JSONL: {\"id\": ..., \"state\": ...} a line (id optional).")],
    teacher: Annotated[str, typer.Option(help="The judge to learn from: a System One base URL, 'local', or a local model directory.")],
    teacher_model: Annotated[str | None, typer.Option(help="Model id at a remote teacher (default jev-latest; pin a dated id).")] = None,
    api_key: KeyOpt = None,
    model_dir: DirOpt = None,
    out: Annotated[Path | None, typer.Option(help="Where to write the teacher's answers as a labelled set (default: STATES with .teacher.jsonl).")] = None,
    agreement: Annotated[float, typer.Option(help="Agreement with the teacher the cascade must reach over all decisions; the local model answers as many as it can within it, the rest go to the teacher.")] = 0.95,
    confidence: Annotated[float, typer.Option(help="Confidence of the cut-points' guarantee (1 − δ).")] = 0.95,
    split: Annotated[float, typer.Option(help="Share of states used to fit; the rest is held out to report on.")] = 0.5,
    seed: Annotated[int, typer.Option(help="Seed of the random fit/held-out split.")] = 0,
    cache: CacheOpt = None,
    no_cache: NoCacheOpt = False,
    concurrency: ConcOpt = 8,
    bootstrap: Annotated[int, typer.Option(min=0, help="Bootstrap resamples for the intervals.")] = 1000,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Fit and report, but do not write the rubric.")] = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Ask a teacher about unlabelled states, fit local heads and calibration on its answers, and report agreement and the cascade's local share."""
    from ..calibration.distill import distill as run_distill
    from ..calibration.distill import read_states
    from ..calibration.fit import FitOptions
    from ..calibration.writeback import write_calibration
    from .ask import load_rubric

    with errors_to_exit():
        if not 0 < split < 1:
            raise InputError(f"--split must be within (0, 1), got {split}")
        if not 0 < confidence < 1:
            raise InputError(f"--confidence must be within (0, 1), got {confidence}")
        r = load_rubric(rubric)
        if r.path is None and not dry_run:
            raise InputError(f"rubric {rubric!r} has no file to write into (use a rubric file, or --dry-run)")
        pairs = read_states(states)
        if teacher.startswith(("http://", "https://")) or teacher == "local":
            teach = make_judge(teacher, model=teacher_model, api_key=api_key)
        else:
            teach = make_judge("local", model_dir=Path(teacher))
        if not no_cache:
            from ..judges.cache import CachedJudge

            teach = CachedJudge(teach, cache_path(cache))
        student = make_judge("local", model_dir=model_dir)
        target = out or states.with_name(states.name.removesuffix(".jsonl") + ".teacher.jsonl")
        opts = FitOptions(delta=1 - confidence, split=split, seed=seed, n_boot=bootstrap)
        quiet = quiet or as_json
        # one bar (rich draws one live display at a time): the teacher's pass, then the local model's
        with warnings.catch_warnings(), progress_bar("the teacher, then the local model", quiet=quiet) as bar:
            warnings.simplefilter("ignore")  # the same messages come back as notes
            result = run_distill(r, pairs, teach, student, agreement=agreement, options=opts, concurrency=concurrency,
                                 teacher_progress=bar, progress=bar, labelled_path=target)
        if not dry_run:
            write_calibration(r.path, result.fitted.calibration.block)
        summary = {"rubric": r.path, "written": not dry_run, "labelled": str(target), "states": len(pairs),
                   "teacher_failed": len(result.teacher_errors), "agreement": result.agreement,
                   "cascade": result.cascade, "notes": result.notes}
        if as_json:
            print_json(summary)
            return
        for note in result.notes:
            err_console.print(f"[yellow]note:[/yellow] {note}", highlight=False)
        t = Table(title=f"agreement with the teacher, held out ({result.cascade['n']} states)")
        for col in ("question", "n", "agreement [95% CI]"):
            t.add_column(col)
        for qid, a in result.agreement.items():
            t.add_row(qid, str(a["n"]), f"{a['agreement']:.3f} [{a['agreement_ci'][0]:.3f}, {a['agreement_ci'][1]:.3f}]")
        console.print(t)
        c = result.cascade
        console.print(f"cascade (local with heads → teacher), target agreement {agreement} over all decisions "
                      f"at {confidence:.0%} confidence: "
                      f"{c['local']} of {c['n']} answered locally ({c['local_share']:.1%}), "
                      f"agreement with the teacher {c['agreement']:.3f}", highlight=False)
        console.print(f"teacher's labels: {target}; " + ("dry run, rubric not written" if dry_run
                                                         else f"written into {r.path}"), highlight=False)
