"""What the memory gate costs a candidate as shipped, against the gate as committed at a baseline,
side by side in one process.

    python bench/memory_gate_cost.py [--baseline 9f0bd5b] [--n 40] [--rounds 3] [--threads 1]

The baseline is the memory rubric and the model directory as committed at `--baseline` (read out
of git into a temporary directory, so a change of the flag classifier or the neighbour table is
priced with the heads fitted on it); "now" is the rubric and model as shipped. Both run through
`MemoryGate.admit` against an empty memory (the red flags and `worth` asked about the candidate
alone: the path every new memory takes), on candidates made here from a few templates (none from
a labelled set). Each text is asked once per round and gate: every embedding and classifier logit
is cached by text, so a first round would price the cache's fills and a second its hits; the
figures are of fresh texts, rounds alternating the gates. A text is made fresh by a made-up word
of plain syllables, never by an id-like token: code redacts "now-0-3" or "1703" as a possible
password, so every such candidate reached the model as the same redacted text and the figures were
of cache hits (until 2026-12-07 they were, at 65-150 ms a candidate depending on the salt). The
bench refuses to run on a candidate code would redact. A benchmark, never a test.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from seams.builtin.memory import MemoryGate  # noqa: E402
from seams.instructions import find_instructions  # noqa: E402
from seams.judges.local import LocalJudge  # noqa: E402
from seams.judges.local.runtime import machine  # noqa: E402
from seams.rubric import Rubric  # noqa: E402
from seams.secrets import find_secrets  # noqa: E402

MODEL = "seams/models/seams-minilm"

TEMPLATES = (
    "The user prefers short answers in the {n} project.",
    "Remind me to water the plants every {n} days.",
    "My manager for project {n} is Priya, and she reviews on Fridays.",
    "Deploys for service {n} happen on Thursdays after the stand-up.",
)


#: Made-up words are spelled from these (16 of them: three make 4,096 words).
SYLLABLES = ("ka", "lo", "mi", "ren", "tu", "sa", "vo", "pe", "di", "na", "ro", "fe", "gu", "li", "mo", "ze")


def word(k: int) -> str:
    """The `k`-th made-up word ("kakaka", "kakalo", ...): plain letters, which code leaves alone."""
    return "".join(SYLLABLES[(k >> shift) & 15] for shift in (8, 4, 0))


def candidates(n: int, first: int) -> list[str]:
    """`n` candidates, each with its own made-up word (the `first`-th onwards), none of which code
    redacts or refuses: each reaches the model as written, so none is a cache hit."""
    texts = [TEMPLATES[i % len(TEMPLATES)].format(n=word(first + i)) for i in range(n)]
    for t in texts:
        if find_secrets(t, possible=True) or find_instructions(t):
            raise SystemExit(f"code would redact or refuse {t!r}: the model would not read it as written")
    return texts


def per_candidate_ms(gate: MemoryGate, texts: list[str]) -> float:
    t0 = time.perf_counter()
    for t in texts:
        gate.admit(t, nearest=[])
    return (time.perf_counter() - t0) * 1000 / len(texts)


def baseline(commit: str, tmp: Path) -> tuple[Path, Path]:
    """The memory rubric and the shipped model directory as committed at `commit`, written under
    `tmp`: (rubric file, model directory)."""
    def show(path: str) -> bytes:
        return subprocess.run(["git", "show", f"{commit}:{path}"], cwd=ROOT, capture_output=True, check=True).stdout

    rubric = tmp / "memory-admission.yaml"
    rubric.write_bytes(show("rubrics/memory-admission.yaml"))
    model = tmp / "seams-minilm"
    model.mkdir()
    files = subprocess.run(["git", "ls-tree", "--name-only", commit, f"{MODEL}/"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.split()
    for f in files:
        (model / Path(f).name).write_bytes(show(f))
    return rubric, model


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", default="9f0bd5b", help="the commit whose memory rubric and model are the baseline")
    ap.add_argument("--n", type=int, default=40, help="candidates per round and gate")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="onnxruntime threads of the cross-encoder")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rubric, model = baseline(args.baseline, Path(tmp))
        gates = {"baseline": MemoryGate(judge=LocalJudge(model, intra_op_threads=args.threads), rubric=Rubric.load(rubric)),
                 "now": MemoryGate(judge=LocalJudge(intra_op_threads=args.threads))}
        reads = {k: sorted({h.reads for q, h in g.rubric.current_heads.items() if q in ("poison", "secret")})
                 for k, g in gates.items()}
        print(machine().line())
        print(f"red flags read: baseline ({args.baseline}) {reads['baseline']}, now {reads['now']}")
        if (1 + 2 * args.rounds) * args.n > len(SYLLABLES) ** 3:
            raise SystemExit(f"--n {args.n} x --rounds {args.rounds}: more candidates than made-up words")
        for g in gates.values():  # load every session (the classifier's on its first question)
            per_candidate_ms(g, candidates(2, 0))
        got: dict[str, list[float]] = {k: [] for k in gates}
        for r in range(args.rounds):
            for gi, (k, g) in enumerate(gates.items()):
                # words never asked before by either gate: block 0 warmed them up
                got[k].append(per_candidate_ms(g, candidates(args.n, (1 + 2 * r + gi) * args.n)))
        med = {k: statistics.median(v) for k, v in got.items()}
        for k, v in got.items():
            print(f"{k:>8}: {med[k]:.1f} ms a candidate (median of {args.rounds} rounds of {args.n}: "
                  + ", ".join(f"{x:.1f}" for x in v) + ")")
        print(f"now / baseline: x{med['now'] / med['baseline']:.2f}")


if __name__ == "__main__":
    main()
