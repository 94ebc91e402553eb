"""Labelled texts beside the flag classifier: what a `flag+text+vote` head reads as its last input,
the share of positives among a candidate's nearest labelled texts (docs/heads.md, "Vote heads").

Why: a linear head over the flag's logit and multilingual-e5's embedding draws one plane through
the embedding; poisonings in languages the classifier never read lie in pockets of it that one
plane misses. The labels of the nearest labelled texts find those pockets, across languages (e5
puts a sentence and its translation close). Out of fold by labelled set, over ten sets, the vote
beside the linear inputs let 748 of 2,761 poisonings past at 2 % of benign refused, against 849
for the linear head alone, and 372 of 3,455 secrets at 1 % against 551
(`bench/memory_head_shape_probe.py`). A new labelled set joins the table with no training.

The table (`neighbours.npz`, config `flags.neighbours`) holds each labelled text's embedding as
int8 (unit vectors × 127) and its label per flag (1, 0, or -1 where the flag is not labelled).
The query is rounded the same way, so every dot product is a sum of 384 products of integers in
[-127, 127]: at most 6.2 million in size, below 2**24, so float32 holds every partial sum exactly
and the nearest rows (ties broken by row order) are the same on every CPU and BLAS.
"""

from __future__ import annotations

import functools
import hashlib
import io
from pathlib import Path

import numpy as np

from ...errors import ConfigError

#: int8 steps per unit of a unit vector's coordinate.
SCALE = 127


def quantised(vectors: np.ndarray) -> np.ndarray:
    """Unit vectors [n, d] (or [d]) as the table stores them: int8, × `SCALE`, rounded."""
    return np.clip(np.rint(np.asarray(vectors, dtype=np.float64) * SCALE), -SCALE, SCALE).astype(np.int8)


def votes(queries: np.ndarray, table: np.ndarray, labels: np.ndarray, k: int,
          groups: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """The share of positives among each query's `k` nearest labelled rows of `table`.

    `queries` [m, d] are int8 (`quantised`); `table` [n, d] is int8, or the same values as
    float32 (`Neighbours` keeps that copy, so a vote does not convert the table each time);
    `labels` [n] holds 1, 0 or -1 (unlabelled: never a neighbour). `groups`, the queries' [m] and
    the rows' [n], when given, hides from each query the rows of its own group (fitting leaves out
    the query's own labelled set, as a new author's text has no set of its own in the table).
    Exact on every CPU (the module doc); ties go to the earlier row.
    """
    labelled = labels >= 0
    if labelled.sum() < k:
        raise ValueError(f"{int(labelled.sum())} labelled rows; a vote over {k} neighbours needs at least {k}")
    rows = table if table.dtype == np.float32 else table.astype(np.float32)
    y = np.where(labelled, labels, 0).astype(np.float64)
    out = np.empty(len(queries))
    for start in range(0, len(queries), 1024):
        sim = np.asarray(queries[start:start + 1024], dtype=np.float32) @ rows.T
        sim[:, ~labelled] = -np.inf
        if groups is not None:
            sim[groups[0][start:start + 1024, None] == groups[1][None, :]] = -np.inf
        # the k-th highest score; every row above it is near, and of the rows at it the earliest
        # fill the k (a partition, not a sort: linear in the table)
        kth = np.partition(sim, -k, axis=1)[:, -k:-k + 1] if k > 1 else sim.max(axis=1, keepdims=True)
        above = sim > kth
        at = sim == kth
        near = above | (at & (np.cumsum(at, axis=1) <= k - above.sum(axis=1, keepdims=True)))
        out[start:start + len(sim)] = (near @ y) / k
    return out


class Neighbours:
    """A model's table of labelled texts (`flags.neighbours`), loaded once per file and checked
    against the sha256 its config records."""

    def __init__(self, path: Path, sha256: str, names: list[str]) -> None:
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise ConfigError(f"{path}: the flags' neighbour table cannot be read ({exc})") from None
        digest = hashlib.sha256(raw).hexdigest()
        if digest != sha256:
            raise ConfigError(f"{path}: sha256 {digest[:16]}…; the model's config records {sha256[:16]}… "
                              "(a table of another fit: export it again with bench/fit_memory_heads.py --write)")
        try:
            with np.load(io.BytesIO(raw), allow_pickle=False) as got:  # the bytes just checked, read once
                self.vectors = np.asarray(got["vectors"])
                self.labels = np.asarray(got["labels"])
                flags = [str(n) for n in got["names"]]
        except (OSError, KeyError, ValueError) as exc:
            raise ConfigError(f"{path}: not a neighbour table (vectors, labels, names): {exc}") from None
        if self.vectors.dtype != np.int8 or self.vectors.ndim != 2:
            raise ConfigError(f"{path}: vectors are {self.vectors.dtype} {self.vectors.shape}; expected int8 [rows, dim]")
        if self.labels.shape != (len(self.vectors), len(flags)) or flags != list(names):
            raise ConfigError(f"{path}: labels {self.labels.shape} for flags {flags}; expected "
                              f"[{len(self.vectors)}, {len(names)}] for the classifier's flags {list(names)}")
        self.names = flags
        self.identity = f"{path.stem}@{sha256[:16]}"
        self.dim = int(self.vectors.shape[1])
        # the rows as float32 once (the same integers: `votes` is exact either way), 4 bytes a value
        self._rows = self.vectors.astype(np.float32)

    def vote(self, vector: np.ndarray, flag: str, k: int) -> float:
        """The share of `flag`'s positives among the `k` labelled rows nearest `vector` (a unit
        embedding from the encoder the table was built with)."""
        query = quantised(np.asarray(vector).reshape(1, -1))
        if query.shape[1] != self.dim:
            raise ValueError(f"a {query.shape[1]}-dimensional vector; the table holds {self.dim} dimensions")
        return float(votes(query, self._rows, self.labels[:, self.names.index(flag)], k)[0])


@functools.cache
def neighbours(path: Path, sha256: str, names: tuple[str, ...]) -> Neighbours:
    """The table at `path`, loaded once per process."""
    return Neighbours(path, sha256, list(names))


__all__ = ["SCALE", "Neighbours", "neighbours", "quantised", "votes"]
