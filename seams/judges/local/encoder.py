"""`SentenceEncoder`: the base sentence encoder shipped beside the cross-encoder, for cosines.

The cross-encoder reads a (hypothesis, state) pair; the encoder embeds one text at a time, so
an option's own text ("name: description", a level's description) and a state are embedded
once each and compared by cosine. `LocalJudge` blends that cosine with the cross-encoder's
logit per question type (`config.Blend`): the fine-tuned cross-encoder reads instructions, the
untouched encoder keeps the similarity it was pre-trained for, and on questions neither saw the
blend beats both (docs/local-judge.md, "The encoder blend").

The graph takes `input_ids`, `attention_mask` and `token_type_ids` ([batch, tokens]) and
returns one unit-length embedding per row (mean-pooled over the mask and normalised inside the
graph). Texts are cut at the config's `max_length` tokens; embeddings are cached by text (the
options of a question are embedded once per process), behind a lock so one judge serves many
threads.

`cosines_soon` runs the same work on the encoder's own thread: a blended question whose plan does
not wait for its cosines (a Noul, a Choice too short to shortlist) has them computed while the
cross-encoder reads its pairs, so on a machine with a free core the encoder adds little to the
wall time of an ask (docs/local-judge.md, "The encoder blend").
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from ...errors import ConfigError, ModelError
from .config import EncoderConfig

#: Texts whose embeddings are kept (options and recent states); cleared when full.
_CACHE = 16384


def cached_embeddings(texts: Sequence[str], cache: dict[str, np.ndarray], lock: threading.Lock,
                      run: Callable[[list[str]], Sequence[np.ndarray]], dim: int, limit: int = _CACHE) -> np.ndarray:
    """[len(texts), dim]: each distinct text not in `cache` run once (`run`, shortest first,
    outside `lock`, so callers on other threads read the cache meanwhile), then kept in `cache`,
    which is cleared when it would pass `limit`. Every encoder of texts here caches through it."""
    with lock:
        known = {t: cache[t] for t in set(texts) if t in cache}
    todo = sorted(set(texts) - known.keys(), key=len)
    if todo:
        fresh = dict(zip(todo, run(todo), strict=True))
        known.update(fresh)
        with lock:
            if len(cache) + len(fresh) > limit:
                cache.clear()
            cache.update(fresh)
    if not texts:
        return np.zeros((0, dim), dtype=np.float32)
    return np.stack([known[t] for t in texts])


class SentenceEncoder:
    """Unit-length embeddings of texts, from `encoder.onnx`, with the cross-encoder's tokenizer."""

    def __init__(self, path: Path, config: EncoderConfig, tokenizer: Tokenizer, session: ort.InferenceSession,
                 pad_id: int, *, batch_size: int = 32) -> None:
        # batch_size 1 for a dynamically quantised graph: its activation scales span the batch, so
        # a text's embedding would move with its batch mates (as the cross-encoder's logits do)
        self.batch_size = batch_size
        self.path = path
        self.config = config
        self._tokenizer = tokenizer
        self._session = session
        self._pad_id = pad_id
        outputs = {o.name: o for o in session.get_outputs()}
        if config.output not in outputs:
            raise ConfigError(f"{path}: no output {config.output!r} (it has {sorted(outputs)})")
        shape = outputs[config.output].shape
        if len(shape) != 2 or not isinstance(shape[1], int):
            raise ConfigError(f"{path}: output {config.output!r} has shape {shape}; expected [batch, d]")
        self.dim = int(shape[1])
        self._inputs = [i.name for i in session.get_inputs()]
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None  # started on the first `cosines_soon`

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """[len(texts), d] unit-length embeddings, each text run once however often it appears."""
        return cached_embeddings(texts, self._cache, self._lock, self._run, self.dim)

    def cosines(self, options: Sequence[str], text: str) -> np.ndarray:
        """The cosine of each of `options` with `text`."""
        vecs = self.embed([*options, text])
        return (vecs[:-1] @ vecs[-1]).astype(np.float64)

    def cosines_soon(self, options: Sequence[str], text: str) -> Future[np.ndarray]:
        """`cosines(options, text)`, computed on the encoder's thread; done at once when every
        embedding is cached. One worker: the encoder's runs queue behind each other, never
        beside each other, so callers overlapping it with the cross-encoder use at most one
        more core."""
        with self._lock:
            cached = all(t in self._cache for t in (*options, text))
            if not cached and self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="seams-encoder")
            pool = self._pool
        if cached:
            done: Future[np.ndarray] = Future()
            done.set_result(self.cosines(options, text))
            return done
        assert pool is not None  # made above for the first text not cached
        return pool.submit(self.cosines, list(options), text)

    def _run(self, texts: list[str]) -> list[np.ndarray]:
        out: list[np.ndarray] = []
        for start in range(0, len(texts), self.batch_size):
            chunk = texts[start:start + self.batch_size]
            encs = [self._tokenizer.encode(t, add_special_tokens=True) for t in chunk]
            limit = self.config.max_length
            rows = [e.ids[:limit - 1] + e.ids[-1:] if len(e.ids) > limit else e.ids for e in encs]
            width = max(len(r) for r in rows)
            ids = np.full((len(rows), width), self._pad_id, dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for k, r in enumerate(rows):
                ids[k, :len(r)] = r
                mask[k, :len(r)] = 1
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            try:
                got = self._session.run([self.config.output], {n: feed[n] for n in self._inputs})[0]
            except Exception as exc:  # onnxruntime raises its own exception types
                raise ModelError(f"{self.path}: onnxruntime failed: {exc}") from exc
            got = np.asarray(got, dtype=np.float32)
            if got.shape != (len(rows), self.dim) or not np.all(np.isfinite(got)):
                raise ModelError(f"{self.path}: the encoder returned {got.shape} or a non-finite value")
            out.extend(got)
        return out


__all__ = ["SentenceEncoder", "cached_embeddings"]
