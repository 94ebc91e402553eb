"""The typed result of a rubric: what was decided, from which answers, and why."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from ._models import SeamsModel
from .answers import ChoiceAnswer, NoulAnswer, ScoreAnswer

#: What code should do with an outcome: go ahead, refuse, or hand the case to a person or a
#: stronger judge. Every outcome a rubric declares has one of these kinds.
OutcomeKind = Literal["act", "refuse", "review"]
#: Which zone of a threshold decided: at or above `high`, the band between, at or below `low`;
#: `default` when no rule decided, `error` when the judge failed.
Zone = Literal["high", "band", "low", "default", "error", "gate", "skipped"]

AnyAnswer = Annotated[NoulAnswer | ChoiceAnswer | ScoreAnswer, Field(discriminator="type")]


class RuleTrace(SeamsModel):
    """One rule as it was evaluated, in priority order."""

    model_config = ConfigDict(frozen=True)

    rule: str
    question: str | None = None
    probability: float | None = None
    zone: Zone
    outcome: str | None = None  # None: the rule passed the case on to the next one


class Verdict(SeamsModel):
    """What the policy decided: the outcome, the rule and the number that decided it."""

    model_config = ConfigDict(frozen=True)

    outcome: str
    kind: OutcomeKind
    rule: str | None = None
    question: str | None = None
    option: str | None = None
    probability: float | None = None
    threshold: float | None = None
    zone: Zone
    trace: list[RuleTrace] = Field(default_factory=list)


class Decision(Verdict):
    """The outcome of a rubric for one state, with everything an auditor needs.

    `probability` and `threshold` are the number that decided and the cut-point it crossed
    (None for the default outcome). The raw state is kept only when asked, so an audit log does
    not copy user data by accident.
    """

    answers: dict[str, AnyAnswer] = Field(default_factory=dict)
    rubric: str
    rubric_version: str
    rubric_hash: str
    model: str | None = None
    calibrated: bool = False
    latency_ms: float = 0.0
    windows: int = 1
    error: str | None = None
    decided_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    state: Any = Field(default=None, exclude=True)

    @property
    def acted(self) -> bool:
        return self.kind == "act"

    @property
    def refused(self) -> bool:
        return self.kind == "refuse"

    @property
    def needs_review(self) -> bool:
        return self.kind == "review"

    def to_json_line(self, *, include_state: bool = False, extra: Mapping[str, Any] | None = None) -> str:
        """One JSON line for an audit log; the state only when `include_state` is set; `extra`
        fields (a call site, the action taken) last, on the same line. Dumped once."""
        data = self.model_dump(mode="json")
        if include_state:
            data["state"] = self.state
        if extra:
            data.update(extra)
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


__all__ = ["Decision", "OutcomeKind", "RuleTrace", "Verdict", "Zone"]
