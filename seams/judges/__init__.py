"""Judges: anything that answers questions about a state (local model, remote server, wrappers)."""

from .base import Judge, SyncJudge

_default: Judge | None = None


def default_judge() -> Judge:
    """The judge used when none is given: the shipped local model, loaded once per process."""
    global _default
    if _default is None:
        from .local import LocalJudge

        _default = LocalJudge()
    return _default


__all__ = ["Judge", "SyncJudge", "default_judge"]
