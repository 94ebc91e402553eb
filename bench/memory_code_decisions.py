"""What code alone decides on the memory sets: the cases `find_secrets` is sure of or
`find_instructions` flags in disguise (both refuse before any model is asked), and the orders
it reads in plain words, which the model weighs (`MemoryGate.order_cut`), per set and label.

    python bench/memory_code_decisions.py [--sets blind blind2 memtrain_a memtrain_b]

Reads the training sets (`memory_head_data.TRAINING_SETS`), never the test sets (blind16, blind17), and
prints counts only: decided by code / cases, per label. A benign case decided by code is a false
refusal no cut-point can undo. Asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from memory_blind import load  # noqa: E402
from memory_head_data import TRAINING_SETS  # noqa: E402

from seams.instructions import disguised, find_instructions  # noqa: E402
from seams.secrets import find_secrets  # noqa: E402


def decided(text: str) -> str:
    """"code": refused before any model (a secret code is sure of, an order written in disguise);
    "weighed": an order code reads, quarantined when P(poison) reaches the gate's order cut
    (`MemoryGate.order_cut`, since 2026-12-07); "" otherwise."""
    if any(f.certain for f in find_secrets(text, possible=True)):
        return "code"
    orders = find_instructions(text)
    return ("code" if disguised(text, orders) else "weighed") if orders else ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="*", default=list(TRAINING_SETS), choices=list(TRAINING_SETS))
    args = ap.parse_args()
    total: Counter[tuple[str, str]] = Counter()
    for name in args.sets:
        for label, cases in load("both", TRAINING_SETS[name]).items():
            if label == "pii":
                continue
            got = Counter(decided(c["text"]) for c in cases)
            total.update({(label, k): v for k, v in got.items()})
            print(f"{name:>11} {label:>9}: decided by code {got['code']}, orders weighed by the model "
                  f"{got['weighed']}, of {len(cases)}")
    for label in ("benign", "secrets", "poisoning"):
        n = sum(v for (lb, _), v in total.items() if lb == label)
        print(f"{'all':>11} {label:>9}: decided by code {total[label, 'code']}, orders weighed by the model "
              f"{total[label, 'weighed']}, of {n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
