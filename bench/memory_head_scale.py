"""The red-flag heads reading the state's embedding beside the pair features, at several scales of
the embedding's columns: what each misses at the operating point `bench/fit_memory_heads.py` uses.

    python bench/memory_head_scale.py [--scales 1 0.3 0.1 0.03] [--folds 0]

For each flag (`poison`, `secret`) and each setting (pair features alone, then pair + state at
each scale of `HeadFitter(feature_scale=...)`), heads fitted out of fold on the first blind set
and the memory texts (`bench/memory_head_data.py`), the cut chosen as `fit_memory_heads` chooses
it (the lowest at which the flag alone refuses at most `BUDGET` of the dev benign memories), and
printed: that cut, the benign refused and the positives missed (fewer is better), and AUROC of the
flag on the dev cases. Reads no blind2 item. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import fit_memory_heads as F  # noqa: E402
from memory_head_data import all_items, cached, seen  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402

from seams.judges.local import LocalJudge  # noqa: E402
from seams.judges.local.runtime import machine  # noqa: E402


def auroc(cases: dict[str, list[dict[str, Any]]], p: dict[str, dict[str, float]], q: str) -> float:
    pos = "poisoning" if q == "poison" else "secrets"
    b = [p[q][seen(c["text"])] for c in cases["benign"]]
    s = [p[q][F._shown(q, c)] for c in cases[pos]]
    return float(roc_auc_score([0] * len(b) + [1] * len(s), b + s))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scales", type=float, nargs="*", default=[1.0, 0.3, 0.1, 0.03])
    ap.add_argument("--logit-scale", type=float, default=10.0, help="HeadFitter(logit_scale=...): 10 spares the model's logit")
    ap.add_argument("--Cs", type=float, nargs="*", default=[],
                    help="each setting also at these fixed C (none: `HeadFitter`'s cross-validated choice)")
    ap.add_argument("--folds", type=int, default=0, help="0: one fold a labelled set; k: hashed k-fold")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    print(machine().line(), flush=True)
    items = all_items()
    texts = sorted({it.text for it in items})
    index = {t: i for i, t in enumerate(texts)}
    feats = cached(LocalJudge(intra_op_threads=1), texts)
    cases = F.dev_cases(items)
    print({k: len(v) for k, v in cases.items()})
    out: dict[str, Any] = {"machine": machine().line(), "budget": F.BUDGET, "settings": {}}
    settings = [("pair", 1.0)] + [("pair+state", s) for s in args.scales]
    for (reads, scale), C in [(rs, C) for rs in settings for C in (args.Cs or [None])]:
        F.READS, F.EMBED_SCALE = reads, {q: scale for q in F.QUESTIONS}
        F.LOGIT_SCALE = {q: args.logit_scale for q in F.QUESTIONS}
        oof = F.out_of_fold(items, feats, index, args.folds, Cs=(C,) if C else None)
        name = (reads if reads == "pair" else f"pair+state ×{scale:g}") + (f" C {C:g}" if C else "") + (
            f" logit ×{args.logit_scale:g}" if args.logit_scale != 10 else "")
        row = {}
        for q, budget in F.BUDGET.items():
            cut, refused, missed = F.choose_cut(cases, oof, q, budget)
            row[q] = {"cut": cut, "benign_refused": refused, "missed": missed, "auroc": auroc(cases, oof, q)}
        out["settings"][name] = row
        print(f"{name:>20}: " + "   ".join(f"{q} cut {r['cut']:.2f}, benign refused {r['benign_refused']}, "
                                          f"missed {r['missed']}, AUROC {r['auroc']:.3f}" for q, r in row.items()), flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
