"""Progress of long CLI work, drawn where a person watches and written as lines where a log reads.

Library code never prints progress: it takes an optional callback `progress(done, total)` (see
`seams.calibration.run.Progress`). The commands get that callback from `progress_bar`:

* on a terminal, a rich progress bar on stderr;
* on a pipe, a file, or in CI (`CI` set to anything but `false`/`0`), one plain line at each
  tenth of the work (`judging: 120/1095 (10%)`), so a CI log shows the run moving without a
  redraw per item;
* with `--quiet` (or `--json`), nothing.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ._common import err_console

Progress = Callable[[int, int], None]


def interactive() -> bool:
    """Whether stderr is a terminal a person watches (and not a CI runner's pseudo-terminal)."""
    ci = os.environ.get("CI", "").strip().lower()
    return err_console.is_terminal and ci in ("", "0", "false")


@contextmanager
def progress_bar(label: str, *, quiet: bool = False) -> Iterator[Progress | None]:
    """A `progress(done, total)` callback for library code, or None when `quiet`."""
    if quiet:
        yield None
        return
    if not interactive():
        yield _Lines(label)
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                   console=err_console, transient=False)
    task = bar.add_task(label, total=None)

    def update(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    with bar:
        yield update


class _Lines:
    """Progress as plain lines on stderr, one per tenth of the work and one at the end."""

    def __init__(self, label: str) -> None:
        self.label = label
        self._shown = -1

    def __call__(self, done: int, total: int) -> None:
        if total <= 0:
            return
        tenth = 10 if done >= total else done * 10 // total
        if tenth > self._shown:
            self._shown = tenth
            sys.stderr.write(f"{self.label}: {done}/{total} ({done * 100 // total}%)\n")
            sys.stderr.flush()


@contextmanager
def judging(state: Any) -> Iterator[None]:
    """A spinner on a terminal while one state is judged (a long one takes several windows);
    nothing on a pipe, so piped output is only the answer."""
    if not interactive():
        yield
        return
    size = len(state) if isinstance(state, str) else None
    with err_console.status(f"judging{f' a state of {size:,} characters' if size and size > 2000 else ''}…"):
        yield


__all__ = ["Progress", "interactive", "judging", "progress_bar"]
