"""When to retry a remote call, and how long to wait: one policy for the sync and async clients.

The rules are the System One client rules: retry 408, 429, every 5xx and connection errors, with
exponential backoff and *full* jitter (a uniform draw between 0 and the exponential ceiling, so
many clients that failed together do not retry together), honouring the server's
`retry-after-ms` first and then `retry-after` (seconds or an HTTP date). Everything happens
inside one total time budget: a retry whose wait would end past the budget is not attempted, so
a caller gets its typed error as early as it is certain, never after the budget.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

from ..errors import ConfigError

#: Statuses worth another try: the server may answer differently in a moment.
RETRY_STATUSES = frozenset({408, 429, *range(500, 600)})


def retry_after_seconds(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """The server's advice on how long to wait, in seconds, or None if it gave none we can read.

    `retry-after-ms` wins over `retry-after` (it is the more precise of the two); `retry-after`
    may be delta-seconds or an HTTP date. Negative, non-finite or unparseable values count as no
    advice rather than as an error: a bad header must not turn a retryable answer into a crash.
    """
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            ms = float(raw_ms.strip())
        except ValueError:
            ms = math.nan
        if math.isfinite(ms) and ms >= 0:
            return ms / 1000
    raw = headers.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        seconds = float(raw)
    except ValueError:
        try:
            when = parsedate_to_datetime(raw)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when.tzinfo is None:  # an HTTP date is always GMT; be lenient with a missing zone
            return None
        return max(0.0, when.timestamp() - (time.time() if now is None else now))
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


@dataclass(frozen=True)
class RetryPolicy:
    """How many times, how long between tries, and the total budget for one call.

    Parameters
    ----------
    max_retries
        Retries after the first attempt; 0 disables retrying.
    backoff_initial, backoff_max
        The exponential ceiling of the n-th wait is `backoff_initial · 2ⁿ⁻¹`, capped at
        `backoff_max`; the wait itself is drawn uniformly below it (full jitter).
    total_budget
        Seconds for the whole call: every attempt and every wait. An attempt's own timeout is
        shortened so that it cannot outlive the budget.
    """

    max_retries: int = 3
    backoff_initial: float = 0.5
    backoff_max: float = 8.0
    total_budget: float = 60.0

    def __post_init__(self) -> None:
        if not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise ConfigError(f"max_retries must be a non-negative integer, got {self.max_retries!r}")
        for name in ("backoff_initial", "backoff_max", "total_budget"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ConfigError(f"{name} must be a non-negative number of seconds, got {value!r}")
        if self.total_budget == 0:
            raise ConfigError("total_budget must be positive")

    def backoff(self, retry: int) -> float:
        """The wait before retry number `retry` (1 for the first), with full jitter."""
        ceiling = min(self.backoff_max, self.backoff_initial * 2 ** (retry - 1))
        return random.uniform(0.0, ceiling)

    def start(self) -> Attempts:
        return Attempts(self, time.monotonic())


class Attempts:
    """The state of one call's tries: how many so far and how much budget is left."""

    __slots__ = ("count", "deadline", "policy", "started")

    def __init__(self, policy: RetryPolicy, started: float) -> None:
        self.policy = policy
        self.started = started
        self.deadline = started + policy.total_budget
        self.count = 0

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def next_wait(self, advised: float | None) -> float | None:
        """Seconds to wait before the next try, or None when the call must give up now.

        Gives up when the retries are spent, or when the wait (the server's advice if it gave
        one, else the jittered backoff) would end at or past the budget's deadline.
        """
        if self.count > self.policy.max_retries:
            return None
        wait = self.policy.backoff(self.count) if advised is None else advised
        if wait >= self.remaining():
            return None
        return wait


__all__ = ["RETRY_STATUSES", "Attempts", "RetryPolicy", "retry_after_seconds"]
