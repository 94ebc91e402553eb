"""Reading the state once, with the uncertain band sent to the cross-encoder: what it buys on Nouls.

    python bench/once_cascade.py [--data ../shared/data] [--json bench/results/once_cascade.json]

On every Noul of the written corpus's held-out domains and wordings (full splits), the shipped
model answers reading pairs (the cross-encoder) and reading once (`LocalJudge(reading="once")`).
A cascade keeps the heads' P(yes) except for the fraction of items nearest the heads' median,
which it ranks by the cross-encoder's P(yes) inside the band's range. Printed: pooled AUROC of
each reading and of the cascade at each fraction sent. Asserts nothing; docs/local-judge.md,
"Reading the state once", reads it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from seams.judges.local import LocalJudge  # noqa: E402
from seams.judges.local.runtime import machine  # noqa: E402
from training.written import items  # noqa: E402

FRACTIONS = (0.1, 0.2, 0.3, 0.5, 0.7)


def nouls_of(judge: LocalJudge, its: list) -> np.ndarray:
    """P(yes) of each item, a state's questions asked in one call as a rubric asks them."""
    by: dict[str, list[int]] = defaultdict(list)
    for i, it in enumerate(its):
        by[it.line_id].append(i)
    out = np.zeros(len(its))
    for idx in by.values():
        got = judge.ask(its[idx[0]].state, {f"q{i}": its[i].question for i in idx}).answers
        for i in idx:
            out[i] = got[f"q{i}"].noul
    return out


def cascade(once: np.ndarray, pairs: np.ndarray, frac: float) -> np.ndarray:
    d = np.abs(once - np.median(once))
    band = d <= np.quantile(d, frac)
    lo, hi = once[band].min(), once[band].max()
    rank = (pairs[band].argsort().argsort() + 0.5) / band.sum()
    out = once.copy()
    out[band] = lo + rank * (hi - lo)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    print(machine().line(), flush=True)
    pairs = LocalJudge(intra_op_threads=args.threads)
    once = LocalJudge(intra_op_threads=args.threads, reading="once")
    out: dict[str, object] = {"machine": machine().line(), "model": once.model_id}
    for split in ("domains", "wordings"):
        its = [it for it in items(split, args.data / "written") if it.kind == "noul"]
        y = np.array([bool(it.label) for it in its])
        p_pairs, p_once = nouls_of(pairs, its), nouls_of(once, its)
        res = {"n": len(its), "pairs": roc_auc_score(y, p_pairs), "once": roc_auc_score(y, p_once),
               "cascade": {str(f): roc_auc_score(y, cascade(p_once, p_pairs, f)) for f in FRACTIONS}}
        out[split] = res
        print(f"{split} ({len(its)} Nouls): pairs {res['pairs']:.3f}, once {res['once']:.3f}; cascade, share sent "
              "to the cross-encoder → AUROC: " + ", ".join(f"{f:.0%} {a:.3f}" for f, a in zip(FRACTIONS, res["cascade"].values())),
              flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
