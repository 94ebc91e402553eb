"""A judge whose answers the test chooses: for testing policies, not transports."""

from __future__ import annotations

from typing import Any

from seams.answers import Answers, ChoiceAnswer, NoulAnswer, ScoreAnswer
from seams.errors import JudgeError
from seams.judges import SyncJudge
from seams.questions import Choice, Noul


class FixedJudge(SyncJudge):
    """Answers each question from `values`: a probability for a Noul, a distribution (dict) for a
    Choice, a list of level probabilities for a Score. Raises `error` instead when given."""

    def __init__(self, values: dict[str, Any], *, model: str = "fixed-1", error: JudgeError | None = None):
        self.values = values
        self.model = model
        self.error = error
        self.calls = 0

    @property
    def model_id(self) -> str:
        return self.model

    def ask(self, state, questions):
        self.calls += 1
        if self.error is not None:
            raise self.error
        out = {}
        for qid, q in questions.items():
            v = self.values[qid]
            if isinstance(q, Noul):
                out[qid] = NoulAnswer(noul=v)
            elif isinstance(q, Choice):
                out[qid] = ChoiceAnswer.from_probabilities(v)
            else:
                out[qid] = ScoreAnswer.from_probabilities(v, q.criteria)
        return Answers(model=self.model, answers=out)
