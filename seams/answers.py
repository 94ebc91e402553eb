"""Answers to the three question types, and the protocol's formulas.

The answer models are the System One response shapes. `parse_answer` is the one strict reader
of an answer against the question it answers: every judge, cassette and server goes through it,
so a malformed answer is a `ProtocolError`, never a guess.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from functools import cache
from operator import mul
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import ConfigDict, Field

from ._models import SeamsModel
from .errors import InputError, ProtocolError
from .questions import Choice, Noul, Score, Text

#: How far a distribution may sum from 1 (OpenRouter rounds probabilities to 2 decimals).
SUM_TOLERANCE = 0.05
#: How far a reported confidence or expectation may be from the protocol's formula.
FORMULA_TOLERANCE = 0.02


def choice_confidence(probs: Sequence[float]) -> float:
    """`(max p − 1/n) / (1 − 1/n)`: 0 for a uniform distribution, 1 for a certain one."""
    n = len(probs)
    if n <= 1:
        return 1.0
    return max(0.0, min(1.0, (max(probs) - 1 / n) / (1 - 1 / n)))


def score_confidence(probs: Sequence[float]) -> float:
    """`max(0, 1 − Σ p_i·|i−k| / D)`, k the most likely level, D the spread of a uniform ladder."""
    n = len(probs)
    if n <= 1:
        return 1.0
    k = max(range(n), key=probs.__getitem__)  # the first most likely level
    spread: float = sum(map(mul, probs, _distances(n, k)))
    return max(0.0, min(1.0, 1 - spread / _uniform_spread(n)))


@cache
def _distances(n: int, k: int) -> tuple[int, ...]:
    """|i − k| for each level i of an n-level ladder."""
    return tuple(abs(i - k) for i in range(n))


@cache
def _uniform_spread(n: int) -> float:
    """D for an n-level ladder: the mean distance of a uniform distribution from its middle."""
    return sum(abs(i - (n - 1) / 2) for i in range(n)) / n


@cache
def _level_keys(n: int) -> tuple[list[str], frozenset[str]]:
    """The 0-based level keys of an n-level ladder, in order and as a set (computed once per n)."""
    keys = [str(i) for i in range(n)]
    return keys, frozenset(keys)


class _Answer(SeamsModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class NoulAnswer(_Answer):
    """The probability that the statement holds."""

    type: Literal["noul"] = "noul"
    noul: float = Field(ge=0.0, le=1.0)

    @property
    def probability(self) -> float:
        return self.noul


class ChoiceAnswer(_Answer):
    """The winning option, the distribution over all options, and the protocol's confidence."""

    type: Literal["choice"] = "choice"
    choice: str
    probabilities: dict[str, float]
    confidence: float = Field(ge=0.0, le=1.0)

    @classmethod
    def from_probabilities(cls, probabilities: Mapping[str, float]) -> ChoiceAnswer:
        """Build an answer from a distribution: argmax (first on ties) and confidence."""
        probs = _given_probabilities(probabilities, "ChoiceAnswer.from_probabilities")
        winner = max(probs, key=lambda k: probs[k])
        return cls(choice=winner, probabilities=probs, confidence=choice_confidence(list(probs.values())))

    def ranked(self) -> list[tuple[str, float]]:
        """Options from most to least likely (stable for ties: declared order)."""
        return sorted(self.probabilities.items(), key=lambda kv: -kv[1])

    @property
    def probability(self) -> float:
        """The winner's probability."""
        return self.probabilities[self.choice]


class ScoreAnswer(_Answer):
    """The expected level (0-based), the distribution over levels, legend and confidence."""

    type: Literal["score"] = "score"
    score: float
    legend: dict[str, Text]
    probabilities: dict[str, float]
    confidence: float = Field(ge=0.0, le=1.0)

    @classmethod
    def from_probabilities(cls, probabilities: Sequence[float], levels: Sequence[Text]) -> ScoreAnswer:
        where = "ScoreAnswer.from_probabilities"
        if isinstance(probabilities, (str, bytes, Mapping)) or not isinstance(probabilities, Iterable):
            raise InputError(f"{where}: expected a sequence of probabilities, one per level, got {probabilities!r}")
        probs = list(_given_probabilities(dict(enumerate(probabilities)), where).values())
        if isinstance(levels, (str, bytes)) or not isinstance(levels, Sequence):
            raise InputError(f"ScoreAnswer.from_probabilities: levels must be a sequence of level descriptions, "
                             f"got {levels!r}")
        return cls(
            score=sum(i * p for i, p in enumerate(probs)),
            legend={str(i): lv for i, lv in enumerate(levels)},
            probabilities={str(i): p for i, p in enumerate(probs)},
            confidence=score_confidence(probs),
        )

    @property
    def n_levels(self) -> int:
        return len(self.probabilities)

    @property
    def level(self) -> int:
        """The most likely level."""
        return max(range(self.n_levels), key=lambda i: self.probabilities[str(i)])

    @property
    def normalized(self) -> float:
        """The expected level scaled to 0–1, so ladders of different lengths compare."""
        return normalize_score(self.score, self.n_levels)


def _given_probabilities(probabilities: Any, where: str) -> dict[Any, float]:
    """A non-empty mapping of names to finite numbers, as floats; an `InputError` otherwise."""
    if not isinstance(probabilities, Mapping) or not probabilities:
        raise InputError(f"{where}: expected a non-empty mapping of probabilities, got {probabilities!r}")
    out = {}
    for k, p in probabilities.items():
        if isinstance(p, bool) or not isinstance(p, numbers.Real) or not math.isfinite(p):
            raise InputError(f"{where}: the probability of {k!r} is {p!r}, not a finite number")
        out[k] = float(p)
    return out


Answer: TypeAlias = Annotated[NoulAnswer | ChoiceAnswer | ScoreAnswer, Field(discriminator="type")]


def normalize_score(score: float, n_levels: int) -> float:
    """Map a 0-based expected level on an n-level ladder to 0–1."""
    if isinstance(n_levels, bool) or not isinstance(n_levels, int) or n_levels < 2:
        raise InputError(f"a score ladder has at least 2 levels, got {n_levels!r}")
    return score / (n_levels - 1)


def rank_options(answer: ChoiceAnswer, k: int | None = None) -> list[str]:
    """The option names of a Choice answer, most likely first; the first `k` if given."""
    names = [name for name, _ in answer.ranked()]
    return names if k is None else names[:k]


class Usage(SeamsModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)


class Answers(SeamsModel):
    """Every answer about one state, with the model that gave them, usage and latency.

    `windows` is how many windows the state was split into (1 when it fit the model whole);
    a local judge records it so a decision can say that a long state was windowed.
    """

    model_config = ConfigDict(frozen=True)

    model: str
    answers: dict[str, Annotated[NoulAnswer | ChoiceAnswer | ScoreAnswer, Field(discriminator="type")]]
    usage: Usage = Usage()
    latency_ms: float = 0.0
    windows: int = 1

    def __getitem__(self, qid: str) -> NoulAnswer | ChoiceAnswer | ScoreAnswer:
        return self.answers[qid]

    def __contains__(self, qid: object) -> bool:
        return qid in self.answers

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]  # pydantic's BaseModel iterates (field, value) pairs
        return iter(self.answers)

    def __len__(self) -> int:
        return len(self.answers)


# --------------------------------------------------------------------------- strict reading


def _finite_prob(value: Any, where: str) -> float:
    if type(value) is float and 0.0 <= value <= 1.0:  # the common case, checked cheaply (NaN fails it)
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ProtocolError(f"{where}: expected a finite number, got {value!r}")
    if not -1e-9 <= value <= 1 + 1e-9:
        raise ProtocolError(f"{where}: probability {value!r} is outside [0, 1]")
    return float(min(1.0, max(0.0, value)))


def _prob(value: Any, where: str, field: str) -> float:
    """`_finite_prob` with the common case inlined: the location text is built only on a failure."""
    if type(value) is float and 0.0 <= value <= 1.0:  # NaN fails the comparison
        return value
    return _finite_prob(value, f"{where}{field}")


def _distribution(raw: Any, keys: list[str], keyset: AbstractSet[str], where: str) -> list[float]:
    """The probabilities of `keys`, in order: exactly those keys, each in [0, 1], summing to 1."""
    if type(raw) is not dict and not isinstance(raw, Mapping):  # ABC checks are slow; JSON gives dicts
        raise ProtocolError(f"{where}.probabilities: expected an object, got {type(raw).__name__}")
    # A keys view compares as a set, without building one for the common (equal) case.
    if raw.keys() != keyset:
        missing, extra = sorted(set(keys) - set(raw)), sorted(set(raw) - set(keys))
        raise ProtocolError(f"{where}.probabilities: keys must be exactly {keys}; missing {missing}, extra {extra}")
    probs: list[float] = []
    for k in keys:
        value = raw[k]
        ok = type(value) is float and 0.0 <= value <= 1.0
        probs.append(value if ok else _finite_prob(value, f"{where}.probabilities[{k!r}]"))
    total = sum(probs)
    if abs(total - 1.0) > SUM_TOLERANCE:
        raise ProtocolError(f"{where}.probabilities sum to {total:.4f}, not 1 ± {SUM_TOLERANCE}")
    return probs


def _confidence(raw: Mapping[str, Any], expected: float, where: str) -> float:
    if "confidence" not in raw:
        raise ProtocolError(f"{where}: missing confidence")
    got = _prob(raw["confidence"], where, ".confidence")
    if abs(got - expected) > FORMULA_TOLERANCE:
        raise ProtocolError(
            f"{where}.confidence is {got:.4f} but the protocol's formula gives {expected:.4f} "
            f"(tolerance {FORMULA_TOLERANCE})"
        )
    return got


def _is_text(value: Any) -> bool:
    """Whether a value is a `Text` (a string, an object or an array), as a legend entry must be."""
    return isinstance(value, (str, dict, list))


def parse_answer(question: Noul | Choice | Score, raw: Any, where: str = "answer") -> NoulAnswer | ChoiceAnswer | ScoreAnswer:
    """Read one answer strictly against its question; raise `ProtocolError` on any deviation.

    Every check is explicit here, and the answer model validates its fields once more when it
    is built (pydantic's compiled validation is cheaper than `model_construct`, so it stays).
    """
    if type(raw) is not dict and not isinstance(raw, Mapping):  # ABC checks are slow; JSON gives dicts
        raise ProtocolError(f"{where}: expected an object, got {type(raw).__name__}")
    if raw.get("type") != question.type:
        raise ProtocolError(f"{where}: type is {raw.get('type')!r}, the question is a {question.type}")
    extras = {k: v for k, v in raw.items() if k.startswith("x_")}
    if isinstance(question, Noul):
        if "noul" not in raw:
            raise ProtocolError(f"{where}: missing noul")
        return NoulAnswer(noul=_prob(raw["noul"], where, ".noul"), **extras)
    if isinstance(question, Choice):
        criteria = question.criteria
        names = list(criteria)
        probs = _distribution(raw.get("probabilities"), names, criteria.keys(), where)
        choice = raw.get("choice")
        if not isinstance(choice, str) or choice not in criteria:
            raise ProtocolError(f"{where}.choice {choice!r} is not one of the options")
        if probs[names.index(choice)] < max(probs) - 1e-6:
            raise ProtocolError(f"{where}.choice {choice!r} is not the most probable option")
        conf = _confidence(raw, choice_confidence(probs), where)
        return ChoiceAnswer(choice=choice, probabilities=dict(zip(names, probs)), confidence=conf, **extras)
    keys, keyset = _level_keys(len(question.criteria))
    legend = raw.get("legend")
    if (type(legend) is not dict and not isinstance(legend, Mapping)) or legend.keys() != keyset:
        got = sorted(legend) if isinstance(legend, Mapping) else legend
        raise ProtocolError(f"{where}.legend: keys must be the 0-based levels {keys}, got {got!r}")
    ordered_legend = {k: legend[k] for k in keys}
    if not all(map(_is_text, ordered_legend.values())):
        raise ProtocolError(f"{where}.legend: every level must be a string, an object or an array")
    probs = _distribution(raw.get("probabilities"), keys, keyset, where)
    score = raw.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        raise ProtocolError(f"{where}.score: expected a finite number, got {score!r}")
    expected = sum(map(mul, probs, range(len(probs))))
    if abs(score - expected) > FORMULA_TOLERANCE * (len(keys) - 1):
        raise ProtocolError(f"{where}.score {score} is not the expectation of its probabilities ({expected:.4f})")
    conf = _confidence(raw, score_confidence(probs), where)
    return ScoreAnswer(
        score=float(score),
        legend=ordered_legend,
        probabilities=dict(zip(keys, probs)),
        confidence=conf,
        **extras,
    )


def parse_answers(
    questions: Mapping[str, Noul | Choice | Score], raw_answers: Any, where: str = "answers"
) -> dict[str, NoulAnswer | ChoiceAnswer | ScoreAnswer]:
    """Exactly one answer per question id, each read strictly."""
    if not isinstance(raw_answers, Mapping):
        raise ProtocolError(f"{where}: expected an object, got {type(raw_answers).__name__}")
    missing = [q for q in questions if q not in raw_answers]
    extra = [a for a in raw_answers if a not in questions]
    if missing or extra:
        raise ProtocolError(f"{where}: one answer per question id is required; missing {missing}, unexpected {extra}")
    return {qid: parse_answer(q, raw_answers[qid], f"{where}[{qid!r}]") for qid, q in questions.items()}


__all__ = [
    "Answer",
    "Answers",
    "ChoiceAnswer",
    "NoulAnswer",
    "ScoreAnswer",
    "Usage",
    "choice_confidence",
    "normalize_score",
    "parse_answer",
    "parse_answers",
    "rank_options",
    "score_confidence",
]
