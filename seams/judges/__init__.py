"""Judges: anything that answers questions about a state (local model, remote server, wrappers)."""

from typing import TYPE_CHECKING

from ._retry import RetryPolicy
from .base import Judge, SyncJudge

_default: Judge | None = None


def default_judge() -> Judge:
    """The judge used when none is given: the shipped local model, loaded once per process."""
    global _default
    if _default is None:
        from .local import LocalJudge

        _default = LocalJudge()
    return _default


# The remote judge and the wrappers are imported on first use, so `import seams.judges` stays
# light for code that only runs the local model.
_LAZY = {
    "LocalJudge": ".local",
    "RemoteJudge": ".remote",
    "is_moving_alias": ".aliases",
    "CachedJudge": ".cache",
    "Cassette": ".cassette",
}

if TYPE_CHECKING:  # the same names for a type checker, which cannot see through `__getattr__`
    from .aliases import is_moving_alias
    from .cache import CachedJudge
    from .cassette import Cassette
    from .local import LocalJudge
    from .remote import RemoteJudge


def __getattr__(name: str) -> object:
    if name in _LAZY:
        from importlib import import_module

        value = getattr(import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CachedJudge",
    "Cassette",
    "Judge",
    "LocalJudge",
    "RemoteJudge",
    "RetryPolicy",
    "SyncJudge",
    "default_judge",
    "is_moving_alias",
]
