"""`seams eval`, `seams calibrate`, `seams check`, `seams stability`: rubrics against labelled data."""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from ..calibration.cutpoints import fmt_cut, rule_cutpoints
from ..errors import InputError
from . import app
from ._common import (
    EXIT_FAILED,
    CalibratorChoice,
    DirOpt,
    JudgeOpt,
    JudgeOptions,
    KeyOpt,
    ModelOpt,
    console,
    err_console,
    errors_to_exit,
    make_judge,
    plural,
    print_json,
)
from .progress import progress_bar

if TYPE_CHECKING:
    from ..calibration.fit import CalibrationResult, FitOptions
    from ..rubric import Rubric

RubricArg = Annotated[str, typer.Argument(help="A rubric file or built-in rubric name.")]
DataArg = Annotated[Path, typer.Argument(help="The labelled set: JSONL (one item a line), or CSV with --columns.")]
CacheOpt = Annotated[Path | None, typer.Option(help="SQLite answer cache: a re-run costs nothing, an interrupted run resumes. Default: $SEAMS_CACHE or ~/.cache/seams/answers.sqlite.")]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Ask the judge for every item, caching nothing.")]
ConcOpt = Annotated[int, typer.Option(min=1, help="Requests in flight at once for a remote judge.")]
ColumnsOpt = Annotated[str | None, typer.Option(help="CSV column mapping: id=COL,state=COL (or COL1+COL2),QID=COL.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print a machine-readable JSON object.")]
QuietOpt = Annotated[bool, typer.Option(
    "--quiet", "-q", help="No progress (a bar on a terminal, a line per tenth of the work on a pipe or in CI).")]


def cache_path(cache: Path | None) -> Path:
    if cache is not None:
        return cache
    env = os.environ.get("SEAMS_CACHE")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "seams" / "answers.sqlite"


def _judge(options: JudgeOptions, cache: Path | None, no_cache: bool) -> Any:
    """The judge to run, cached. The rubric lays its fitted heads over it where they were fitted
    on it (`Rubric.asking`, inside the cache: the cache keeps the headed answers)."""
    j = options.make()
    if no_cache:
        return j
    from ..judges.cache import CachedJudge

    return CachedJudge(j, cache_path(cache))


def _load(rubric: str | None, data: Path, columns: str | None):
    from ..calibration.dataset import load
    from .ask import load_rubric

    r = load_rubric(rubric) if rubric is not None else None
    ds = load(data, r.questions if r is not None else None, columns=columns)
    return r, ds


def _run(ds: Any, j: Any, r: Any, concurrency: int, quiet: bool):
    from ..calibration.run import run_set

    with progress_bar("judging", quiet=quiet) as progress:
        res = run_set(ds, j, concurrency=concurrency, progress=progress, rubric=r)
    if not res.answers:
        first = next(iter(res.errors.items()), ("", "no items"))
        raise InputError(f"the judge answered none of the {len(ds)} items (first error: {first[0]}: {first[1]})")
    if res.errors:
        err_console.print(f"[yellow]{plural(len(res.errors), 'item')} failed to judge and are left out; first: "
                          f"{next(iter(res.errors.items()))}[/yellow]", highlight=False)
    return res


def _fmt(m: dict[str, Any], key: str) -> str:
    v = m.get(key)
    if v is None:
        return "—"
    if isinstance(v, int):
        return str(v)
    ci = m.get(f"{key}_ci")
    return f"{v:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci and None not in ci else "")


def _question_table(rows: dict[str, dict[str, Any]]) -> Table:
    # No title: a title wraps to the table's width and would cut the model id; the caller prints
    # it as a line of its own.
    t = Table()
    for col in ("question", "type", "n", "accuracy", "brier", "ece", "auroc / top1 / mae", "kappa"):
        t.add_column(col)
    for qid, m in rows.items():
        kind = m.get("type", "")
        third = _fmt(m, "auroc") if "auroc" in m else _fmt(m, "top1") if "top1" in m else _fmt(m, "mae")
        t.add_row(qid, kind, str(m.get("n")), _fmt(m, "accuracy"), _fmt(m, "brier"), _fmt(m, "ece"), third,
                  _fmt(m, "kappa"))
    return t


# --------------------------------------------------------------------------- eval


@app.command("eval")
def eval_(
    rubric: Annotated[str, typer.Argument(help="A rubric file or built-in name; '-' to take the questions from the data's lines.")],
    data: DataArg,
    judge: JudgeOpt = "local",
    model: ModelOpt = None,
    api_key: KeyOpt = None,
    model_dir: DirOpt = None,
    cache: CacheOpt = None,
    no_cache: NoCacheOpt = False,
    concurrency: ConcOpt = 8,
    columns: ColumnsOpt = None,
    report: Annotated[Path | None, typer.Option(help="Write an HTML report with reliability diagrams into this folder.")] = None,
    bootstrap: Annotated[int, typer.Option(min=0, help="Bootstrap resamples for the intervals (0: none).")] = 1000,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Measure a judge (and the rubric's policy) against a labelled set: metrics only, nothing is written."""
    from ..calibration.evaluate import evaluate_set
    from ..calibration.extract import question_data

    with errors_to_exit():
        r, ds = _load(None if rubric == "-" else rubric, data, columns)
        j = _judge(JudgeOptions(judge, model, api_key, model_dir), cache, no_cache)
        res = _run(ds, j, r, concurrency, quiet or as_json)
        out = evaluate_set(ds, res, r, n_boot=bootstrap)
        if report is not None:
            from ..calibration.report import eval_report

            cal = r.calibration if r is not None and out["calibrated"] else None
            qd = {q: (question_data(ds, res, q), cal.transform if cal else None) for q in out["questions"]}
            path = eval_report(out, qd, report, f"Evaluation of {r.name if r else data.name}", rubric=r)
            out["report"] = str(path)
        if as_json:
            print_json(out)
            return
        console.print(f"{out['model']} on {data.name} ({plural(out['n_items'], 'item')}"
                      f"{', calibrated' if out['calibrated'] else ''})", highlight=False, soft_wrap=True)
        console.print(_question_table(out["questions"]))
        cuts = {c.rule: c for c in rule_cutpoints(r, bool(out["calibrated"]))} if r is not None else {}
        for rid, z in out["rules"].items():
            c = cuts.get(rid)
            where = (f"{c.source} cut-points {fmt_cut(c.applied)}; written {fmt_cut(c.written)}, fitted "
                     f"{fmt_cut(c.fitted)}" if c else f"high {z['high']}, low {z['low']}")
            console.print(f"rule {rid}: automated {_fmt(z, 'automation_rate')}, error rate on automated "
                          f"{_fmt(z, 'error_rate')} ({where})", highlight=False, soft_wrap=True)
        if out.get("stale"):
            console.print(f"[yellow]calibration not applied (stale): {'; '.join(out['stale'])}[/yellow]")
        if "report" in out:
            console.print(f"report: {out['report']}")


# --------------------------------------------------------------------------- calibrate


@app.command()
def calibrate(
    rubric: RubricArg,
    data: Annotated[Path | None, typer.Argument(help="The labelled set: JSONL (one item a line), or CSV with --columns. Not with --from-queue.", show_default=False)] = None,
    from_queue: Annotated[Path | None, typer.Option("--from-queue", help="Fit from the resolved items of this review queue (the rubric's, as `ReviewQueue.export` writes them) instead of DATA.", show_default=False)] = None,
    costs: Annotated[str | None, typer.Option(help="Fit cut-points from costs: act=C,refuse=C,review=C (a wrong automatic act, a wrong automatic refusal, a human look).")] = None,
    target_error: Annotated[float | None, typer.Option(help="Fit cut-points for this error rate on automated decisions, with a finite-sample guarantee.")] = None,
    confidence: Annotated[float, typer.Option(help="Confidence of the --target-error guarantee (1 − δ).")] = 0.95,
    capacity: Annotated[float | None, typer.Option(help="Largest share of items (0–1) the review band may take.")] = None,
    split: Annotated[float, typer.Option(help="Share of items used to fit; the rest is held out to report on.")] = 0.5,
    seed: Annotated[int, typer.Option(help="Seed of the random fit/held-out split.")] = 0,
    signal_level: Annotated[float, typer.Option(help="Cost fits: cut-points only if a one-sided Mann–Whitney test that true items score higher has p at most this; otherwise the cheapest constant decision (1 turns the test off).")] = 0.05,
    calibrator: Annotated[CalibratorChoice, typer.Option(help="Recalibration for nouls: auto, platt, isotonic or none (choices and scores use temperature unless none).")] = CalibratorChoice.auto,
    heads: Annotated[bool, typer.Option("--heads", help="First fit a head per question on the local model's pair features (docs/heads.md), then calibrate on top. Local judge only; the model pass is not cached.")] = False,
    no_head: Annotated[list[str] | None, typer.Option("--no-head", help="With --heads: leave this question (by id; repeat for more) to the bare model, as when its labels are a proxy a head would learn instead of the judgement.")] = None,
    judge: JudgeOpt = "local",
    model: ModelOpt = None,
    api_key: KeyOpt = None,
    model_dir: DirOpt = None,
    cache: CacheOpt = None,
    no_cache: NoCacheOpt = False,
    concurrency: ConcOpt = 8,
    columns: ColumnsOpt = None,
    report: Annotated[Path | None, typer.Option(help="Write an HTML report with reliability diagrams into this folder.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Fit and report, but do not write the rubric.")] = False,
    bootstrap: Annotated[int, typer.Option(min=0, help="Bootstrap resamples for the intervals.")] = 1000,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Fit recalibration and three-zone thresholds on labelled data and write them into the rubric."""
    from ..calibration.fit import check_counts, fit_calibration
    from ..calibration.writeback import write_calibration

    with errors_to_exit(), tempfile.TemporaryDirectory(prefix="seams-reviews-") as scratch:
        opts = _fit_options(costs=costs, target_error=target_error, confidence=confidence, capacity=capacity,
                            split=split, seed=seed, signal_level=signal_level, calibrator=calibrator.value,
                            bootstrap=bootstrap)
        if data is not None and from_queue is not None:
            raise InputError("give a labelled set (DATA) or --from-queue QUEUE.sqlite, not both")
        if from_queue is not None:
            data = _reviewed_set(rubric, from_queue, Path(scratch), quiet=as_json)
        if data is None:
            raise InputError("no labelled set: give DATA (a JSONL or CSV file) or --from-queue QUEUE.sqlite")
        r, ds = _load(rubric, data, columns)
        if r.path is None:
            raise InputError(f"rubric {rubric!r} has no file to write into")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the fit repeats them as notes
            check_counts(ds.label_counts(), r.questions)  # too few labels: refuse before judging anything
        if no_head and not heads:
            raise InputError("--no-head leaves a question out of the heads: give --heads too")
        if heads:
            from ..calibration.head_fitting import calibrate_with_heads

            if judge != "local":
                raise InputError("--heads fits on the local model's pair features: use --judge local (and --model-dir)")
            with warnings.catch_warnings(), progress_bar("judging (with features)", quiet=quiet or as_json) as bar:
                warnings.simplefilter("ignore")  # the same messages come back as notes
                result = calibrate_with_heads(r, ds, make_judge("local", model_dir=model_dir), opts,
                                              progress=bar, without=no_head or ()).calibration
        else:
            j = _judge(JudgeOptions(judge, model, api_key, model_dir), cache, no_cache)
            res = _run(ds, j, r, concurrency, quiet or as_json)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the same messages come back as notes
                result = fit_calibration(r, ds, res, opts)
        if not dry_run:
            write_calibration(r.path, result.block)
        report_path = None
        if report is not None:
            from ..calibration.report import calibration_report

            report_path = calibration_report(result, r, ds, report)
        if as_json:
            print_json({"rubric": r.path, "written": not dry_run, "report": str(report_path) if report_path else None,
                        "notes": result.notes, "calibration": result.block.model_dump(mode="json", exclude_none=True,
                                                                                      exclude={"metrics": {"answers"}})})
            return
        _print_fit(result, r, heads)
        console.print(("fitted (dry run, nothing written)" if dry_run else f"written into {r.path}")
                      + (f"; report: {report_path}" if report_path else ""), highlight=False)


def _reviewed_set(rubric: str, queue: Path, into: Path, *, quiet: bool) -> Path:
    """The queue's resolved items of `rubric` as a labelled set in `into`, written by the queue's
    own export (the calibration format), so a fit from reviews reads exactly what `export` gives."""
    from ..queue import ReviewQueue
    from .ask import load_rubric

    if not queue.is_file():
        raise InputError(f"--from-queue: no review queue at {queue}")
    name = load_rubric(rubric).name
    q = ReviewQueue(queue)
    try:
        out = into / "reviewed.jsonl"
        n = q.export(out, rubric=name)
        counts = q.counts()
    finally:
        q.close()
    if n == 0:
        raise InputError(f"--from-queue: review queue {queue} holds no resolved items of rubric {name!r} "
                         f"({counts['resolved']} resolved, {counts['open'] + counts['claimed']} not yet)")
    if not quiet:
        err_console.print(f"{plural(n, 'resolved review')} of {name} from {queue}", highlight=False)
    return out


def _fit_options(*, costs: str | None, target_error: float | None, confidence: float, capacity: float | None,
                 split: float, seed: int, signal_level: float, calibrator: str, bootstrap: int) -> FitOptions:
    """The options, each checked against its range (by `FitOptions` itself, which names the field
    and its limit: said here of the flag) before anything is asked."""
    from dataclasses import replace

    from ..calibration.fit import FitOptions
    from ..calibration.metrics import Costs
    from ..errors import OptionError

    if costs is not None and target_error is not None:
        raise InputError("give --costs or --target-error, not both")
    flags = {"target": ("--target-error", target_error), "delta": ("--confidence", confidence),
             "capacity": ("--capacity", capacity), "split": ("--split", split),
             "signal_level": ("--signal-level", signal_level), "calibrator": ("--calibrator", calibrator),
             "n_boot": ("--bootstrap", bootstrap), "seed": ("--seed", seed)}
    try:
        opts = FitOptions(method="target" if target_error is not None else "cost",
                          target=0.05 if target_error is None else target_error, delta=1 - confidence,
                          capacity=capacity, split=split, seed=seed, calibrator=calibrator, n_boot=bootstrap,
                          signal_level=signal_level)
    except OptionError as exc:
        if exc.field not in flags:
            raise
        flag, value = flags[exc.field]
        raise InputError(f"{flag} {exc.rule.rsplit(', got ', 1)[0]}, got {value}") from None
    try:
        parsed = Costs.parse(costs) if costs else Costs()
    except ValueError as exc:
        raise InputError(f"--costs: {exc}") from None
    return replace(opts, costs=parsed)


def _print_fit(result: CalibrationResult, rubric: Rubric, heads: bool = False) -> None:
    """The notes, the held-out metrics per question before and after (with heads: zero-shot, and
    heads with their calibration), and each rule's cut-points."""
    for note in result.notes:
        err_console.print(f"[yellow]note:[/yellow] {note}", highlight=False)
    rows = {}
    before, after = ("zero-shot", "heads + calibration") if heads else ("before", "after")
    for qid, q in result.questions.items():
        rows[f"{qid} ({before})"] = {**q.before, "type": q.kind}
        rows[f"{qid} ({after})"] = {**q.after, "type": q.kind}
    console.print(f"held-out split ({plural(len(result.report_ids), 'item')}), model {result.block.model}",
                  highlight=False, soft_wrap=True)
    console.print(_question_table(rows))
    written = {c.rule: c.written for c in rule_cutpoints(rubric, False)}
    for rid, rr in result.rules.items():
        t, h = rr.thresholds, rr.heldout
        console.print(f"rule {rid}: fitted {fmt_cut((t.high, t.low))} ({t.method}; written "
                      f"{fmt_cut(written.get(rid))}); held out: automated {_fmt(h, 'automation_rate')}, "
                      f"error rate on automated {_fmt(h, 'error_rate')}", highlight=False, soft_wrap=True)


# --------------------------------------------------------------------------- check


@app.command()
def check(
    rubric: RubricArg,
    data: DataArg,
    alpha: Annotated[float, typer.Option(help="Significance level of the McNemar test on flipped answers.")] = 0.01,
    judge: JudgeOpt = "local",
    model: ModelOpt = None,
    api_key: KeyOpt = None,
    model_dir: DirOpt = None,
    cache: CacheOpt = None,
    no_cache: NoCacheOpt = False,
    concurrency: ConcOpt = 8,
    columns: ColumnsOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """For CI: exit 1 when the calibration is stale, a metric fell beyond its stored interval, or answers flipped."""
    from ..calibration.check import check_calibration

    with errors_to_exit():
        r, ds = _load(rubric, data, columns)
        if r.calibration is None:
            err_console.print(f"[red]fail[/red] {r.path or rubric}: no calibration block; run `seams calibrate`")
            raise typer.Exit(EXIT_FAILED)
        j = _judge(JudgeOptions(judge, model, api_key, model_dir), cache, no_cache)
        res = _run(ds, j, r, concurrency, quiet or as_json)
        out = check_calibration(r, ds, res, alpha=alpha)
        if as_json:
            print_json(out.as_dict())
        else:
            colour = {"fail": "red", "ok": "green", "info": "blue"}
            for f in out.findings:
                console.print(f"[{colour[f.level]}]{f.level:4}[/{colour[f.level]}] {f.where}: {f.message}",
                              highlight=False)
            console.print("[green]calibration holds[/green]" if out.ok else "[red]calibration check failed[/red]")
        if not out.ok:
            raise typer.Exit(EXIT_FAILED)


# --------------------------------------------------------------------------- stability


@app.command()
def stability(
    rubric: Annotated[str, typer.Argument(help="A rubric file or built-in name; '-' to take the questions from the data's lines.")],
    data: DataArg,
    runs: Annotated[int, typer.Option(min=2, help="How many times every item is asked (test–retest).")] = 3,
    reorders: Annotated[int, typer.Option(min=0, help="Option reorderings per Choice (reversed, then shuffled).")] = 2,
    seed: Annotated[int, typer.Option(help="Seed of the option shuffles.")] = 0,
    judge: JudgeOpt = "local",
    model: ModelOpt = None,
    api_key: KeyOpt = None,
    model_dir: DirOpt = None,
    concurrency: ConcOpt = 8,
    columns: ColumnsOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Test–retest spread per question over N runs, and how often a Choice's winner flips when its options are reordered."""
    from ..calibration.stability import stability as measure

    with errors_to_exit():
        r, ds = _load(None if rubric == "-" else rubric, data, columns)
        j = JudgeOptions(judge, model, api_key, model_dir).make()  # never cached: retest must ask
        with progress_bar("judging", quiet=quiet or as_json) as progress:
            out = measure(ds, j, runs=runs, reorders=reorders, seed=seed, concurrency=concurrency,
                          progress=progress, rubric=r)
        if as_json:
            print_json(out)
            return
        console.print(f"stability of {out['model']} over {runs} runs, {plural(out['items'], 'item')}",
                      highlight=False, soft_wrap=True)
        t = Table()
        for col in ("question", "n", "mean sd", "max sd", "unstable answers", "reorder flips"):
            t.add_column(col)
        for qid, m in out["questions"].items():
            flip = m.get("reorder_flip_rate")
            t.add_row(qid, str(m.get("n", "—")), f"{m['sd_mean']:.4f}" if "sd_mean" in m else "—",
                      f"{m['sd_max']:.4f}" if "sd_max" in m else "—",
                      f"{m['unstable_rate']:.1%}" if "unstable_rate" in m else "—",
                      "—" if flip is None else f"{flip:.1%} of {m['reorder_n']}")
        console.print(t)
