"""The review loop end to end, measured: route → review → refit → fewer reviews.

    python bench/review_loop.py [--rubric confirm-before-act] [--audit 0.2] [--seed 0]
                                [--out DIR] [--json OUT] [--heads] [-- CALIBRATE OPTIONS...]

1. **route** — a built-in rubric, with its shipped calibration taken out (as a user's new rubric
   starts: the thresholds as written), decides every state of its fit set
   (`calibration/<rubric>/fit.jsonl`) with the shipped local model; each decision whose outcome is
   a review goes into a `ReviewQueue` file, and so does a seeded `--audit` share of the automated
   ones (a spot check: a fit from band items alone never sees the cases it automates);
2. **review** — a stand-in reviewer claims each item and resolves it with the set's true labels,
   through `ReviewQueue.claim` / `resolve` (what the desk's Resolve button calls);
3. **refit** — `seams calibrate RUBRIC --from-queue QUEUE` (the real command, `--heads` when
   given, and any options after `--`, such as `--capacity 0.2`), which fits on a seeded half of the reviews and reports before/after on the other half;
4. **fewer reviews** — the rubric before and after the refit decides the *held-out* set
   (`calibration/<rubric>/heldout.jsonl`, states neither the queue nor the fit saw), from the same
   model answers; it prints how many go to review, how many are automated, and the error rate on
   the automated ones against the labels of the question the outcome rests on.

The model's answers are cached in one SQLite file in `--out`, shared with the calibrate command,
so every state is run through the model once. Figures in docs/review.md came from this script.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from seams.judges.cache import CachedJudge  # noqa: E402
from seams.judges.local import LocalJudge  # noqa: E402
from seams.queue import ReviewQueue  # noqa: E402
from seams.rubric import Rubric  # noqa: E402
from seams.rubric.heads import with_heads  # noqa: E402
from seams.rubric.rubric import builtin_path  # noqa: E402


def _uncalibrated(name: str, into: Path) -> Path:
    """The built-in rubric's file without its calibration block: thresholds as written."""
    text = builtin_path(name).read_text(encoding="utf-8")
    cut = text.find("\ncalibration:")
    if cut >= 0:
        head = text[:cut]
        marker = head.rfind("\n# Fitted by `seams calibrate`")
        text = (head[:marker] if marker >= 0 else head).rstrip() + "\n"
    path = into / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _decide(rubric: Rubric, items: list[dict[str, Any]], judge: Any) -> list[Any]:
    """The rubric's decisions; through its heads when it has them (on the local model itself:
    heads read its pair features, which the answer cache does not keep)."""
    headed = with_heads(judge.judge, rubric)
    j = headed if headed is not judge.judge else judge
    answered = rubric.answer_many([i["state"] for i in items], j)
    return [rubric.decide_answers(a, state=i["state"], keep_state=False) for i, a in zip(items, answered, strict=True)]


def _wrong(decision: Any, labels: dict[str, Any]) -> bool | None:
    """Whether an automated decision is wrong by the label of the question its rule read (an act
    outcome wrong on a false label, a refusal on a true one); None when that label is unknown."""
    qid = decision.question
    if qid is None or qid not in labels or not isinstance(labels[qid], bool):
        return None
    return labels[qid] != (decision.kind == "act")


def _held_out(tag: str, decisions: list[Any], items: list[dict[str, Any]]) -> dict[str, Any]:
    kinds = Counter(d.kind for d in decisions)
    judged = [_wrong(d, i["labels"]) for d, i in zip(decisions, items, strict=True) if d.kind != "review"]
    known = [w for w in judged if w is not None]
    out = {"states": len(decisions), "review": kinds["review"], "automated": len(judged),
           "outcomes": dict(Counter(d.outcome for d in decisions)), "errors_on_automated": sum(known),
           "automated_with_label": len(known),
           "error_rate_on_automated": round(sum(known) / len(known), 4) if known else None}
    print(f"  {tag:<8} reviews {out['review']:>4} of {out['states']}  automated {out['automated']:>4}  "
          f"errors on automated {out['errors_on_automated']}/{out['automated_with_label']}"
          f" ({'—' if out['error_rate_on_automated'] is None else format(out['error_rate_on_automated'], '.1%')})  "
          f"outcomes {out['outcomes']}", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rubric", default="confirm-before-act", help="a built-in rubric with a set in calibration/")
    ap.add_argument("--audit", type=float, default=0.2, help="share of automated decisions also queued (a spot check)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the audit sample and of calibrate's split")
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "seams-review-loop",
                    help="where the queue, the rubric copy and the answer cache go")
    ap.add_argument("--json", type=Path, default=None, help="write the figures here")
    ap.add_argument("--heads", action="store_true", help="refit with --heads (a head per question, then calibration)")
    ap.add_argument("calibrate_args", nargs="*", help="after --: more options for seams calibrate")
    args = ap.parse_args()

    args.out.mkdir(parents=True, exist_ok=True)
    queue_path, cache = args.out / "reviews.sqlite", args.out / "answers.sqlite"
    queue_path.unlink(missing_ok=True)
    rubric_path = _uncalibrated(args.rubric, args.out)
    before = Rubric.load(rubric_path)
    judge = CachedJudge(LocalJudge(), cache)
    fit_items = _read(ROOT / "calibration" / args.rubric / "fit.jsonl")
    held_items = _read(ROOT / "calibration" / args.rubric / "heldout.jsonl")
    t0 = time.perf_counter()

    # 1. route
    rng = random.Random(args.seed)
    queue = ReviewQueue(queue_path, capacity=max(1, len(fit_items)), overflow="signal")
    routed = Counter()
    for item, d in zip(fit_items, _decide(before, fit_items, judge), strict=True):
        why = "review" if d.kind == "review" else "audit" if rng.random() < args.audit else None
        if why is None:
            continue
        routed[why] += 1
        queue.enqueue(item["state"], key=item["id"], decision=d, meta={"routed": why})
    print(f"route: {len(fit_items)} states of {args.rubric}'s fit set decided with its written thresholds: "
          f"{routed['review']} to review, {routed['audit']} automated ones spot-checked ({args.audit:.0%}); "
          f"queue counts {queue.counts()}", flush=True)

    # 2. review: the stand-in reviewer answers with the true labels, through the queue
    truth = {i["id"]: i["labels"] for i in fit_items}
    resolved = 0
    while (item := queue.claim("stand-in", lease_s=60)) is not None:
        queue.resolve(item.id, truth[item.key], reviewer="stand-in")
        resolved += 1
    print(f"review: {resolved} items resolved with their true labels; queue counts {queue.counts()}", flush=True)
    queue.close()

    # 3. refit from the queue, with the real command
    cmd = [sys.executable, "-m", "seams", "calibrate", str(rubric_path), "--from-queue", str(queue_path),
           "--cache", str(cache), "--seed", str(args.seed), "--quiet", *(["--heads"] if args.heads else []), *args.calibrate_args]
    print("refit: " + " ".join(["seams", *cmd[3:]]).replace(str(ROOT) + "/", ""), flush=True)
    done = subprocess.run(cmd, check=False, capture_output=True, text=True, cwd=ROOT)
    sys.stdout.write("  " + done.stdout.replace("\n", "\n  ").rstrip() + "\n")
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"seams calibrate exited {done.returncode}")
    sys.stdout.write("".join(f"  {line}\n" for line in done.stderr.splitlines()))
    after = Rubric.load(rubric_path)

    # 4. fewer reviews? the held-out set, before and after
    print(f"held out: {len(held_items)} states of calibration/{args.rubric}/heldout.jsonl", flush=True)
    figures = {
        "rubric": args.rubric, "audit": args.audit, "seed": args.seed, "heads": args.heads,
        "calibrate_args": args.calibrate_args,
        "model": judge.model_id, "fit_states": len(fit_items), "routed": dict(routed), "resolved": resolved,
        "before": _held_out("before", _decide(before, held_items, judge), held_items),
        "after": _held_out("after", _decide(after, held_items, judge), held_items),
    }
    figures["seconds"] = round(time.perf_counter() - t0, 1)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"({figures['seconds']} s; queue {queue_path.relative_to(ROOT) if queue_path.is_relative_to(ROOT) else queue_path})")


if __name__ == "__main__":
    main()
