"""What code's scans (`find_secrets`, `find_personal`) cost on one candidate, by shape and length:
why `MemoryGate` takes at most `MAX_CANDIDATE_CHARS`.

    python bench/memory_code_scan_cost.py

Every candidate is scanned before any model runs. On ordinary text the scans grow with the text (a
few milliseconds for a memory's length, ~75 ms at 4,000 characters on AMD EPYC); on some shapes (dotted or dashed digit runs, repeated
birth words) a few patterns grow faster than the text, so the cost of a candidate an attacker
chooses is bounded by its length. Printed: seconds per scan (the best of three) for each shape at
500, 1,000, 2,000 and 4,000 characters (the limit), and the ratio of the 4,000 to the 1,000 figure
(4 for linear growth, 16 for quadratic). Asserts nothing.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from seams.builtin.memory import MAX_CANDIDATE_CHARS  # noqa: E402
from seams.judges.local.runtime import machine  # noqa: E402
from seams.personal import find_personal  # noqa: E402
from seams.secrets import find_secrets  # noqa: E402

#: Repeated units of text, each a shape some pattern works hard on, and an ordinary one.
SHAPES = {
    "ordinary memory": "The kids want pancakes on Sundays and waffles on Saturdays. ",
    "dotted digits": "1.2.3.4.5.6.7.8.9.",
    "dashed digit pairs": "12-34-56-78-",
    "digit groups": "1234 5678 ",
    "birth words and numbers": "born born born 12 12 12 ",
    "capitalised street words": "Calle Mayor Grande Nueva ",
    "id words and codes": "passport AB12 CD34 EF56 GH78 ",
}
LENGTHS = (500, 1_000, 2_000, MAX_CANDIDATE_CHARS)


def cost(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        find_secrets(text, possible=True)
        find_personal(text)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    print(machine().line())
    print(f"seconds per candidate (find_secrets(possible=True) + find_personal), best of 3; "
          f"MAX_CANDIDATE_CHARS = {MAX_CANDIDATE_CHARS:,}")
    print(f"  {'shape':26}" + "".join(f"{n:>10,}" for n in LENGTHS) + "   4,000 / 1,000")
    for name, unit in SHAPES.items():
        got = [cost((unit * (n // len(unit) + 1))[:n]) for n in LENGTHS]
        print(f"  {name:26}" + "".join(f"{s:10.3f}" for s in got) + f"   {got[-1] / got[1]:6.1f}")


if __name__ == "__main__":
    main()
