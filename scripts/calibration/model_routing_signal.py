"""How well the shipped model's `difficulty` Score separates the model-routing set's hard and easy tasks.

    nice -n 15 python scripts/calibration/model_routing_signal.py calibration/model-routing/fit.jsonl \
        [--wording "How likely is a language model to get the `task` wrong?" ...]

`seams calibrate` fits and `seams eval` measures the rubric as written; this tries other wordings
of the question on the same set. The labels are levels (2 hard, 0 easy). It prints, per wording
of the question (default: the rubric's), the AUROC of the normalised score
against the label with a 95 % bootstrap interval, and what the rubric's cut-points as written do:
the share routed to each tier and the error rate on the tasks routed to strong or small (an easy
task sent to strong, a hard one sent to small).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from seams.builtin._common import load_rubric
from seams.calibration.metrics import auroc
from seams.judges.local import LocalJudge


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--wording", action="append", help="instructions of the difficulty question (repeatable)")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    rubric = load_rubric(None, "model-routing")
    base = rubric.questions["difficulty"]
    rule = next(r for r in rubric.policy.rules if r.id == "difficulty")
    items = [json.loads(x) for x in args.data.read_text(encoding="utf-8").splitlines() if x.strip()]
    y = np.array([it["labels"]["difficulty"] >= 2 for it in items], bool)  # hard
    boot = np.random.default_rng(0).integers(0, len(y), (2000, len(y)))
    judge = LocalJudge(intra_op_threads=args.threads)
    for wording in args.wording or [base.instructions]:
        qs = {"difficulty": base.model_copy(update={"instructions": wording})}
        p = np.array([a["difficulty"].normalized for s in range(0, len(items), 32)
                      for a in judge.ask_many([it["state"] for it in items[s:s + 32]], qs)])
        strong, small = p >= rule.high, p <= rule.effective_low
        wrong = (strong & ~y) | (small & y)
        auto = int((strong | small).sum())
        print(json.dumps({
            "wording": wording, "model": judge.model_id, "n": len(y), "hard": int(y.sum()),
            "auroc": round(float(auroc(p, y)), 3),
            "auroc_ci": [round(float(v), 3) for v in np.nanpercentile(auroc(p[boot], y[boot]), [2.5, 97.5])],
            "score_range": [round(float(p.min()), 3), round(float(p.max()), 3)],
            "as_written": {"high": rule.high, "low": rule.effective_low, "strong": round(float(strong.mean()), 3),
                           "medium": round(float(1 - (strong | small).mean()), 3), "small": round(float(small.mean()), 3),
                           "error_on_strong_or_small": round(float(wrong.sum() / auto), 3) if auto else None},
        }), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
