"""seams: typed decisions at the seams of AI agents."""

from .answers import Answers, ChoiceAnswer, NoulAnswer, ScoreAnswer, normalize_score, rank_options
from .questions import Choice, Noul, Score

__version__ = "0.1.0"

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
    "Refused": "seams.errors",
    "Deferred": "seams.errors",
    "QueueFull": "seams.errors",
}


def __getattr__(name: str):
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
    "Judge",
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
    "Tool",
    "ToolSelector",
    "__version__",
    "current_decision",
    "gate",
    "normalize_score",
    "rank_options",
    "route",
]
