"""Bounds on the work one call may cost: model pairs, a deadline, cancellation.

A server over a judge must bound what one request can make it compute (a 255-option Choice on a
long state is hundreds of model runs, and a run over 256 tokens costs four of one over 64), must
stop at a deadline, and must stop when the client has gone. The `Judge` protocol has no parameter for that, and should not grow one per bound: the
bounds travel in a context variable instead, which `asyncio.to_thread` and tasks copy, so a
judge running in a worker thread sees the bounds of the request that started it.

    with work_limits(max_pairs=512, max_tokens=40_000, timeout=30) as limits:
        answers = judge.ask(state, questions)   # a LocalJudge checks all three

The local judge refuses a call whose pairs (hypotheses × windows) pass `max_pairs`, or whose
pairs' tokens (what the model's time is proportional to) pass `max_tokens`, before it runs
anything (a `QuestionError`, so a server answers 422), and checks the deadline and cancellation
between model batches (a `JudgeTimeout`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from .errors import JudgeTimeout, QuestionError


@dataclass
class WorkLimits:
    """The bounds of the work in progress; `cancel()` stops it at the next check."""

    max_pairs: int | None = None
    max_tokens: int | None = None
    deadline: float | None = None  # a time.monotonic() instant
    timeout: float | None = None
    cancelled: threading.Event = field(default_factory=threading.Event)
    reason: str = ""

    def cancel(self, reason: str) -> None:
        self.reason = reason
        self.cancelled.set()

    def check_pairs(self, pairs: int, what: str) -> None:
        """Raise `QuestionError` when `pairs` model runs are more than this call may cost."""
        if self.max_pairs is not None and pairs > self.max_pairs:
            raise QuestionError(
                f"{what} needs {pairs:,} model runs (hypotheses × windows of the state); at most "
                f"{self.max_pairs:,} are allowed per request (max_pairs). Ask fewer options or "
                "levels, or shorten the state."
            )

    def check_tokens(self, tokens: int, what: str) -> None:
        """Raise `QuestionError` when the model would read more than `max_tokens` tokens in all."""
        if self.max_tokens is not None and tokens > self.max_tokens:
            raise QuestionError(
                f"{what} needs the model to read {tokens:,} tokens (its runs' pairs summed); at most "
                f"{self.max_tokens:,} are allowed per request (max_tokens). Ask fewer options or "
                "levels, or shorten the state."
            )

    def check(self) -> None:
        """Raise `JudgeTimeout` when the deadline has passed or the work was cancelled."""
        if self.cancelled.is_set():
            raise JudgeTimeout(f"the work was stopped: {self.reason or 'cancelled'}")
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise JudgeTimeout(f"the work ran past its deadline of {self.timeout:g}s")


_current: ContextVar[WorkLimits | None] = ContextVar("seams_work_limits", default=None)


def current_limits() -> WorkLimits | None:
    """The bounds of the call in progress, if any were set."""
    return _current.get()


@contextmanager
def work_limits(*, max_pairs: int | None = None, max_tokens: int | None = None,
                timeout: float | None = None) -> Iterator[WorkLimits]:
    """Bound the judge calls made inside the block (and in tasks and threads started from it)."""
    if max_pairs is not None and max_pairs < 1:
        raise ValueError("max_pairs must be at least 1 (or None for no limit)")
    if max_tokens is not None and max_tokens < 1:
        raise ValueError("max_tokens must be at least 1 (or None for no limit)")
    if timeout is not None and not timeout > 0:
        raise ValueError("timeout must be a positive number of seconds (or None)")
    limits = WorkLimits(max_pairs=max_pairs, max_tokens=max_tokens, timeout=timeout,
                        deadline=time.monotonic() + timeout if timeout is not None else None)
    token = _current.set(limits)
    try:
        yield limits
    finally:
        _current.reset(token)


__all__ = ["WorkLimits", "current_limits", "work_limits"]
