"""seams: typed decisions at the seams of AI agents."""

from typing import TYPE_CHECKING

from .answers import Answers, ChoiceAnswer, NoulAnswer, ScoreAnswer, normalize_score, rank_options
from .questions import Choice, Noul, Score
from .version import __version__

# Seams, routing, the review queue, decorators and the audit log: imported on first use, so
# `import seams` stays light and never pulls SQLite or the rubric machinery in by itself.
_LAZY = {
    "Rubric": "seams.rubric",
    "Decision": "seams.decision",
    "Judge": "seams.judges",
    "LocalJudge": "seams.judges",
    "RemoteJudge": "seams.judges",
    "CachedJudge": "seams.judges",
    "Cassette": "seams.judges",
    "Admission": "seams.builtin",
    "ConfirmBeforeAct": "seams.builtin",
    "Escalation": "seams.builtin",
    "Grade": "seams.builtin",
    "Memory": "seams.builtin",
    "MemoryGate": "seams.builtin",
    "MemoryStore": "seams.builtin",
    "ModelRouter": "seams.builtin",
    "OutputCheck": "seams.builtin",
    "PassageGate": "seams.builtin",
    "Tool": "seams.builtin",
    "ToolSelector": "seams.builtin",
    "Cascade": "seams.routing",
    "Routed": "seams.routing",
    "ReviewQueue": "seams.queue",
    "ReviewItem": "seams.queue",
    "AuditLog": "seams.audit",
    "gate": "seams.decorators",
    "route": "seams.decorators",
    "current_decision": "seams.decorators",
    "SeamsError": "seams.errors",
    "InputError": "seams.errors",
    "JudgeError": "seams.errors",
    "Refused": "seams.errors",
    "Deferred": "seams.errors",
    "QueueFull": "seams.errors",
}

# The same names for a type checker, which cannot see through `__getattr__`
# (tests/test_typed_surface.py keeps the two lists equal).
if TYPE_CHECKING:
    from .audit import AuditLog
    from .builtin import (
        Admission,
        ConfirmBeforeAct,
        Escalation,
        Grade,
        Memory,
        MemoryGate,
        MemoryStore,
        ModelRouter,
        OutputCheck,
        PassageGate,
        Tool,
        ToolSelector,
    )
    from .decision import Decision
    from .decorators import current_decision, gate, route
    from .errors import Deferred, InputError, JudgeError, QueueFull, Refused, SeamsError
    from .judges import CachedJudge, Cassette, Judge, LocalJudge, RemoteJudge
    from .queue import ReviewItem, ReviewQueue
    from .routing import Cascade, Routed
    from .rubric import Rubric


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'seams' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "Admission",
    "Answers",
    "AuditLog",
    "CachedJudge",
    "Cascade",
    "Cassette",
    "Choice",
    "ChoiceAnswer",
    "ConfirmBeforeAct",
    "Decision",
    "Deferred",
    "Escalation",
    "Grade",
    "InputError",
    "Judge",
    "JudgeError",
    "LocalJudge",
    "Memory",
    "MemoryGate",
    "MemoryStore",
    "ModelRouter",
    "Noul",
    "NoulAnswer",
    "OutputCheck",
    "PassageGate",
    "QueueFull",
    "Refused",
    "RemoteJudge",
    "ReviewItem",
    "ReviewQueue",
    "Routed",
    "Rubric",
    "Score",
    "ScoreAnswer",
    "SeamsError",
    "Tool",
    "ToolSelector",
    "__version__",
    "current_decision",
    "gate",
    "normalize_score",
    "rank_options",
    "route",
]
