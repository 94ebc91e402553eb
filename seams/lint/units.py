"""What is judged: a file split into units a rule can ask about.

Python is split with `ast` into functions, methods and classes (a class unit is its header and
body with method bodies elided, so a class is not judged twice over its methods), contiguous
module-level statements, and the whole module (for rules that need to see a file at once: a
migration's upgrade and downgrade belong together). Nested functions stay inside their enclosing
function: they are part of what it does. Any other file, and a Python file that does not parse,
is split into hunks: the changed lines with a little context under `--diff`, fixed blocks
otherwise.

Each unit carries its 1-based line range and the lines it *owns* (for a class, the lines not
inside a method), so a diff touches a class only when the class's own lines changed.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

#: Every unit kind a rule may name in `kinds`.
KINDS = ("function", "method", "class", "statements", "module", "hunk")
#: Lines of context kept around a changed hunk of a non-Python file.
HUNK_CONTEXT = 3
#: Lines per block when a non-Python file is linted whole (no `--diff`).
BLOCK_LINES = 40
_BLANK_RUNS = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_NEWLINE = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """Lines as Python and git count them: `str.splitlines` also breaks at form feeds and other
    separators, which would shift every line number after one."""
    parts = _NEWLINE.split(text)
    return parts[:-1] if parts and parts[-1] == "" else parts


@dataclass(frozen=True)
class Unit:
    """One piece of code a rule asks about.

    `name` is the qualified name (`Class.method`, `func`, `<module>`, `<lines 3-9>`);
    `lines` the 1-based inclusive range in the file; `own` the lines a diff must touch for the
    unit to count as changed (None: every line of the range).
    """

    path: str
    kind: str
    name: str
    start: int
    end: int
    text: str
    own: frozenset[int] | None = field(default=None, compare=False)

    def touched_by(self, changed: Iterable[int]) -> bool:
        """Whether any changed line falls in the lines this unit owns."""
        if self.own is not None:
            return any(n in self.own for n in changed)
        return any(self.start <= n <= self.end for n in changed)

    def state(self) -> dict[str, str]:
        """The state a lint rubric judges: what the unit is, where, and its code."""
        code = _BLANK_RUNS.sub("\n\n", self.text).strip("\n")
        return {"kind": self.kind, "name": self.name, "path": self.path, "code": code}

    @property
    def lines(self) -> str:
        return f"{self.start}" if self.start == self.end else f"{self.start}-{self.end}"


def python_units(path: str, source: str, kinds: Sequence[str] = KINDS) -> list[Unit]:
    """Split Python source into units of the requested kinds.

    A file that does not parse falls back to hunks (blocks), so a syntax error never hides the
    file from the rules that read text (secrets in a half-written module still count).
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return block_units(path, source) if "hunk" in kinds else []
    lines = split_lines(source)
    out: list[Unit] = []
    if "module" in kinds and lines:
        out.append(Unit(path, "module", "<module>", 1, len(lines), source))
    _walk(tree.body, path, lines, "", kinds, out, in_class=False)
    if "statements" in kinds:
        out.extend(_statement_blocks(tree.body, path, lines))
    out.sort(key=lambda u: (u.start, -u.end, u.kind))
    return out


def _start(node: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(node, "decorator_list", None) or []
    return min([node.lineno] + [d.lineno for d in decorators])


def _segment(lines: list[str], start: int, end: int) -> str:
    return textwrap.dedent("\n".join(lines[start - 1 : end]))


def _walk(body: list[ast.stmt], path: str, lines: list[str], prefix: str, kinds: Sequence[str],
          out: list[Unit], *, in_class: bool) -> None:
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            kind = "method" if in_class else "function"
            if kind in kinds:
                start, end = _start(node), node.end_lineno or node.lineno
                out.append(Unit(path, kind, prefix + node.name, start, end, _segment(lines, start, end)))
        elif isinstance(node, ast.ClassDef):
            qual = prefix + node.name
            if "class" in kinds:
                out.append(_class_unit(node, path, lines, qual))
            _walk(node.body, path, lines, qual + ".", kinds, out, in_class=True)


def _class_unit(node: ast.ClassDef, path: str, lines: list[str], qual: str) -> Unit:
    """The class with each method's body replaced by `...`: its shape, fields and constants.

    (A method defined on one line, `def f(self): ...`, keeps that line.)"""
    start, end = _start(node), node.end_lineno or node.lineno
    own = set(range(start, end + 1))
    keep: list[str] = []
    skip_until = 0
    methods = {
        m.body[0].lineno: m
        for m in node.body
        if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and m.body
        and m.body[0].lineno > m.lineno
    }
    for n in range(start, end + 1):
        if n <= skip_until:
            continue
        m = methods.get(n)
        if m is not None:
            body_end = m.end_lineno or n
            indent = len(lines[n - 1]) - len(lines[n - 1].lstrip())
            # Blank lines keep the text aligned with the file, so a line of the unit is a line
            # of the file (checks report file lines; the model ignores the whitespace).
            keep.append(" " * indent + "...")
            keep.extend("" for _ in range(n + 1, body_end + 1))
            own -= set(range(n, body_end + 1))
            skip_until = body_end
            continue
        keep.append(lines[n - 1])
    return Unit(path, "class", qual, start, end, textwrap.dedent("\n".join(keep)), frozenset(own))


def _statement_blocks(body: list[ast.stmt], path: str, lines: list[str]) -> list[Unit]:
    """Runs of module-level statements that are not imports, definitions or the docstring."""
    blocks: list[list[ast.stmt]] = []
    current: list[ast.stmt] = []
    for i, node in enumerate(body):
        docstring = i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
            and isinstance(node.value.value, str)
        breaks = docstring or isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom))
        if breaks:
            if current:
                blocks.append(current)
            current = []
        else:
            current.append(node)
    if current:
        blocks.append(current)
    out = []
    for block in blocks:
        start, end = _start(block[0]), block[-1].end_lineno or block[-1].lineno
        out.append(Unit(path, "statements", f"<statements {start}-{end}>", start, end,
                        "\n".join(lines[start - 1 : end])))
    return out


def block_units(path: str, source: str, size: int = BLOCK_LINES) -> list[Unit]:
    """A whole non-Python file as hunks of `size` lines (the last one may be shorter)."""
    lines = split_lines(source)
    out = []
    for start in range(1, len(lines) + 1, size):
        end = min(start + size - 1, len(lines))
        text = "\n".join(lines[start - 1 : end])
        if text.strip():
            out.append(Unit(path, "hunk", f"<lines {start}-{end}>", start, end, text))
    return out


def hunk_units(path: str, source: str, changed: Iterable[int], context: int = HUNK_CONTEXT) -> list[Unit]:
    """The changed lines of a non-Python file, each run widened by `context` lines and merged."""
    lines = split_lines(source)
    if not lines:
        return []
    spans: list[list[int]] = []
    for n in sorted(set(changed)):
        if not 1 <= n <= len(lines):
            continue
        lo, hi = max(1, n - context), min(len(lines), n + context)
        if spans and lo <= spans[-1][1] + 1:
            spans[-1][1] = max(spans[-1][1], hi)
        else:
            spans.append([lo, hi])
    out = []
    for lo, hi in spans:
        text = "\n".join(lines[lo - 1 : hi])
        if text.strip():
            out.append(Unit(path, "hunk", f"<lines {lo}-{hi}>", lo, hi, text))
    return out


__all__ = ["BLOCK_LINES", "HUNK_CONTEXT", "KINDS", "Unit", "block_units", "hunk_units", "python_units", "split_lines"]
