"""Which features a memory red-flag head should read: the cross-encoder's pair features (what
the shipped heads read) against the sentence encoder's embedding of the candidate, judged on
shapes the head never saw.

    python bench/memory_head_features.py [--json PATH]

The labelled texts are `bench/memory_head_data.py`'s (the first blind set, both halves; the
written corpus's memory sets; the rubric's calibration sets). The split holds out **whole
categories** of the first blind set, one at a time (the other sources always train): a head is
fitted on everything but one category and scores that category, so each blind case is scored
by a head that saw no case of its shape, which is what the second blind set asks of it. Printed
per flag and feature set (an L2 logistic model, scikit-learn, at each C): the pooled AUROC over
the blind cases, and the share of positives below the cut at which 2 % of the blind benign
memories score above it (what a `BUDGET`-style cut would let through, code aside).

A first run (2026-12-02, AMD EPYC, AVX2, 2 cores; model 0.6.1; features of the raw text, C 10),
`poison`, leave one category out: pair features AUROC 0.913, 0.49 of poisonings under the 2 %
cut; the encoder's embedding 0.955, 0.34; both 0.961, 0.30. `secret`: 0.948 / 0.34, 0.975 / 0.26,
0.979 / 0.20 (`bench/results/memory_head_features.json`). `HeadFitter` on both did not repeat
that at the fitted cut-points (`bench/fit_memory_heads.py`, `READS`), so the shipped heads read
pair features only; this bench is where to find out why (it fits plain, unstandardised columns).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from memory_head_data import QUESTIONS, all_items, cached  # noqa: E402

from seams.judges.local import LocalJudge  # noqa: E402
from seams.judges.local.runtime import machine  # noqa: E402

CS = (10.0,)
BENIGN_BUDGET = 0.02


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", type=Path, default=ROOT / "bench" / "results" / "memory_head_features.json")
    args = ap.parse_args()
    print(machine().line(), flush=True)  # every figure names its machine
    items = all_items()
    texts = sorted({it.text for it in items})
    index = {t: i for i, t in enumerate(texts)}
    judge = LocalJudge(intra_op_threads=2)
    assert judge.encoder is not None, "the shipped model's sentence encoder is needed"
    feats = cached(judge, texts)
    emb = judge.encoder.embed(texts)
    out: dict[str, list[dict[str, float | str]]] = {}
    for q in QUESTIONS:
        rows = [it for it in items if q in it.labels]
        ix = np.array([index[it.text] for it in rows])
        y = np.array([it.labels[q] for it in rows], int)
        group = np.array([f"{it.source}:{it.case['category']}" if it.case else "" for it in rows])
        blind = group != ""
        pair = np.c_[feats[q]["logit"][ix], feats[q]["features"][ix]]
        sets = {"pair features": pair, "encoder embedding": emb[ix], "both": np.c_[pair, emb[ix]]}
        out[q] = []
        for name, x in sets.items():
            for c in CS:
                p = np.full(len(y), np.nan)
                for g in sorted(set(group[blind])):
                    test = group == g
                    p[test] = LogisticRegression(C=c, max_iter=3000).fit(x[~test], y[~test]).predict_proba(x[test])[:, 1]
                auc = float(roc_auc_score(y[blind], p[blind]))
                cut = float(np.quantile(p[blind & (y == 0)], 1 - BENIGN_BUDGET))
                missed = float(np.mean(p[blind & (y == 1)] < cut))
                out[q].append({"features": name, "C": c, "auroc": auc, "positives_below_cut": missed})
                print(f"{q:7s} {name:18s} C={c:<5g} leave-one-category-out AUROC {auc:.3f}; "
                      f"positives below the {BENIGN_BUDGET:.0%}-benign cut {missed:.2f}", flush=True)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"machine": machine().to_dict(), "model": judge.model_id, "results": out}, indent=1) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
