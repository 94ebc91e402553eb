"""Judges: anything that answers questions about a state (local model, remote server, wrappers)."""

from .base import Judge, SyncJudge

__all__ = ["Judge", "SyncJudge"]
