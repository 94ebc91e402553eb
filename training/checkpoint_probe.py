"""A torch-side look at a training checkpoint on a sample of the written corpus's held-out splits.

    python -m training.checkpoint_probe RUN/checkpoint.pt [--split domains|groups|wordings|train] [--n 200]

For watching a long run between checkpoints without exporting it: the mean-pooled model of the
checkpoint (`--head mean` runs) reads each sampled question's hypotheses against its state, as the
judge would, and prints pooled Noul AUROC, Choice top-1 and Score exact / within-one. Small samples
and fp32 torch, so a trend, not a figure to report beside `bench/heldout.py`'s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
from pathlib import Path


def probe(checkpoint: Path | None, split: str, n: int, seed: int = 7) -> dict[str, object]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import numpy as np
    import torch
    from sklearn.metrics import roc_auc_score
    from transformers import AutoTokenizer

    from seams.judges.local.hypotheses import focus, hypotheses, state_text

    from .train import MeanPoolCrossEncoder, base_model_dir
    from .written import items

    torch.set_num_threads(1)
    model = MeanPoolCrossEncoder.build(base_model_dir())
    step = 0
    if checkpoint is not None:
        state = torch.load(checkpoint, map_location="cpu", weights_only=False)
        model.load_state_dict(state.get("model", state))
        step = state.get("step", step)
    model.eval()
    tok = AutoTokenizer.from_pretrained(base_model_dir())
    pool = items(split)
    sample = random.Random(seed).sample(pool, min(n, len(pool)))
    ys, ps, top1, levels = [], [], [], []
    with torch.no_grad():
        for it in sample:
            hyps = hypotheses(it.question)
            text = state_text(focus(it.question, it.state))
            enc = tok(hyps, [text] * len(hyps), truncation=True, max_length=256, padding=True, return_tensors="pt")
            logits = model(**enc).squeeze(-1).numpy()
            if it.kind == "noul":
                ys.append(bool(it.label))
                ps.append(float(logits[0]))
            elif it.kind == "choice":
                top1.append(list(it.question.criteria)[int(logits.argmax())] == it.label)
            else:
                levels.append((int(logits.argmax()), int(it.label)))
    return {"split": split, "n": [len(ys), len(top1), len(levels)],
            "noul_auroc": float(roc_auc_score(ys, ps)) if len(set(ys)) == 2 else None,
            "choice_top1": float(np.mean(top1)) if top1 else None,
            "score_exact": float(np.mean([a == b for a, b in levels])) if levels else None,
            "score_within1": float(np.mean([abs(a - b) <= 1 for a, b in levels])) if levels else None,
            "step": step}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoint", help="a run's checkpoint.pt, or 'base' for the untrained model")
    ap.add_argument("--split", default="domains", choices=["domains", "groups", "wordings", "train"])
    ap.add_argument("--n", type=int, default=200)
    args = ap.parse_args()
    ck = None if args.checkpoint == "base" else Path(args.checkpoint)
    print(json.dumps(probe(ck, args.split, args.n)))


if __name__ == "__main__":
    main()
