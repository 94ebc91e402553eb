"""`--diff BASE`: which lines of which files changed since a git revision.

Parses `git diff -U0 BASE`: no context lines, so every hunk header names exactly the lines that
were added or changed on the new side. A pure deletion touches the lines on either side of
where the text was removed (deleting the `raise` from an `except` block changes that function).
The diff is taken against the working tree, so staged and unstaged edits both count; untracked
files are not part of any diff until they are added.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def git_root(cwd: Path) -> Path:
    """The top of the git work tree containing `cwd`; an `InputError` outside one."""
    out = _git(["rev-parse", "--show-toplevel"], cwd, what="--diff needs a git repository")
    return Path(out.strip()).resolve()


def changed_lines(base: str, cwd: Path, paths: Sequence[Path] = ()) -> dict[Path, set[int]]:
    """Absolute path → changed line numbers (1-based, new side) for files changed since `base`.

    Deleted files are left out (nothing of them is left to judge). `paths` limits the diff.
    """
    if not base or base.startswith("-"):
        raise InputError(f"--diff needs a git revision, got {base!r}")
    root = git_root(cwd)
    specs = [str(Path(p).resolve()) for p in paths]
    out = _git(
        ["-c", "core.quotePath=false", "diff", "-U0", "--no-color", "--no-ext-diff", "-M", base, "--", *specs],
        root,
        what=f"git diff against {base!r} failed",
    )
    return parse_diff(out, root)


def parse_diff(text: str, root: Path) -> dict[Path, set[int]]:
    """Parse `git diff -U0` output into absolute path → changed new-side lines."""
    result: dict[Path, set[int]] = {}
    current: set[int] | None = None
    for line in text.split("\n"):
        if line.startswith("+++ "):
            name = line[4:].rstrip("\t")
            if name == "/dev/null":
                current = None
                continue
            name = _unquote(name)
            name = name.removeprefix("b/")
            current = result.setdefault((root / name).resolve(), set())
        elif line.startswith("@@") and current is not None:
            m = _HUNK.match(line)
            if not m:
                continue
            start, count = int(m.group(1)), int(m.group(2) if m.group(2) is not None else 1)
            if count == 0:  # pure deletion after line `start`
                current.update(n for n in (start, start + 1) if n >= 1)
            else:
                current.update(range(start, start + count))
    return {p: lines for p, lines in result.items() if lines}


def _unquote(name: str) -> str:
    """Undo git's C-style quoting of unusual file names (`"b/na\\303\\257ve.py"`)."""
    if not (name.startswith('"') and name.endswith('"')):
        return name
    raw = name[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
    return raw.encode("latin-1").decode("utf-8", "replace")


def _git(args: list[str], cwd: Path, *, what: str) -> str:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, encoding="utf-8",
                              errors="replace", check=False)
    except FileNotFoundError:
        raise InputError(f"{what}: git is not installed") from None
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise InputError(f"{what}: {detail[0] if detail else f'git exited {proc.returncode}'}")
    return proc.stdout


__all__ = ["changed_lines", "git_root", "parse_diff"]
