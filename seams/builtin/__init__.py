"""The built-in seams: each a built-in rubric with a typed Python face.

* `MemoryGate` / `MemoryStore` — memory admission (rubric `memory-admission`)
* `PassageGate` — retrieved passages for a prompt (rubric `passage-gate`)
* `ToolSelector` — tool or skill selection (rubric `tool-selection`)
* `Escalation`, `ConfirmBeforeAct`, `ModelRouter`, `OutputCheck` — who acts, and with what
  (rubrics `escalation`, `confirm-before-act`, `model-routing`, `output-check`)
"""

from ..secrets import FlaggedSpan, find_secrets
from .escalation import (
    Confirmation,
    ConfirmBeforeAct,
    Escalation,
    EscalationResult,
    Grade,
    ModelRouter,
    OutputCheck,
    RouteChoice,
)
from .memory import Admission, Memory, MemoryGate, MemoryStore
from .passages import PassageGate, PassageSelection, ScoredPassage
from .tools import Tool, ToolSelector, ToolSuggestion

__all__ = [
    "Admission",
    "ConfirmBeforeAct",
    "Confirmation",
    "Escalation",
    "EscalationResult",
    "FlaggedSpan",
    "Grade",
    "Memory",
    "MemoryGate",
    "MemoryStore",
    "ModelRouter",
    "OutputCheck",
    "PassageGate",
    "PassageSelection",
    "RouteChoice",
    "ScoredPassage",
    "Tool",
    "ToolSelector",
    "ToolSuggestion",
    "find_secrets",
]
