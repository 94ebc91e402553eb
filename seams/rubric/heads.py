"""`HeadedJudge`: a local judge that answers the questions it has fitted heads for with them.

The heads come from a rubric's calibration block (`seams calibrate --heads`, `seams distill`);
`with_heads(judge, rubric)` is how every caller gets one. The local model runs exactly as it
does for `ask` (the same pairs, windows and batches), asked for its pair features as well, so a
headed answer costs the model's run plus one dot product per pair.

A head never applies to a judge it was not fitted on: building a `HeadedJudge` over another
model, or over a model without features, is a `HeadMismatch`. `with_heads` instead returns the
judge unheaded in that case, so the rubric's calibration (fitted on the headed judge, whose
model id says so) reads as stale and `seams check` fails, rather than raising mid-run.
A question whose wording no longer matches its head's fingerprint is answered by the model
alone (the calibration is then stale too, for the same reason).

The headed judge's `model_id` is `<local model id>+heads:<digest of the heads>`, so answers
cached from it, and a calibration fitted on it, never pass for the bare model's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..answers import Answers, ChoiceAnswer, NoulAnswer, ScoreAnswer
from ..errors import HeadMismatch
from ..judges.base import SyncJudge, answer_identity
from ..judges.local.judge import LocalJudge, PairFeatures, _coerce_questions
from ..questions import Choice, Noul, Score
from .head import Head, heads_digest

if TYPE_CHECKING:
    from .rubric import Rubric


_FINGERPRINTS: dict[int, tuple[Noul | Choice | Score, str]] = {}


def _plain_fingerprint(question: Noul | Choice | Score) -> str:
    """The question's fingerprint (its wording), computed once per question object: a rubric asks
    the same objects on every call."""
    hit = _FINGERPRINTS.get(id(question))
    if hit is not None and hit[0] is question:
        return hit[1]
    from .rubric import question_fingerprint

    fp = question_fingerprint(question)
    if len(_FINGERPRINTS) > 4096:
        _FINGERPRINTS.clear()
    _FINGERPRINTS[id(question)] = (question, fp)
    return fp


class HeadedJudge(SyncJudge):
    """`judge` with `heads` (by question id) laid over its answers.

    Parameters
    ----------
    judge:
        The local judge the heads were fitted on (its model must output pair features).
    heads:
        Fitted heads by question id; questions without one are answered by the model alone.
    """

    #: The local model's pairs of many states share batches (bulk work sends chunks to `ask_many`).
    batches = True

    def __init__(self, judge: LocalJudge, heads: Mapping[str, Head]) -> None:
        if not isinstance(judge, LocalJudge):
            raise HeadMismatch(f"heads apply to a local judge only (the model whose features they read), "
                               f"not to {type(judge).__name__} {getattr(judge, 'model_id', '')!r}")
        for qid, head in heads.items():
            if head.model != judge.model_id:
                raise HeadMismatch(f"the head of question {qid!r} was fitted on model {head.model!r}; "
                                   f"it never applies to {judge.model_id!r} (refit: seams calibrate --heads)")
            if judge.feature_dim != head.dim:
                raise HeadMismatch(f"the head of question {qid!r} reads {head.dim} features; model "
                                   f"{judge.model_id!r} outputs {judge.feature_dim or 'none'}")
        self.judge = judge
        self.heads = dict(heads)
        self._digest = heads_digest(self.heads)

    @property
    def model_id(self) -> str:
        return f"{self.judge.model_id}+heads:{self._digest}"

    @property
    def answer_identity(self) -> str:
        return f"{answer_identity(self.judge)}+heads:{self._digest}"

    def __repr__(self) -> str:
        return f"HeadedJudge({self.judge!r}, heads={sorted(self.heads)})"

    def ask(self, state: Any, questions: Mapping[str, Any]) -> Answers:
        return self.ask_many([state], questions)[0]

    def ask_many(self, states: Sequence[Any], questions: Mapping[str, Any]) -> list[Answers]:
        """The model's answers, with every question that has a matching head answered by it."""
        qs = _coerce_questions(questions)
        heads = self.applicable(qs)
        if not heads:
            return [a.model_copy(update={"model": self.model_id}) for a in self.judge.ask_many(states, qs)]
        return [self.apply(a, f, qs, heads) for a, f in self.judge.answers_and_features(states, qs)]

    def applicable(self, questions: Mapping[str, Noul | Choice | Score]) -> dict[str, Head]:
        """The heads that apply to these questions: same id, same wording as fitted."""
        return {qid: self.heads[qid] for qid, q in questions.items()
                if qid in self.heads and self.heads[qid].fingerprint == _plain_fingerprint(q)}

    def apply(self, answers: Answers, features: Mapping[str, PairFeatures],
              questions: Mapping[str, Noul | Choice | Score], heads: Mapping[str, Head]) -> Answers:
        """`answers` (the model's) with the questions in `heads` answered from their features."""
        out = dict(answers.answers)
        for qid, head in heads.items():
            out[qid] = head_answer(head, questions[qid], features[qid], out[qid])
        return answers.model_copy(update={"model": self.model_id, "answers": out})


def head_answer(head: Head, question: Noul | Choice | Score, pf: PairFeatures,
                raw: NoulAnswer | ChoiceAnswer | ScoreAnswer) -> NoulAnswer | ChoiceAnswer | ScoreAnswer:
    """The head's answer to one question, keeping the raw answer's extras (`x_windows`)."""
    probs = head.probabilities(pf.logits, pf.features)
    extra = dict(raw.model_extra or {})
    if isinstance(question, Noul):
        return NoulAnswer(noul=float(probs[0]), **extra)
    if isinstance(question, Choice):
        choice = ChoiceAnswer.from_probabilities(dict(zip(question.options, map(float, probs))))
        return ChoiceAnswer(**choice.model_dump(), **extra) if extra else choice
    score = ScoreAnswer.from_probabilities(probs.tolist(), question.levels)
    return ScoreAnswer(**score.model_dump(), **extra) if extra else score


def rubric_heads(rubric: Rubric, *, current: bool = False) -> dict[str, Head]:
    """The heads stored in a rubric's calibration block, by question id; with `current`, only
    those whose question is asked as it was when they were fitted (same wording, same
    `asked_alone` view of the state)."""
    cal = rubric.calibration
    if cal is None:
        return {}
    heads = {qid: qc.head for qid, qc in cal.questions.items() if qc.head is not None}
    if not current:
        return heads
    from .rubric import question_fingerprint

    asked = rubric.spec.questions
    return {qid: h for qid, h in heads.items() if qid in asked and cal.questions[qid].fingerprint
            == question_fingerprint(asked[qid], rubric.spec.asked_alone.get(qid))}


def with_heads(judge: Any, rubric: Rubric) -> Any:
    """`judge` with the rubric's heads when they were fitted on it; `judge` itself otherwise.

    A rubric without heads, a remote judge, or a local model the heads were not fitted on gets
    the judge back unchanged: no head is applied, and the calibration fitted on the headed judge
    reads as stale for it (`rubric.stale_reasons`, `seams check`). The head of a question whose
    wording or `asked_alone` view changed since the fit is left out.
    """
    heads = rubric_heads(rubric, current=True)
    if not heads or not isinstance(judge, LocalJudge) or judge.feature_dim is None:
        return judge
    if any(h.model != judge.model_id or h.dim != judge.feature_dim for h in heads.values()):
        return judge
    return HeadedJudge(judge, heads)


def head_stale_reasons(rubric: Rubric, model_id: str | None) -> list[str]:
    """Why the rubric's heads do not apply to the judge whose answers carry `model_id`."""
    if model_id is None:
        return []
    base = model_id.split("+heads:")[0]
    return [f"question {qid!r} has a head fitted on model {h.model!r}; it is never applied to {base!r}"
            for qid, h in rubric_heads(rubric).items() if h.model != base]


__all__ = ["HeadedJudge", "head_answer", "head_stale_reasons", "rubric_heads", "with_heads"]
