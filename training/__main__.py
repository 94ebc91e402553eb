"""`python -m training build|train|average|export|card|recipe` — the shipped model's pipeline.

    python -m training build  --data ../shared/data --run ../train_runs/r1
    python -m training train  --run ../train_runs/r1 [--resume]
    python -m training average --from ../train_runs/r3 --from ../train_runs/r4 --run ../train_runs/s34
    python -m training export --run ../train_runs/r1 --out seams/models/seams-minilm
    python -m training card   --run ../train_runs/r1 --out seams/models/seams-minilm \
        --metrics ../train_runs/r1/metrics.json
    python -m training recipe --run ../train_runs/g1 [--device auto] [--tiny] [--resume]   # all of it, one GPU
    python -m training two-tower embed|xenc|run   # issue 28's experiment (training/two_tower.py)
    python -m training towers train|export|eval   # issue 28: a fine-tuned two-tower encoder (training/towers.py)
    python -m training flags oof|train|export     # issue 30: the memory red-flag classifier (training/flags.py)
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from . import REPO, SHARED_DATA

DEFAULT_OUT = REPO / "seams" / "models" / "seams-minilm"


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return COMMANDS[args.cmd](args)


def _parser() -> argparse.ArgumentParser:
    """The command line: one subcommand per pipeline step."""
    ap = argparse.ArgumentParser(prog="python -m training")
    sub = ap.add_subparsers(dest="cmd", required=True)

    b = sub.add_parser("build", help="build the training mixture (JSONL) into the run directory")
    b.add_argument("--data", type=Path, default=SHARED_DATA)
    b.add_argument("--run", type=Path, required=True)
    b.add_argument("--seed", type=int, default=13)
    b.add_argument("--scale", type=float, default=1.0, help="multiply every task's size")
    b.add_argument("--weights", default="", help="per-task multipliers, e.g. contradiction=2,tool_gate=1.5")
    b.add_argument("--hard-tool-negatives", type=float, default=0.0,
                   help="share of any-tool-fits rosters built from the request's closest non-fitting tools")
    b.add_argument("--question-pairs", type=int, default=0,
                   help="NLI pairs also asked as questions in the NLI Choice (never a contradiction)")
    b.add_argument("--paws-passes", type=int, default=0,
                   help="extra passes over every PAWS training pair, in random memory wordings")
    b.add_argument("--written-passes", type=float, default=0.0,
                   help="passes over the written corpus's training split (training/written.py); 0 leaves it out")
    b.add_argument("--written-kind-passes", default="",
                   help="passes of one question type instead, e.g. noul=2,choice=0.3,score=0.3")

    t = sub.add_parser("train", help="fine-tune the cross-encoder on the run's mixture")
    t.add_argument("--run", type=Path, required=True)
    t.add_argument("--seed", type=int, default=13)
    t.add_argument("--epochs", type=int, default=1)
    t.add_argument("--batch-size", type=int, default=32)
    t.add_argument("--lr", type=float, default=5e-5)
    t.add_argument("--max-length", type=int, default=160)
    t.add_argument("--threads", type=int, default=2)
    t.add_argument("--ckpt-every", type=int, default=200)
    t.add_argument("--limit-steps", type=int, default=None)
    t.add_argument("--resume", action="store_true")
    t.add_argument("--head", choices=["cls", "mean"], default="cls",
                   help="logit from the [CLS] pooler (cls) or from mean-pooled tokens (mean)")
    t.add_argument("--warmup-steps", type=int, default=None)
    t.add_argument("--init-from", type=Path, default=None,
                   help="start from another run's final/ model (a second training phase) instead of the base")
    t.add_argument("--listwise", type=float, default=0.0,
                   help="weight of the softmax loss over each Choice's options / Score's levels (grouped pairs)")
    t.add_argument("--freeze-layers", type=int, default=0,
                   help="freeze the embeddings and this many lowest encoder layers")
    t.add_argument("--l2sp", type=float, default=0.0, help="pull towards the starting weights (L2-SP)")
    t.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                   help="auto: cuda when torch sees a GPU (bf16 autocast there), else the CPU (fp32, as before)")

    v = sub.add_parser("average", help="average the weights of several runs of one lineage into a new run")
    v.add_argument("--from", dest="runs", type=Path, action="append", required=True, help="a run (give two or more)")
    v.add_argument("--run", type=Path, required=True, help="the run directory to write")

    e = sub.add_parser("export", help="export ONNX, quantise to int8, parity-check, write config")
    e.add_argument("--run", type=Path, required=True)
    e.add_argument("--out", type=Path, default=DEFAULT_OUT)
    e.add_argument("--choice-temperature", type=float, default=None)

    r = sub.add_parser("recipe", help="the whole recipe in one resumable command (training/recipe.py)")
    r.add_argument("--run", type=Path, required=True, help="the run directory (everything goes under it)")
    r.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    r.add_argument("--tiny", action="store_true", help="every step shrunk: the whole recipe on a CPU in minutes")
    r.add_argument("--resume", action="store_true", help="continue a stopped run: finished steps are skipped")
    r.add_argument("--threads", type=int, default=None, help="CPU threads (default: the cores, at most 8)")
    r.add_argument("--data", type=Path, default=SHARED_DATA)

    c = sub.add_parser("card", help="write MODEL_CARD.md from the run's records and metrics")
    c.add_argument("--run", type=Path, required=True)
    c.add_argument("--out", type=Path, default=DEFAULT_OUT)
    c.add_argument("--metrics", type=Path, default=None)

    from .two_tower import add_parser as two_tower_parser  # numpy only: no torch

    two_tower_parser(sub)
    from .towers import add_parser as towers_parser  # torch only when a towers stage runs

    towers_parser(sub)
    from .flags import add_parser as flags_parser

    flags_parser(sub)
    return ap


def _build(args: argparse.Namespace) -> int:
    """Build the mixture (plus the written corpus's passes) and record its summary in mixture.json."""
    from .mixture import build_mixture, write_mixture

    weights = {k: float(v) for k, v in (kv.split("=") for kv in args.weights.split(",") if kv)}
    ex = build_mixture(args.data, seed=args.seed, scale=args.scale, weights=weights,
                       hard_tool_negatives=args.hard_tool_negatives, question_pairs=args.question_pairs,
                       paws_passes=args.paws_passes)
    if args.written_passes > 0:
        import random as _random

        from .written import examples as written_examples

        kinds = {k: float(v) for k, v in (kv.split("=") for kv in args.written_kind_passes.split(",") if kv)}
        ex.extend(written_examples(seed=args.seed, passes=args.written_passes, root=args.data / "written",
                                   kind_passes=kinds))
        _random.Random(args.seed).shuffle(ex)
    digest = write_mixture(ex, args.run / "mixture.jsonl")
    tasks = Counter(x.task for x in ex)
    sources = Counter(f"{x.task}/{x.source}" for x in ex)
    pos = Counter(x.task for x in ex if x.label >= 0.5)
    info = {
        "pairs": len(ex), "hash": digest, "seed": args.seed, "scale": args.scale, "weights": weights,
        "hard_tool_negatives": args.hard_tool_negatives, "question_pairs": args.question_pairs,
        "paws_passes": args.paws_passes, "written_passes": args.written_passes,
        "written_kind_passes": args.written_kind_passes,
        "data": str(args.data),
        "tasks": dict(tasks.most_common()), "positives": dict(pos), "sources": dict(sorted(sources.items())),
        "wordings": dict(Counter(x.wording for x in ex)),
    }
    (args.run / "mixture.json").write_text(json.dumps(info, indent=2))
    print(json.dumps({"pairs": len(ex), "hash": digest, "tasks": info["tasks"]}, indent=2))
    return 0


def _train(args: argparse.Namespace) -> int:
    from .train import train

    train(args.run / "mixture.jsonl", args.run, seed=args.seed, epochs=args.epochs, batch_size=args.batch_size,
          lr=args.lr, max_length=args.max_length, threads=args.threads, ckpt_every=args.ckpt_every,
          resume=args.resume, limit_steps=args.limit_steps, head=args.head,
          warmup_steps=args.warmup_steps, init_from=args.init_from, listwise=args.listwise,
          freeze_layers=args.freeze_layers, l2sp=args.l2sp, device=args.device)
    return 0


def _average(args: argparse.Namespace) -> int:
    from .average import average

    command = "python -m training average " + " ".join(f"--from {r}" for r in args.runs) + f" --run {args.run}"
    print(json.dumps(average(args.runs, args.run, command), indent=2))
    return 0


def _export(args: argparse.Namespace) -> int:
    from .export import export

    export(args.run, args.out, choice_temperature=args.choice_temperature)
    return 0


def _recipe(args: argparse.Namespace) -> int:
    from .recipe import run_recipe

    summary = run_recipe(args.run, tiny=args.tiny, device=args.device, resume=args.resume, threads=args.threads,
                         data=args.data)
    return 0 if summary["ok"] else 1


def _two_tower(args: argparse.Namespace) -> int:
    from .two_tower import cmd

    return cmd(args)


def _towers(args: argparse.Namespace) -> int:
    from .towers import cmd

    return cmd(args)


def _flags(args: argparse.Namespace) -> int:
    from .flags import cmd

    return cmd(args)


def _card(args: argparse.Namespace) -> int:
    from .card import write_card

    write_card(args.run, args.out, args.metrics)
    return 0


#: What each subcommand runs (the modules load only when their command does: no torch for `build`).
COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "build": _build, "train": _train, "average": _average, "export": _export, "card": _card,
    "recipe": _recipe, "two-tower": _two_tower, "towers": _towers,
    "flags": _flags,
}


if __name__ == "__main__":
    sys.exit(main())
