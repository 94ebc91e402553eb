"""Synthetic judges whose true probabilities are known, and labelled sets drawn from them.

An item's state carries its true probability `p`; the label is drawn as Bernoulli(p), so a
judge that reports `p` is perfectly calibrated and the right thresholds are known in closed form.
`SynthJudge` reports a distorted probability σ(k·logit(p) + b) (k > 1: overconfident), so
recalibration has something to undo.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from seams.answers import Answers, ChoiceAnswer, NoulAnswer, ScoreAnswer
from seams.judges import SyncJudge
from seams.questions import Choice, Noul


def distort(p: np.ndarray | float, k: float = 1.0, b: float = 0.0) -> Any:
    q = np.clip(p, 1e-9, 1 - 1e-9)
    return 1 / (1 + np.exp(-(k * np.log(q / (1 - q)) + b)))


class SynthJudge(SyncJudge):
    """Nouls: σ(k·logit(state.p) + b). Choices: state.dist (a dict) sharpened by power `k`.
    Scores: state.levels (a list). Counts its calls."""

    def __init__(self, k: float = 1.0, b: float = 0.0, model: str = "synth-1"):
        self.k, self.b, self.model, self.calls = k, b, model, 0

    @property
    def model_id(self) -> str:
        return self.model

    def ask(self, state, questions):
        self.calls += 1
        out = {}
        for qid, q in questions.items():
            if isinstance(q, Noul):
                out[qid] = NoulAnswer(noul=float(distort(state["p"], self.k, self.b)))
            elif isinstance(q, Choice):
                raw = {n: state["dist"][n] ** self.k for n in q.options}
                total = sum(raw.values())
                out[qid] = ChoiceAnswer.from_probabilities({n: v / total for n, v in raw.items()})
            else:
                out[qid] = ScoreAnswer.from_probabilities(state["levels"], q.criteria)
        return Answers(model=self.model, answers=out)


def noul_items(n: int, seed: int = 0, qid: str = "flag", a: float = 1.0, b: float = 1.0) -> list[dict[str, Any]]:
    """Items with p ~ Beta(a, b) and a label ~ Bernoulli(p)."""
    rng = np.random.default_rng(seed)
    p = rng.beta(a, b, size=n)
    y = rng.uniform(size=n) < p
    return [{"id": f"i{i}", "state": {"text": f"item {i}", "p": round(float(p[i]), 6)}, "labels": {qid: bool(y[i])}}
            for i in range(n)]


def choice_items(n: int, options: list[str], seed: int = 0, qid: str = "kind", sharp: float = 2.0) -> list[dict[str, Any]]:
    """Items with a random true distribution over `options` and a label drawn from it."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        logits = rng.normal(size=len(options)) * sharp
        d = np.exp(logits - logits.max())
        d /= d.sum()
        lab = options[int(rng.choice(len(options), p=d))]
        out.append({"id": f"c{i}", "state": {"text": f"item {i}", "dist": {o: round(float(v), 8) for o, v in zip(options, d)}},
                    "labels": {qid: lab}})
    return out


def write_jsonl(path: Path, items: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(it) + "\n" for it in items), encoding="utf-8")
    return path


NOUL_RUBRIC = """\
# A one-question gate used by the calibration tests.
name: synth-gate
version: 1
state:
  fields:
    text: Some text.   # what is judged
    p: The true probability (the synthetic judge reads it).
questions:
  flag:
    type: noul
    instructions: Does the `text` raise a flag?
policy:
  outcomes: {block: refuse, allow: act}
  rules:
    - id: flag
      question: flag
      high: 0.7   # written by hand; calibrate refits it
      low: 0.3
      then: allow
      else: block
  default: block
"""

__all__ = ["NOUL_RUBRIC", "SynthJudge", "choice_items", "distort", "noul_items", "write_jsonl"]
