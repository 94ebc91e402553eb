"""What code alone decides on the memory sets: the cases `find_secrets` is sure of or
`find_instructions` flags (both refuse before any model is asked), per set and label.

    python bench/memory_code_decisions.py [--sets blind blind2 memtrain_a memtrain_b]

Reads the training sets (`memory_head_data.TRAINING_SETS`), never the test set (blind16), and
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

from seams.instructions import find_instructions  # noqa: E402
from seams.secrets import find_secrets  # noqa: E402


def decided(text: str) -> bool:
    return any(f.certain for f in find_secrets(text, possible=True)) or bool(find_instructions(text))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="*", default=list(TRAINING_SETS), choices=list(TRAINING_SETS))
    args = ap.parse_args()
    total: Counter[tuple[str, bool]] = Counter()
    for name in args.sets:
        for label, cases in load("both", TRAINING_SETS[name]).items():
            if label == "pii":
                continue
            got = Counter(decided(c["text"]) for c in cases)
            total.update({(label, k): v for k, v in got.items()})
            print(f"{name:>11} {label:>9}: decided by code {got[True]} of {len(cases)}")
    for label in ("benign", "secrets", "poisoning"):
        print(f"{'all':>11} {label:>9}: decided by code {total[label, True]} of {total[label, True] + total[label, False]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
