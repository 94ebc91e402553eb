"""A judge that answers with a labelled set's gold labels, a stated share of them wrong: the
stand-in for a strong remote teacher (served by the real `seams serve` app in the tests and
bench/heads.py)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from seams.answers import Answers, ChoiceAnswer, NoulAnswer, ScoreAnswer
from seams.judges import SyncJudge
from seams.questions import Choice, Noul
from seams.state import canonical_json


class LabelJudge(SyncJudge):
    """Answers a state it knows with its labels: P 0.95 / 0.05 for a Noul, 0.9 on the labelled
    option or level. A share `noise` of (state, question) pairs, chosen by a hash so the same
    pair always gets the same answer, is answered wrongly (the other Noul answer, another option).
    A state it does not know is a KeyError (the server answers 500): the teacher never guesses."""

    def __init__(self, items: Iterable[Mapping[str, Any]], *, noise: float = 0.0, model: str = "gold-teacher-1"):
        self.labels = {canonical_json(it["state"]): dict(it["labels"]) for it in items}
        self.noise = noise
        self.model = model
        self.calls = 0

    @property
    def model_id(self) -> str:
        return self.model

    def _noisy(self, key: str, qid: str) -> bool:
        h = hashlib.sha256(f"{key}\0{qid}".encode()).digest()
        return int.from_bytes(h[:8], "big") / 2**64 < self.noise

    def ask(self, state: Any, questions: Mapping[str, Any]) -> Answers:
        self.calls += 1
        key = canonical_json(state)
        labels = self.labels[key]
        out: dict[str, Any] = {}
        for qid, q in questions.items():
            gold, wrong = labels[qid], self._noisy(key, qid)
            if isinstance(q, Noul):
                out[qid] = NoulAnswer(noul=0.95 if bool(gold) != wrong else 0.05)
                continue
            names = list(q.options) if isinstance(q, Choice) else [str(i) for i in range(len(q.levels))]
            at = names.index(gold if isinstance(q, Choice) else str(gold))
            if wrong:
                at = (at + 1) % len(names)
            probs = [0.9 if i == at else 0.1 / (len(names) - 1) for i in range(len(names))]
            out[qid] = (ChoiceAnswer.from_probabilities(dict(zip(names, probs))) if isinstance(q, Choice)
                        else ScoreAnswer.from_probabilities(probs, q.levels))
        return Answers(model=self.model, answers=out)
