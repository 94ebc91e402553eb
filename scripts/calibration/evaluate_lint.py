"""Precision and recall of the built-in lint rules on their labelled sets, on one judge.

For every item of `calibration/lint/<rule>.jsonl` this reports two things:

* **judge** — the rule's rubric decided by the judge alone on every item (what the model can do
  by itself on code); flagged = an outcome of kind `refuse` at the rubric's thresholds (fitted
  ones when the rubric carries a calibration for this model); the band between the thresholds
  (a `note` in `seams lint`) is counted apart and is *not* a flag. ROC AUC of the deciding
  probability is given too: it does not depend on any threshold.
* **pipeline** — what `seams lint` does: the deterministic check first (a hit flags with
  certainty), the rule's prefilter (`when`) next (no match: a pass, the judge is not asked), the
  judge for the rest.

`--heldout` keeps only the items of the held-out half of each rule's calibration (the split and
seed its calibration block records), so figures of a calibrated rule are not measured on the items
its thresholds were fitted on.

Usage: python scripts/calibration/evaluate_lint.py [--model-dir DIR | --judge URL] [--uncalibrated] [--heldout] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from seams.cli._common import make_judge
from seams.lint import Unit, load_rules
from seams.lint.checks import CHECKS

HERE = Path(__file__).resolve().parents[2] / "calibration" / "lint"  # the lint sets


def auc(scores: list[float], labels: list[bool]) -> float | None:
    """Probability that a random positive scores above a random negative (ties count half)."""
    pos = [s for s, y in zip(scores, labels) if y]
    neg = [s for s, y in zip(scores, labels) if not y]
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def pr(flags: list[bool], labels: list[bool]) -> tuple[float | None, float | None, int, int, int]:
    tp = sum(f and y for f, y in zip(flags, labels))
    fp = sum(f and not y for f, y in zip(flags, labels))
    fn = sum(y and not f for f, y in zip(flags, labels))
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    return precision, recall, tp, fp, fn


def best_f1(scores: list[float], labels: list[bool]) -> tuple[float, float, float, float]:
    """(threshold, F1, precision, recall) of the cut that maximises F1 *on these items*: an
    optimistic, in-sample ceiling for any threshold, reported beside the fitted ones."""
    best = (1.0, 0.0, 0.0, 0.0)
    for t in sorted(set(scores)):
        flags = [s >= t for s in scores]
        p, r, _, _, _ = pr(flags, labels)
        if p and r:
            f1 = 2 * p * r / (p + r)
            if f1 > best[1]:
                best = (t, f1, p, r)
    return best


def _uncalibrated(rule):
    """The rule's rubric without its calibration block: the thresholds written in the file."""
    from seams.rubric import Rubric

    data = rule.rubric.spec.model_dump(mode="json", by_alias=True, exclude_none=True)
    data.pop("calibration", None)
    return Rubric.from_dict(data)


def heldout(rule, items: list[dict]) -> list[dict]:
    """The items of the held-out half of the rule's calibration split (all items without one)."""
    from seams.calibration.extract import split_ids

    cal = rule.rubric.calibration
    split = cal.metrics.split if cal is not None else None
    if split is None:
        return items
    _, report = split_ids([it["id"] for it in items], split.share, split.seed)
    return [it for it in items if it["id"] in report]


def evaluate(judge, rules, *, uncalibrated: bool = False, only_heldout: bool = False) -> dict:
    out = {}
    for rule in rules:
        rubric = _uncalibrated(rule) if uncalibrated else rule.rubric
        path = HERE / f"{rule.id}.jsonl"
        if not path.is_file():
            continue
        items = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        if only_heldout:
            items = heldout(rule, items)
        labels = [any(bool(v) for v in item["labels"].values()) for item in items]
        states = [rule.state_for(item["state"]) for item in items]
        t0 = time.perf_counter()
        decisions = rubric.decide_many(states, judge)
        elapsed = time.perf_counter() - t0
        probs = [d.probability if d.probability is not None else 0.0 for d in decisions]
        judge_flags = [d.kind == "refuse" for d in decisions]
        band = [d.kind == "review" for d in decisions]
        pipe_flags, pipe_by_check, pipe_asked = [], 0, 0
        for item, jf in zip(items, judge_flags):
            st = item["state"]
            unit = Unit(st["path"], st["kind"], st["name"], 1, len(st["code"].splitlines()), st["code"])
            if rule.meta.check and CHECKS[rule.meta.check](unit):
                pipe_flags.append(True)
                pipe_by_check += 1
            elif not rule.wants(unit.text):
                pipe_flags.append(False)
            else:
                pipe_asked += 1
                pipe_flags.append(jf)
        jp, jr, jtp, jfp, jfn = pr(judge_flags, labels)
        pp, prc, ptp, pfp, pfn = pr(pipe_flags, labels)
        out[rule.id] = {
            "items": len(items), "positives": sum(labels), "model": decisions[0].model,
            "calibrated": any(d.calibrated for d in decisions),
            "thresholds": {r.id: {"high": r.high, "low": r.effective_low} for r in rubric.policy.rules},
            "fitted_thresholds": ({k: {"high": h, "low": lo} for k, (h, lo) in
                                   rubric.calibration.threshold_overrides().items()}
                                  if any(d.calibrated for d in decisions) else None),
            "judge": {"precision": jp, "recall": jr, "tp": jtp, "fp": jfp, "fn": jfn, "band": sum(band),
                      "band_positives": sum(b and y for b, y in zip(band, labels)), "auc": auc(probs, labels),
                      "best_f1_in_sample": dict(zip(("threshold", "f1", "precision", "recall"),
                                                    best_f1(probs, labels)))},
            "pipeline": {"precision": pp, "recall": prc, "tp": ptp, "fp": pfp, "fn": pfn,
                         "by_check": pipe_by_check, "asked_judge": pipe_asked},
            "ms_per_item": 1000 * elapsed / len(items),
        }
    return out


def fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def table(results: dict) -> str:
    rows = [("| rule | items (pos) | judge P | judge R | unsure | AUC | best-F1 cut (in-sample): P / R "
             "| pipeline P | pipeline R | by check | asked judge |"),
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for rid, r in results.items():
        j, p = r["judge"], r["pipeline"]
        b = j["best_f1_in_sample"]
        rows.append(f"| {rid} | {r['items']} ({r['positives']}) | {fmt(j['precision'])} | {fmt(j['recall'])} | "
                    f"{j['band']} | {fmt(j['auc'])} | p ≥ {b['threshold']:.2f}: {fmt(b['precision'])} / "
                    f"{fmt(b['recall'])} | {fmt(p['precision'])} | {fmt(p['recall'])} | "
                    f"{p['by_check']} | {p['asked_judge']} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judge", default="local", help="'local' or a System One base URL")
    ap.add_argument("--model", default=None)
    ap.add_argument("--model-dir", type=Path, default=None)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    ap.add_argument("--uncalibrated", action="store_true",
                    help="ignore the rubrics' calibration blocks: use the thresholds written in the files")
    ap.add_argument("--heldout", action="store_true",
                    help="only the held-out half of each rule's calibration split")
    args = ap.parse_args(argv)
    judge = make_judge(args.judge, model=args.model, model_dir=args.model_dir, threads=args.threads)
    rules = load_rules()
    results = evaluate(judge, rules, uncalibrated=args.uncalibrated, only_heldout=args.heldout)
    print(f"judge: {judge.model_id}; {'uncalibrated' if args.uncalibrated else 'calibration blocks applied where fresh'}"
          f"{'; held-out half of each calibration split' if args.heldout else ''}")
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
