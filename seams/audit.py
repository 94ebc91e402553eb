"""`AuditLog`: an append-only JSON-lines record of decisions.

Why a file of lines: an auditor greps it, a script replays it, and a crash loses at most the line
being written, never the ones before it. Each decision is written and flushed as it happens (and
fsynced when asked), one `Decision.to_json_line()` a line. The raw state is left out unless the log
was opened with `include_state=True`: decisions carry answers, the rule and the numbers that
decided, which is what an audit needs, and a log that copies user data by default is a leak
waiting to happen.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Self

from .decision import Decision
from .errors import ConfigError, InputError
from .state import json_problem, text_problem


class AuditLog:
    """Append decisions to a JSON-lines file.

    Parameters
    ----------
    path:
        The log file; created (with its folder) if missing, appended to otherwise.
    include_state:
        Write each decision's state too. Off by default: the state is user data.
    fsync:
        Also `os.fsync` after each line, so a line survives a power loss, not only a crash of
        the process. Off by default because it costs a disk round trip per decision.
    """

    def __init__(self, path: str | Path, *, include_state: bool = False, fsync: bool = False) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise InputError(f"the audit log's path must be a string or a path, got {type(path).__name__}")
        problem = text_problem(str(path))
        if problem is not None or "\x00" in str(path):
            raise InputError(f"the audit log's path {str(path)!r} {problem or 'holds a NUL character'}")
        self.path = Path(path)
        self.include_state = bool(include_state)
        self.fsync = bool(fsync)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # held open for the log's lifetime: one append and flush per decision, no reopen cost
            self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
        except OSError as e:
            raise ConfigError(f"cannot open the audit log {self.path}: {e}") from None

    def record(self, decision: Decision, **extra: Any) -> None:
        """Append one decision; `extra` fields (a call site, a route taken) go on the same line.

        Raises `InputError`, writing nothing, when the line cannot be written as UTF-8 JSON (a
        lone surrogate, nesting past `MAX_DEPTH` in `extra` or a kept state).
        """
        recorded = {"extra": extra, **({"state": decision.state} if self.include_state else {})}
        problem = json_problem(recorded, "decision")
        if problem is not None:
            raise InputError(f"cannot record the decision: {problem.removeprefix('decision.')}")
        line = decision.to_json_line(include_state=self.include_state, extra=extra)
        problem = text_problem(line)
        if problem is not None:
            raise InputError(f"cannot record the decision: its JSON line {problem}")
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()
            if self.fsync:
                os.fsync(self._file.fileno())

    __call__ = record

    def read(self) -> Iterator[dict[str, Any]]:
        """Every line written so far, parsed (a torn last line from a crash is skipped)."""
        with open(self.path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    yield json.loads(line)
                except json.JSONDecodeError:
                    continue

    def close(self) -> None:
        with self._lock:
            if not self._file.closed:
                self._file.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"AuditLog({str(self.path)!r}, include_state={self.include_state})"


__all__ = ["AuditLog"]
