"""What the encoder blend costs a Choice and a Noul, against the same cross-encoder without it.

    python bench/encoder_blend.py [--model-dir DIR] [--threads 2] [--seconds 3] [--json OUT]

Three judges over one model directory, measured in turns (`local_judge.timed`): **blend** (the
config as shipped: encoder cosines blended in, long Choices shortlisted), **full** (the blend,
every option read: `shortlist=False`) and **plain** (the same cross-encoder, its config without
`encoder`, `blend` and `shortlist`). Each asks a 4-option Choice and a 150-option Choice about
128-token states; a fresh state each call, so the state's embedding is never cached (the options'
are, as in serving). Then one Noul and eight Nouls about such a state (the Noul floor, 0.6.1),
with the blend placed both ways whatever the threads say: **beside** (the encoder's cosines on its
own thread while the cross-encoder runs, `SentenceEncoder.cosines_soon`) and **serial** (in line).
`LocalJudge` itself puts them beside only when its threads leave a core free.
Prints p50 ms per ask and each judge's ratio to plain. A benchmark, never a test: it asserts
nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from itertools import count
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from local_judge import TEXT, timed

from seams.judges.local import LocalJudge, read_model_dir, shipped_model_dir
from seams.judges.local.runtime import machine
from seams.questions import Choice, Noul

FOUR = Choice(instructions="Which team should handle the ticket?", criteria={
    "billing": "charges, invoices and refunds", "technical": "bugs, outages and errors",
    "sales": "new plans and upgrades", "account": "logins, passwords and profile changes"})
MANY = Choice(instructions="What does the user want?", criteria={
    f"intent_{k}": f"{w} request number {k}" for k, w in enumerate(
        ["refund", "transfer", "balance", "card", "travel", "weather", "alarm", "music", "recipe", "timer"] * 15)})


NOULS = [Noul(instructions=t) for t in (
    "Is the customer asking for money back?", "Does the customer threaten to leave or dispute the charge?",
    "Is the message about an invoice?", "Does the customer need an answer today?", "Is the customer angry?",
    "Does the message mention an order number?", "Has the customer written before about this?",
    "Is a refund already promised?")]


def placed(judge: LocalJudge, beside: bool) -> LocalJudge:
    """`judge` with its encoder's cosines computed beside the cross-encoder's runs, on the
    encoder's own thread (`beside`), or in line on the caller's, whatever its threads say."""
    judge._beside = beside
    return judge


def plain_dir(model_dir: Path, work: Path) -> Path:
    md = read_model_dir(model_dir)
    d = work / "plain"
    d.mkdir()
    for f in (md.onnx_path, md.tokenizer_path):
        os.symlink(f.resolve(), d / f.name)
    cfg = json.loads(md.config_path.read_text())
    for k in ("encoder", "blend", "shortlist"):
        cfg.pop(k, None)
    (d / "config.json").write_text(json.dumps(cfg))
    return d


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model-dir", type=Path, default=shipped_model_dir())
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    print(machine().line(), flush=True)  # every figure names its machine
    if read_model_dir(args.model_dir).config.encoder is None:
        ap.error(f"{args.model_dir}: its config has no encoder; nothing to compare")
    with tempfile.TemporaryDirectory(prefix="seams-blend-") as tmp:
        judges = {"blend": LocalJudge(args.model_dir, intra_op_threads=args.threads),
                  "full": LocalJudge(args.model_dir, intra_op_threads=args.threads, shortlist=False),
                  "plain": LocalJudge(plain_dir(args.model_dir, Path(tmp)), intra_op_threads=args.threads)}
        fresh = count()
        res: dict[str, dict[str, float]] = {}
        for name, q, secs in (("4 options", FOUR, args.seconds), ("150 options", MANY, args.seconds * 3)):
            def ask(j: LocalJudge, q: Choice = q) -> None:
                j.ask(f"Ticket {next(fresh)}. " + TEXT[:600], {"q": q})
            ms = timed({k: (lambda j=j: ask(j)) for k, j in judges.items()}, secs, min_runs=3, turn_s=1.0)
            res[name] = {k: statistics.median(v) for k, v in ms.items()}
        nouls = {"blend": judges["blend"], "plain": judges["plain"],
                 "beside": placed(LocalJudge(args.model_dir, intra_op_threads=args.threads), True),
                 "serial": placed(LocalJudge(args.model_dir, intra_op_threads=args.threads), False)}
        for k in (1, 8):
            qs = {f"q{i}": q for i, q in enumerate(NOULS[:k])}
            ms = timed({n: (lambda j=j, qs=qs: j.ask(f"Ticket {next(fresh)}. " + TEXT[:600], qs))
                        for n, j in nouls.items()}, args.seconds, min_runs=3, turn_s=1.0)
            res[f"{k} Noul{'s' if k > 1 else ''}"] = {n: statistics.median(v) for n, v in ms.items()}
    print(f"encoder blend cost · {judges['blend'].model_id} · threads {args.threads} · "
          f"load average {os.getloadavg()[0]:.2f}")
    cols = ("blend", "full", "beside", "serial")
    print("| ask | " + " | ".join(f"{c} p50 ms" for c in (*cols, "plain")) + " | "
          + " | ".join(f"{c} / plain" for c in cols) + " |")
    print("|---|" + "---|" * (2 * len(cols) + 1))
    for name, r in res.items():
        cells = [f"{r[k]:.1f}" if k in r else "–" for k in (*cols, "plain")]
        ratios = [f"×{r[k] / r['plain']:.2f}" if k in r else "–" for k in cols]
        print(f"| {name} | " + " | ".join(cells + ratios) + " |")
    if args.json:
        args.json.write_text(json.dumps({"machine": machine().line(), "model": judges["blend"].model_id,
                                         "threads": args.threads, "p50_ms": res}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
