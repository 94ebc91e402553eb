"""What the k-th question about one state costs: the two-tower design against the cross-encoder.

Superseded for the shipped runtime by `python bench/local_judge.py --reading once`, which times
`LocalJudge(reading="once")` itself; this one times the experiment's heads outside the judge.

    python bench/two_tower_cost.py [--threads 1] [--seconds 2] [--heads ../train_runs/two_tower/heads.json]
                                   [--json OUT]

Two ways to answer k = 1..8 Nouls about one fresh 128-token ticket (a new state every call, so the
state is never cached; the questions' texts are, as in serving):

* **two-tower** (training/two_tower.py): the state embedded once by the shipped `encoder.onnx`
  (the runtime's `SentenceEncoder`), each question's hypothesis embedding from the cache, and the
  interaction head on the pair (its features and a dot product / small MLP in numpy). The head
  is the one `python -m training two-tower run` fitted (`--heads`), or one of the largest variant
  shape with random weights when none is there: its cost does not depend on its weights;
* **cross-encoder**: the shipped `LocalJudge.ask` with the k questions (one model run each).

Prints the p50 ms of each k, the first question's cost, the per-question slope fitted over
k = 1..8 (`local_judge.per_question_slope`) and its ratio to the first (issue 28's goal: ≤ 0.25).
A benchmark, never a test: it asserts nothing; the load average it prints says how busy the
machine was.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from itertools import count
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "bench"), str(ROOT)]

from local_judge import EXTRA_QUESTIONS, QUESTION, per_question_slope, state_of, timed  # noqa: E402

from seams.judges.local import LocalJudge  # noqa: E402
from seams.judges.local.hypotheses import noul_hypothesis  # noqa: E402
from seams.judges.local.runtime import machine  # noqa: E402
from seams.questions import Noul  # noqa: E402
from training.two_tower import (  # noqa: E402
    DEFAULT_CACHE,
    FEATURES,
    REFERENCE,
    Head,
    Row,
    Variant,
    features,
    load_heads,
    segments,
)


def load_head(path: Path, dim: int) -> tuple[Head, Variant, str]:
    """The fitted Noul head from `two-tower run`, or a random one of the largest shape tried."""
    if path.exists():
        head, v = load_heads(path)["noul"]
        return head, v, f"fitted {v.name()}"
    rng = np.random.default_rng(0)
    v = Variant(feats="sbert2", hidden=32)
    REFERENCE["u"], REFERENCE["h"] = _unit(rng.normal(size=(512, dim))).mean(0), _unit(rng.normal(size=(512, dim))).mean(0)
    d = features(Row("noul", "", "", True, np.ones(dim), np.ones((1, dim)), np.ones((1, dim))),
                 FEATURES[v.feats]).shape[1]
    head = v.head()
    head.p = {"w0": rng.normal(size=d), "c": np.zeros(1), "W": rng.normal(size=(d, 32)), "b": np.zeros(32),
              "w": rng.normal(size=32)}
    head.mu, head.sd = np.zeros(d), np.ones(d)
    return head, v, f"random weights {v.name()}"


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--heads", type=Path, default=DEFAULT_CACHE / "heads.npz")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    print(machine().line(), flush=True)  # every figure names its machine
    judge = LocalJudge(None, intra_op_threads=args.threads)
    enc = judge.encoder
    assert enc is not None, "the shipped config has an encoder"
    head, variant, head_name = load_head(args.heads, enc.dim)
    spec = FEATURES[variant.feats]
    late = "seg" in spec  # late interaction: the state's segments embedded too (once per state)
    questions = [QUESTION, *(Noul(instructions=t) for t in EXTRA_QUESTIONS)]
    hyps = [noul_hypothesis(q) for q in questions]
    enc.embed(hyps)  # the questions' embeddings: once per rubric, cached
    base = state_of(judge, 128)
    fresh = count()

    def two_tower(k: int) -> list[float]:
        state = f"Ticket {next(fresh)}. " + base
        u = enc.embed([state])[0]  # one encoder run per state
        seg = enc.embed(segments(state)) if late else None  # and one per segment, once per state
        out = []
        for h in enc.embed(hyps[:k]):  # cache hits
            x = features(Row("noul", "", "", True, u, h[None], h[None], seg=seg), spec)
            out.append(float(1 / (1 + np.exp(-head.predict(x)[0]))))
        return out

    def cross(k: int) -> None:
        judge.ask(f"Ticket {next(fresh)}. " + base, {f"q{i}": q for i, q in enumerate(questions[:k])})

    res = {}
    for name, fn in (("two-tower", two_tower), ("cross-encoder", cross)):
        ms = timed({str(k): (lambda k=k, fn=fn: fn(k)) for k in range(1, 9)}, args.seconds, min_runs=5)
        meds = [{"k": k, "ms": statistics.median(ms[str(k)])} for k in range(1, 9)]
        slope = per_question_slope(meds)
        res[name] = {"p50_ms": {m["k"]: m["ms"] for m in meds}, "first_ms": meds[0]["ms"],
                     "per_question_ms": slope, "kth_vs_first": slope / meds[0]["ms"]}
    # the head alone, state and question vectors in hand (what the k-th question adds)
    u, h = enc.embed([base])[0], enc.embed(hyps[:1])[0]
    seg = enc.embed(segments(base)) if late else None
    head_ms = timed({"head": lambda: head.predict(features(Row("noul", "", "", True, u, h[None], h[None], seg=seg),
                                                           spec))},
                    args.seconds, min_runs=50)["head"]
    print(f"two-tower cost · head {head_name} · state segments {len(segments(base)) if late else 0} · "
          f"{judge.model_id} · threads {args.threads} · "
          f"load average {os.getloadavg()[0]:.2f}")
    print("| design | k=1 | k=2 | k=4 | k=8 | per question (slope k=1..8) | k-th / first |")
    print("|---|---|---|---|---|---|---|")
    for name, r in res.items():
        p = r["p50_ms"]
        print(f"| {name} | {p[1]:.2f} | {p[2]:.2f} | {p[4]:.2f} | {p[8]:.2f} | {r['per_question_ms']:.3f} | "
              f"×{r['kth_vs_first']:.3f} |")
    first = res["two-tower"]["first_ms"]
    print(f"head alone (features + predict, vectors in hand): p50 {statistics.median(head_ms):.3f} ms, "
          f"×{statistics.median(head_ms) / first:.4f} of the first two-tower question ({first:.1f} ms: the state's "
          "encoder runs); the slope above is that figure buried in the encoder's noise")
    print(f"the k-th two-tower question against the cross-encoder's: "
          f"×{res['two-tower']['per_question_ms'] / res['cross-encoder']['per_question_ms']:.4f}")
    if args.json:
        args.json.write_text(json.dumps({"machine": machine().to_dict(), "threads": args.threads, "head": head_name,
                                         "head_alone_p50_ms": statistics.median(head_ms), **res}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
