"""Escalation, confirm-before-act, model routing and output check: the seams that decide who acts.

Each is a thin typed face over its built-in rubric — the questions, thresholds and their scaling
to consequence live in the rubric, where a reviewer reads them; the face builds the state from
typed arguments, adds what code knows for certain (`known` answers, which every decider keeps,
a `Cascade`'s both sides included), and returns a typed result.

* `Escalation` — hand a conversation to a person (risk of harm escalates on a weak signal).
* `ConfirmBeforeAct` — run an action now, ask the user first, or refuse; irreversible actions
  need a near-certain match. Code that *knows* an action is irreversible says so and the model is
  not asked to guess.
* `ModelRouter` — a small, medium or strong model by the task's difficulty.
* `OutputCheck` — grade a draft before it ships; any flag over its threshold escalates (max over
  flags, never the mean: one confident red flag is the whole signal).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from ..answers import NoulAnswer
from ..decision import Decision
from ..errors import InputError
from ..judges.base import Judge
from ..routing import Decider, as_decider
from ..rubric import Rubric
from ..rubric.rubric import Known
from ._common import load_rubric

T = TypeVar("T")


def _text(value: Any, what: str) -> str:
    if isinstance(value, str) and value.strip():
        return value
    raise InputError(f"{what} must be a non-empty string, got {value!r}")


def _flags(decision: Decision, ids: Sequence[str]) -> dict[str, float]:
    out = {}
    for qid in ids:
        ans = decision.answers.get(qid)
        if isinstance(ans, NoulAnswer):
            out[qid] = ans.noul
    return out


class _Face:
    """A rubric and a decider; what every face in this module holds."""

    default_rubric: str = ""

    def __init__(self, *, rubric: Rubric | str | None = None, judge: Judge | Decider | None = None) -> None:
        self.rubric = load_rubric(rubric, self.default_rubric)
        self.decider = as_decider(judge)

    def _decide(self, state: dict[str, Any], known: Known | None = None) -> Decision:
        """Decide `state`; `known` holds the answers code knows for certain, which every decider
        (a `Cascade`'s both sides included) uses in place of asking."""
        return self.decider.decide(self.rubric, state, known=known)

    async def _adecide(self, state: dict[str, Any], known: Known | None = None) -> Decision:
        return await self.decider.adecide(self.rubric, state, known=known)


# --------------------------------------------------------------------------- escalation


@dataclass(frozen=True)
class EscalationResult:
    """`escalate` is True when a person should take over (or look, in the band)."""

    escalate: bool
    outcome: str
    flags: dict[str, float]
    decision: Decision


class Escalation(_Face):
    """Should the agent hand this conversation to a person?"""

    default_rubric = "escalation"

    def _state(self, message: str, context: str | None) -> dict[str, Any]:
        state: dict[str, Any] = {"message": _text(message, "message")}
        if context is not None:
            state["context"] = context
        elif "out_of_scope" in self.rubric.questions:
            state["context"] = "a general assistant"
        return state

    def _result(self, d: Decision) -> EscalationResult:
        return EscalationResult(d.kind != "act", d.outcome, _flags(d, list(self.rubric.questions)), d)

    def check(self, message: str, *, context: str | None = None) -> EscalationResult:
        return self._result(self._decide(self._state(message, context)))

    async def acheck(self, message: str, *, context: str | None = None) -> EscalationResult:
        return self._result(await self._adecide(self._state(message, context)))


# --------------------------------------------------------------------------- confirm before act


@dataclass(frozen=True)
class Confirmation:
    """`outcome` is proceed, confirm (ask the user) or refuse."""

    outcome: Literal["proceed", "confirm", "refuse"] | str
    irreversible: float | None
    matches: float | None
    decision: Decision

    @property
    def proceed(self) -> bool:
        return self.decision.kind == "act"


class ConfirmBeforeAct(_Face):
    """May the agent run this action now? Irreversible actions need a near-certain match."""

    default_rubric = "confirm-before-act"

    def check(self, action: str, *, request: str, irreversible: bool | None = None) -> Confirmation:
        """Decide for `action` taken on behalf of `request`.

        `irreversible`: what code knows for certain (a `DELETE`, a payment). When given, the
        model's answer to that question is replaced by certainty, so a known-destructive action is
        always held to the irreversible threshold.
        """
        return self._result(self._decide(*self._state(action, request, irreversible)))

    async def acheck(self, action: str, *, request: str, irreversible: bool | None = None) -> Confirmation:
        return self._result(await self._adecide(*self._state(action, request, irreversible)))

    @staticmethod
    def _state(action: str, request: str, irreversible: bool | None) -> tuple[dict[str, Any], Known]:
        state = {"request": _text(request, "request"), "action": _text(action, "action")}
        return state, ({} if irreversible is None else {"irreversible": 1.0 if irreversible else 0.0})

    def _result(self, d: Decision) -> Confirmation:
        f = _flags(d, ["irreversible", "matches"])
        return Confirmation(d.outcome, f.get("irreversible"), f.get("matches"), d)


# --------------------------------------------------------------------------- model routing


@dataclass(frozen=True)
class RouteChoice(Generic[T]):
    """The tier the task was routed to, the model for it, and the difficulty read."""

    tier: str
    model: T
    difficulty: float | None
    decision: Decision


class ModelRouter(_Face, Generic[T]):
    """Pick a model by difficulty.

    `models` maps each tier the rubric can decide (small, medium, strong) to a model — a name, a
    client, a callable. When the judge fails (`fallback`), the router uses `models[fallback]`,
    the strong model by default: a wrong cheap answer costs more than a needless strong one.
    """

    default_rubric = "model-routing"

    def __init__(self, models: Mapping[str, T], *, fallback: str = "strong", rubric: Rubric | str | None = None,
                 judge: Judge | Decider | None = None) -> None:
        super().__init__(rubric=rubric, judge=judge)
        self.models = dict(models)
        if fallback not in self.models:
            raise InputError(f"fallback tier {fallback!r} has no model; tiers given: {sorted(self.models)}")
        self.fallback = fallback
        acts = [o for o, k in self.rubric.policy.outcomes.items() if k == "act"]
        missing = [o for o in acts if o not in self.models]
        if missing:
            raise InputError(f"models miss tier(s) {missing} that rubric {self.rubric.name!r} can route to")

    def _result(self, d: Decision) -> RouteChoice[T]:
        tier = d.outcome if d.outcome in self.models else self.fallback
        ans = d.answers.get("difficulty")
        diff = getattr(ans, "normalized", None)
        return RouteChoice(tier, self.models[tier], diff, d)

    def route(self, task: str) -> RouteChoice[T]:
        return self._result(self._decide({"task": _text(task, "task")}))

    async def aroute(self, task: str) -> RouteChoice[T]:
        return self._result(await self._adecide({"task": _text(task, "task")}))


# --------------------------------------------------------------------------- output check


def quoted(draft: str, sources: Sequence[str]) -> bool:
    """Whether `draft` appears word for word in one source, or in the sources read in order
    (whitespace and case aside, on word boundaries)."""
    def norm(text: str) -> str:
        return " ".join(text.split()).casefold()

    d = norm(draft)
    if not d:
        return False
    texts = [norm(s) for s in sources if isinstance(s, str)]
    pattern = re.compile(rf"(?<!\w){re.escape(d)}(?!\w)")
    return any(pattern.search(t) for t in [*texts, " ".join(texts)])


@dataclass(frozen=True)
class Grade:
    """A draft's grade: ship, escalate (redo with a stronger model) or review (a person looks).

    `flags` holds every flag's probability; `worst` the flag that decided, when one did.
    """

    outcome: str
    flags: dict[str, float]
    worst: str | None
    decision: Decision

    @property
    def ship(self) -> bool:
        return self.decision.kind == "act"


class OutputCheck(_Face):
    """Grade a draft against its request (and sources) before it ships."""

    default_rubric = "output-check"

    def _state(self, request: str, draft: str, sources: str | Sequence[str] | None) -> dict[str, Any]:
        if sources is None:
            src: Any = "none"
        elif isinstance(sources, str):
            src = sources
        else:
            src = list(sources)
        return {"request": _text(request, "request"), "sources": src, "draft": _text(draft, "draft")}

    def _result(self, d: Decision) -> Grade:
        flags = _flags(d, list(self.rubric.questions))
        return Grade(d.outcome, flags, d.question if d.kind != "act" else None, d)

    #: Flags about the sources: with no sources they cannot fire, and code says so.
    source_flags = ("contradicts_sources", "unsupported")

    def grade(self, request: str, draft: str, *, sources: str | Sequence[str] | None = None) -> Grade:
        """Grade `draft`. Without `sources`, or when the sources contain the draft word for word,
        the source flags are 0 by construction, not asked."""
        return self._result(self._decide(self._state(request, draft, sources), self._known_source_flags(draft, sources)))

    async def agrade(self, request: str, draft: str, *, sources: str | Sequence[str] | None = None) -> Grade:
        state = self._state(request, draft, sources)
        return self._result(await self._adecide(state, self._known_source_flags(draft, sources)))

    def _known_source_flags(self, draft: str, sources: str | Sequence[str] | None) -> Known:
        """Source flags decided in code: 0 without sources (nothing to contradict or support), and
        0 for a draft that its sources contain word for word (a quote is supported by what it
        quotes and cannot contradict it)."""
        if sources is None or quoted(draft, [sources] if isinstance(sources, str) else list(sources)):
            return {q: 0.0 for q in self.source_flags if q in self.rubric.questions}
        return {}


__all__ = [
    "ConfirmBeforeAct",
    "Confirmation",
    "Escalation",
    "EscalationResult",
    "Grade",
    "ModelRouter",
    "OutputCheck",
    "RouteChoice",
]
