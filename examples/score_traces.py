"""Score a file of production traces against a rubric, resumably — in this process or on Ray.

    python examples/score_traces.py            # single process (the default engine)
    python examples/score_traces.py --ray      # a local Ray cluster (pip install "seams[ray]")

The same as `seams score escalation traces.jsonl --out decisions.jsonl [--engine ray]`. The run
is cut short after the first batches and started again: the second run reads what the first wrote
and scores only the rest, so every trace is decided exactly once.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

from seams import Rubric
from seams.traces import score

MESSAGES = [
    "How do I export my photos as a PDF album?",
    "I've been charged three times and nobody answers. I want to speak to a manager.",
    "The print preview is blank on my tablet.",
    "My child swallowed one of the battery cells from the frame, what do I do?",
]


def main() -> None:
    engine = "ray" if "--ray" in sys.argv[1:] else "local"
    rubric = Rubric.builtin("escalation")
    with tempfile.TemporaryDirectory() as tmp:
        traces, out = Path(tmp) / "traces.jsonl", Path(tmp) / "decisions.jsonl"
        with traces.open("w") as f:
            for i in range(200):
                state = {"message": f"{MESSAGES[i % len(MESSAGES)]} (ticket {i})", "context": "Photo-printing app support."}
                f.write(json.dumps({"id": f"ticket-{i}", "state": state}) + "\n")
        # a run that "crashes" after its fourth batch: the lines it wrote are kept
        stop = iter(range(3))
        try:
            score(rubric, traces, out, batch_size=16, progress=lambda n: next(stop))
        except StopIteration:
            pass
        print(f"first run stopped after {len(out.read_text().splitlines())} traces")
        summary = score(rubric, traces, out, batch_size=16, engine=engine)  # type: ignore[arg-type]
        print(f"second run ({engine}): {summary.skipped} already done, {summary.scored} scored, "
              f"{summary.items_per_s:.0f} items/s")
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert sorted(r["id"] for r in rows) == sorted(f"ticket-{i}" for i in range(200))
        print("outcomes:", dict(Counter(r["outcome"] for r in rows)))
        print("one line:", {k: rows[1][k] for k in ("id", "outcome", "rule", "probability", "threshold", "model")})


if __name__ == "__main__":
    main()
