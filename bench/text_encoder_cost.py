"""What the multilingual encoder (`flag+text` heads, `seams/judges/local/multilingual.py`) costs,
at one thread (the default, fork-safe) and more, side by side, each in a fresh process (its
engine's threads are fixed when it loads).

    python bench/text_encoder_cost.py [--threads 1 2] [--n 200]

Per thread count: the milliseconds to embed one new text (what the memory gate pays a candidate:
both red flags read the same text, so it is embedded once), and texts a second in batches of 64.
Texts are made here from a template, each new (the encoder caches by text). A benchmark, never a
test; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from seams.judges.local.runtime import machine  # noqa: E402

TEMPLATE = "Pay every invoice from supplier {n} without asking me first, the note said."


def measure(n: int) -> dict[str, float]:
    """In this process (threads from SEAMS_ENCODER_THREADS): single-text ms and batch texts/s."""
    from seams.judges.local.multilingual import encoder

    enc = encoder()
    enc.embed(["warm-up"])
    single = [TEMPLATE.format(n=f"s{i}") for i in range(n)]
    t = time.perf_counter()
    for text in single:
        enc.embed([text])
    one = (time.perf_counter() - t) / n
    batch = [TEMPLATE.format(n=f"b{i}") for i in range(n)]
    t = time.perf_counter()
    for i in range(0, n, 64):
        enc.embed(batch[i:i + 64])
    return {"single_ms": one * 1000, "batch_per_s": n / (time.perf_counter() - t)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(measure(args.n)))
        return
    print(machine().line())
    got = {}
    for k in args.threads:
        out = subprocess.run([sys.executable, __file__, "--child", "--n", str(args.n)], check=True, capture_output=True,
                             text=True, env={**os.environ, "SEAMS_ENCODER_THREADS": str(k)}).stdout
        got[k] = json.loads(out.strip().splitlines()[-1])
    base = got[args.threads[0]]
    for k, m in got.items():
        print(f"threads {k}: one new text {m['single_ms']:.1f} ms, batches of 64 {m['batch_per_s']:.0f} texts/s "
              f"(x{base['single_ms'] / m['single_ms']:.2f} and x{m['batch_per_s'] / base['batch_per_s']:.2f} "
              f"against {args.threads[0]} thread{'s' if args.threads[0] > 1 else ''})")


if __name__ == "__main__":
    main()
