"""Reading the state once: answers from the sentence encoder's embeddings and small fitted heads.

The cross-encoder reads every (hypothesis, state) pair, so k questions about one state cost k
model runs. The two-tower reading embeds the state once (with the encoder the config's
`towers.encoder` names, else the model's `encoder.onnx`), embeds each question's texts once per
process (the encoder's text cache),
and answers each question with a small head over a handful of features of those vectors: cosines,
cosines centred on how near the question sits to states in general and the state to questions in
general, and for Scores the nearest of the state's parts. The k-th question then costs a few dot
products, not a model run (docs/local-judge.md, "Reading the state once").

The heads are fitted on the written corpus's training split by `python -m training two-tower
export` (`training/two_tower.py`, which computes its features with `pair_features` here, so
training and the runtime read the same numbers) and stored in `towers.npz` beside the model,
named by the model's config (`towers`). The file holds arrays only (loaded without pickle) and
the sha256 of the encoder graph the heads were fitted on: heads fitted on one encoder's vectors
are refused on another's.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import ConfigError

FORMAT = "seams.towers/1"
KINDS = ("noul", "choice", "score")

#: Feature sets of a (state, question) pair, by name: the blocks `pair_features` puts side by side.
FEATURES: dict[str, tuple[str, ...]] = {
    "cos": ("cos_o", "cos_h"),
    "prod": ("uh", "cos_o", "cos_h"),
    "prod2": ("uh", "uo", "cos_o", "cos_h"),
    "sbert": ("uh", "adh", "cos_o", "cos_h"),
    "sbert2": ("uh", "adh", "uo", "ado", "cos_o", "cos_h"),
    "ctr": ("cos_o", "cos_h", "ctr"),
    "prodctr": ("uh", "cos_o", "cos_h", "ctr"),
    "seg": ("cos_o", "cos_h", "ctr", "seg"),
}

_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def segments(text: str, max_segments: int = 12) -> list[str]:
    """The state's parts, for the "seg" block: each top-level field of a rendered object state (a
    line that is not indented, with the indented lines under it), and within a long one (over 200
    characters) its sentences. A one-part state gives itself."""
    parts: list[str] = []
    for line in text.split("\n"):
        if parts and line[:1] in (" ", "\t", "-"):
            parts[-1] += "\n" + line
        elif line.strip():
            parts.append(line)
    out: list[str] = []
    for part in parts:
        out += [x for x in _SENTENCE.split(part) if x.strip()] if len(part) > 200 else [part]
    return out[:max_segments] or [text]


def pair_features(
    kind: str, u: np.ndarray, h: np.ndarray, o: np.ndarray, spec: tuple[str, ...] | list[str],
    ref_u: np.ndarray | None = None, ref_h: np.ndarray | None = None, seg: np.ndarray | None = None,
) -> np.ndarray:
    """[options, features] of one question about one state.

    `u` [d] is the state's unit embedding, `h` [n, d] each hypothesis (instructions + option, as
    the cross-encoder reads it), `o` [n, d] each option's own text (a Noul's: its hypothesis),
    `seg` [m, d] the state's parts. `ref_u` / `ref_h` are the mean embeddings of reference states
    and hypotheses (the "ctr" block: a cosine read against how near the question sits to states
    in general, and the state to questions). For a Choice or Score the cosines are also given
    relative to the question's mean; a Score adds where each level sits on its ladder."""
    n = len(h)
    cos_o = (o @ u).astype(np.float64)
    cos_h = (h @ u).astype(np.float64)
    parts: list[np.ndarray] = []
    for name in spec:
        if name == "uh":
            parts.append(h * u)
        elif name == "uo":
            parts.append(o * u)
        elif name == "adh":
            parts.append(np.abs(h - u))
        elif name == "ado":
            parts.append(np.abs(o - u))
        elif name in ("cos_o", "cos_h"):
            c = cos_o if name == "cos_o" else cos_h
            parts.append(np.stack([c, c - c.mean() if kind != "noul" else np.zeros(n)], 1))
        elif name == "ctr":
            if ref_u is None or ref_h is None:
                raise ValueError("the ctr block needs the reference means ref_u and ref_h")
            by_q = (h @ ref_u).astype(np.float64)  # each option's mean cosine with reference states
            by_s = float(u @ ref_h)  # the state's mean cosine with reference hypotheses
            parts.append(np.stack([cos_h - by_q, cos_h - by_s, cos_h - by_q - by_s], 1))
        elif name == "seg":  # the nearest of the state's parts, and the mean one
            s = seg if seg is not None else u[None]
            sh, so = s @ h.T, s @ o.T  # [m, n]
            parts.append(np.stack([sh.max(0), sh.mean(0), sh.max(0) - cos_h, so.max(0), so.mean(0)], 1))
        else:
            raise ValueError(f"unknown feature block {name!r}; known: uh, uo, adh, ado, cos_o, cos_h, ctr, seg")
    if kind == "score":
        pos = np.arange(n) / max(n - 1, 1)
        parts.append(np.stack([pos, pos * cos_o, pos * cos_h], 1))
    elif parts:
        parts.append(np.zeros((n, 3)))
    return np.concatenate(parts, 1).astype(np.float32)


@dataclass(frozen=True)
class TowerHead:
    """s(x) = w0·z + c (+ w·relu(W z + b) with a hidden layer), z = (x − mu) / sd: one score per
    option, read as a logit (a Noul's through a sigmoid, a Choice's or Score's through a softmax
    over its options)."""

    features: str
    mu: np.ndarray
    sd: np.ndarray
    w0: np.ndarray
    c: float
    W: np.ndarray | None = None
    b: np.ndarray | None = None
    w: np.ndarray | None = None

    @property
    def spec(self) -> tuple[str, ...]:
        return FEATURES[self.features]

    @property
    def reads_segments(self) -> bool:
        return "seg" in self.spec

    def score(self, x: np.ndarray) -> np.ndarray:
        z = ((x - self.mu) / self.sd).astype(np.float32)
        s = z @ self.w0 + self.c
        if self.W is not None and self.b is not None and self.w is not None:
            s = s + np.maximum(z @ self.W + self.b, 0) @ self.w
        return np.asarray(s, dtype=np.float64)

    def arrays(self, kind: str) -> dict[str, np.ndarray]:
        out = {"mu": self.mu, "sd": self.sd, "w0": self.w0, "c": np.array([self.c], dtype=np.float32)}
        if self.W is not None and self.b is not None and self.w is not None:
            out.update(W=self.W, b=self.b, w=self.w)
        return {f"{kind}.{k}": np.asarray(v, dtype=np.float32) for k, v in out.items()}


@dataclass(frozen=True)
class Towers:
    """The fitted heads of each question type, the reference means, and the encoder they read."""

    heads: dict[str, TowerHead]
    ref_u: np.ndarray
    ref_h: np.ndarray
    encoder_sha256: str
    meta: dict[str, Any]
    digest: str = ""

    def logits(self, kind: str, u: np.ndarray, h: np.ndarray, o: np.ndarray,
               seg: np.ndarray | None = None) -> np.ndarray:
        """One logit per option (a Noul: one) of a question about the state embedded as `u`."""
        head = self.heads[kind]
        return head.score(pair_features(kind, u, h, o, head.spec, self.ref_u, self.ref_h, seg))

    def save(self, path: Path) -> None:
        """Write the heads as arrays only (no pickle); `load` reads them back."""
        meta = {**self.meta, "format": FORMAT, "encoder_sha256": self.encoder_sha256,
                "heads": {k: {"features": h.features, "hidden": 0 if h.W is None else int(h.W.shape[1])}
                          for k, h in self.heads.items()}}
        arrays: dict[str, Any] = {k: v for kind, head in self.heads.items() for k, v in head.arrays(kind).items()}
        arrays.update(meta=np.array(json.dumps(meta, sort_keys=True)), ref_u=self.ref_u.astype(np.float32),
                      ref_h=self.ref_h.astype(np.float32))
        with path.open("wb") as f:
            np.savez(f, **arrays)

    @classmethod
    def load(cls, path: Path, encoder_path: Path | None = None) -> Towers:
        """The heads in `path`, checked: every type present with its arrays, and (with
        `encoder_path`) fitted on that encoder graph's vectors. Raises `ConfigError` naming the file."""
        try:
            raw = path.read_bytes()
            with np.load(path, allow_pickle=False) as z:
                got = {k: z[k] for k in z.files}
            meta = json.loads(str(got["meta"]))
        except (OSError, ValueError, KeyError) as exc:
            raise ConfigError(f"{path}: not a towers file ({FORMAT}): {exc}") from None
        if meta.get("format") != FORMAT:
            raise ConfigError(f"{path}: format {meta.get('format')!r}; expected {FORMAT!r}")
        heads = {}
        for kind in KINDS:
            spec = meta.get("heads", {}).get(kind)
            if spec is None or spec.get("features") not in FEATURES:
                raise ConfigError(f"{path}: no head for {kind} questions, or an unknown feature set")
            try:
                a = {k: got[f"{kind}.{k}"] for k in ("mu", "sd", "w0", "c")}
                hidden = {k: got[f"{kind}.{k}"] for k in ("W", "b", "w")} if spec.get("hidden") else {}
            except KeyError as exc:
                raise ConfigError(f"{path}: the {kind} head lacks array {exc}") from None
            heads[kind] = TowerHead(spec["features"], a["mu"], a["sd"], a["w0"], float(a["c"][0]), **hidden)
        sha = str(meta.get("encoder_sha256", ""))
        if encoder_path is not None:
            actual = hashlib.sha256(encoder_path.read_bytes()).hexdigest()
            if actual != sha:
                raise ConfigError(
                    f"{path}: its heads were fitted on an encoder with sha256 {sha[:12]}…, but {encoder_path} "
                    f"is {actual[:12]}…; refit them (python -m training two-tower export)"
                )
        return cls(heads, got["ref_u"], got["ref_h"], sha, meta, hashlib.sha256(raw).hexdigest()[:8])


__all__ = ["FEATURES", "FORMAT", "TowerHead", "Towers", "pair_features", "segments"]
