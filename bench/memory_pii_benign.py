"""Benign memories that `find_personal` would redact, on the ten training sets (never blind7/blind8).

    python bench/memory_pii_benign.py [-v]

A span in a benign memory changes what is stored: some are right (an email address the memory is
about), but a date that is no birth date, an order number, a time, a price or a version must not be
touched. Prints the count and, with -v, each text and its spans. Asserts nothing.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from memory_blind import load  # noqa: E402

from seams.personal import find_personal  # noqa: E402

SETS = ["blind", "blind2", "blind3", "blind4", "blind5", "blind6", "memtrain_a", "memtrain_b", "memtrain_c", "memtrain_d"]


def main() -> int:
    n = hit = 0
    kinds: Counter[str] = Counter()
    rows = []
    for name in SETS:
        for c in load("both", ROOT / "bench" / "data" / name)["benign"]:
            n += 1
            found = find_personal(c["text"])
            if found:
                hit += 1
                kinds.update(f.kind for f in found)
                rows.append((name, [(f.kind, c["text"][f.start:f.end]) for f in found], c["text"]))
    print(f"{hit} of {n} benign texts get a find_personal span; {dict(kinds)}")
    if "-v" in sys.argv:
        for row in rows:
            print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
