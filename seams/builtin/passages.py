"""`PassageGate`: which retrieved passages reach the prompt, in what order, within a budget.

Retrieval returns passages by similarity, and similarity is not usefulness: an off-topic passage
wastes the context, a passage that contradicts the query's premise is often the *most* similar
one (and must not be filed as support), and a passage carrying instructions for the model is an
attack. The `passage-gate` rubric asks, per passage and in its declared priority order, about
injection, contradiction, evidence and relevance. The gate then:

* keeps `keep` passages, reordered by the judge's relevance (not the retriever's order),
* keeps `contradiction` passages apart, labelled, so the answer can say the premise is wrong,
* fits the kept passages to a token budget, most relevant first,
* reports quarantined, dropped and uncertain (review) passages separately.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..decision import Decision
from ..errors import InputError
from ..judges.base import Judge
from ..routing import Decider, as_decider
from ..rubric import Rubric
from ._common import load_rubric


def approx_tokens(text: str) -> int:
    """A tokenizer-free estimate: about four tokens for every three words."""
    return max(1, (len(text.split()) * 4 + 2) // 3)


@dataclass(frozen=True)
class ScoredPassage:
    """One passage with its decision and the numbers a reader wants."""

    index: int
    text: str
    outcome: str
    relevance: float
    decision: Decision
    tokens: int
    id: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PassageSelection:
    """The gate's result: what goes into the prompt, and why the rest does not."""

    kept: list[ScoredPassage]
    contradicting: list[ScoredPassage]
    review: list[ScoredPassage]
    quarantined: list[ScoredPassage]
    dropped: list[ScoredPassage]
    over_budget: list[ScoredPassage]
    budget: int | None

    @property
    def texts(self) -> list[str]:
        """The kept passages' texts, in prompt order."""
        return [p.text for p in self.kept]

    @property
    def tokens(self) -> int:
        return sum(p.tokens for p in self.kept)

    def all(self) -> list[ScoredPassage]:
        every = self.kept + self.contradicting + self.review + self.quarantined + self.dropped + self.over_budget
        return sorted(every, key=lambda p: p.index)


def _passage(item: str | Mapping[str, Any]) -> tuple[str, str | None, Mapping[str, Any]]:
    if isinstance(item, str):
        return item, None, {}
    if isinstance(item, Mapping) and isinstance(item.get("text"), str):
        pid = item.get("id")
        return item["text"], None if pid is None else str(pid), {k: v for k, v in item.items() if k not in ("text",)}
    raise InputError(f"a passage is a string or a mapping with a 'text' string, got {item!r}")


class PassageGate:
    """Filter, label, reorder and budget retrieved passages for one query.

    Parameters
    ----------
    rubric:
        Default: built-in `passage-gate`.
    judge:
        A judge, a `Cascade`, or None for the shipped local model.
    budget:
        Most tokens the kept passages may take together (None: no limit). Passages are added
        most relevant first; one that does not fit goes to `over_budget`, and a shorter, less
        relevant one may still fit after it.
    count_tokens:
        How to count a passage's tokens (default: `approx_tokens`); pass your generator's
        tokenizer for an exact budget.
    contradictions_in_budget:
        Whether contradicting passages also take budget (they are usually shown to the model
        with a note); False keeps them out of the prompt count.
    """

    def __init__(self, *, rubric: Rubric | str | None = None, judge: Judge | Decider | None = None,
                 budget: int | None = None, count_tokens: Callable[[str], int] = approx_tokens,
                 contradictions_in_budget: bool = False) -> None:
        if budget is not None and budget < 1:
            raise InputError(f"budget must be a positive number of tokens or None, got {budget}")
        self.rubric = load_rubric(rubric, "passage-gate")
        self.judge = judge
        self.decider = as_decider(judge)
        self.budget = budget
        self.count_tokens = count_tokens
        self.contradictions_in_budget = contradictions_in_budget

    def _states(self, query: str, passages: Sequence[str | Mapping[str, Any]]):
        if not isinstance(query, str) or not query.strip():
            raise InputError("a query is a non-empty string")
        parsed = [_passage(p) for p in passages]
        return parsed, [{"query": query, "passage": text} for text, _, _ in parsed]

    def select(self, query: str, passages: Sequence[str | Mapping[str, Any]]) -> PassageSelection:
        """Decide every passage and assemble the prompt's evidence."""
        parsed, decisions = self._decide(query, passages)
        return self._assemble(parsed, decisions)

    def decide(self, query: str, passages: Sequence[str | Mapping[str, Any]]) -> list[Decision]:
        """One decision per passage, in the order given (what `select` assembles from)."""
        return self._decide(query, passages)[1]

    def _decide(self, query: str, passages: Sequence[str | Mapping[str, Any]]
                ) -> tuple[list[tuple[str, str | None, Mapping[str, Any]]], list[Decision]]:
        parsed, states = self._states(query, passages)
        return parsed, self.decider.decide_many(self.rubric, states)

    async def aselect(self, query: str, passages: Sequence[str | Mapping[str, Any]]) -> PassageSelection:
        parsed, states = self._states(query, passages)
        return self._assemble(parsed, await self.decider.adecide_many(self.rubric, states))

    def _assemble(self, parsed: list[tuple[str, str | None, Mapping[str, Any]]],
                  decisions: list[Decision]) -> PassageSelection:
        scored = [
            ScoredPassage(i, text, d.outcome, _relevance(d), d, self.count_tokens(text), pid, meta)
            for i, ((text, pid, meta), d) in enumerate(zip(parsed, decisions, strict=True))
        ]
        by_relevance = sorted(scored, key=lambda p: (-p.relevance, p.index))
        groups: dict[str, list[ScoredPassage]] = {"keep": [], "contradiction": [], "quarantine": [], "drop": []}
        review: list[ScoredPassage] = []
        for p in by_relevance:
            if p.decision.kind == "review":
                review.append(p)
            else:
                groups.setdefault(p.outcome, []).append(p)
        kept, over = [], []
        used = 0
        if self.contradictions_in_budget:
            used = sum(p.tokens for p in groups["contradiction"])
        for p in groups["keep"]:
            if self.budget is None or used + p.tokens <= self.budget:
                kept.append(p)
                used += p.tokens
            else:
                over.append(p)
        dropped = groups["drop"] + [p for name, ps in groups.items()
                                    if name not in ("keep", "contradiction", "quarantine", "drop") for p in ps]
        return PassageSelection(kept=kept, contradicting=groups["contradiction"], review=review,
                                quarantined=groups["quarantine"], dropped=dropped, over_budget=over,
                                budget=self.budget)


def _relevance(d: Decision) -> float:
    ans = d.answers.get("relevant")
    return float(getattr(ans, "noul", 0.0)) if ans is not None else 0.0


__all__ = ["PassageGate", "PassageSelection", "ScoredPassage", "approx_tokens"]
