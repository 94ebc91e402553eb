"""Build the labelled sets for the calibration runs in `calibration/snli-contradiction/` and
`calibration/injection/` from the public data in ../shared/data.

    python scripts/calibration/build_sets.py [--data ../shared/data] [--check]

* `snli-contradiction/set.jsonl` — SNLI dev pairs whose premise falls on the *evaluation* side of
  the shipped model's training split (`training.mixture.is_eval(premise, 0.15)`, the same
  stable hash the trainer uses), so the model never trained on them. State
  `{"statement_1": premise, "statement_2": hypothesis}`; label `contradiction` is true when SNLI's
  gold label is "contradiction" (entailment and neutral are false).
* `injection/set.jsonl` — the evaluation side of the trainer's injection data
  (`training.mixture.injection_items(data, "eval")`): deepset/prompt-injections and
  jailbreak-classification rows whose text hashes to evaluation (`is_eval(text, 0.2)`), and BIPIA
  email/table/code contexts on the evaluation side with attacks from the held-out attack
  categories inserted (the plain context is the negative). State: the text; label `injection`.

The rubrics beside them ask in wordings the trainer holds out (`con-9`, `inj-11`), so a
calibration run measures the model on items and wordings it has not seen. Deterministic: the same
data gives byte-identical files (each well under 2 MB, so they are committed; `--check` rebuilds
in memory and fails if a committed file differs).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))

from training import SHARED_DATA
from training.mixture import injection_items, is_eval  # the training split's own readers and hashes

MAX_BYTES = 2_000_000


def snli(data: Path) -> list[dict[str, Any]]:
    out = []
    with open(data / "nli/snli_dev.jsonl", encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            r = json.loads(line)
            if r["label"] not in ("entailment", "neutral", "contradiction") or not is_eval(r["premise"], 0.15):
                continue
            out.append({"id": f"snli-dev-{lineno}",
                        "state": {"statement_1": r["premise"], "statement_2": r["hypothesis"]},
                        "labels": {"contradiction": r["label"] == "contradiction"}})
    return out


def injection(data: Path) -> list[dict[str, Any]]:
    out, seen = [], set()
    for text, _task, label, source in injection_items(data, "eval"):
        key = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
        if key in seen:  # the same text twice (a context reused): keep the first
            continue
        seen.add(key)
        out.append({"id": f"{source}-{key}", "state": text, "labels": {"injection": bool(label)}})
    return out


def render(items: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(it, ensure_ascii=False, sort_keys=True) + "\n" for it in items)


def main() -> int:
    ap = argparse.ArgumentParser(description="Build the calibration runs' labelled sets.")
    ap.add_argument("--data", type=Path, default=SHARED_DATA)
    ap.add_argument("--check", action="store_true", help="fail if a committed set differs from a rebuild")
    args = ap.parse_args()
    status = 0
    for name, build in (("snli-contradiction", snli), ("injection", injection)):
        built = build(args.data)
        text = render(built)
        path = ROOT / name / "set.jsonl"
        size = len(text.encode("utf-8"))
        if size > MAX_BYTES:
            print(f"{path}: {size:,} bytes is over {MAX_BYTES:,}; not written", file=sys.stderr)
            status = 1
            continue
        items = len(built)
        positives = sum(any(v is True for v in it["labels"].values()) for it in built)
        if args.check:
            same = path.is_file() and path.read_text(encoding="utf-8") == text
            print(f"{path}: {'up to date' if same else 'DIFFERS from a rebuild'}")
            status |= 0 if same else 1
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"{path}: {items} items, {positives} positive, {size:,} bytes")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
