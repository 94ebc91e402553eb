"""Deterministic checks: what code can decide for certain is decided in code, before any judge.

Each check reads one unit and returns hits it is sure of: a broad `except` whose body is only
`pass`, a string that has the shape of a cloud key, a `breakpoint()` left in. A certain hit is a
finding with probability 1.0 and the judge is not asked about that unit for that rule; a unit
without hits still goes to the judge, which reads what no pattern can (an error logged at debug
level and then dropped, a password assembled from parts).

Checks are named; a rule opts in with `check = "<name>"` in its lint metadata.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Callable
from dataclasses import dataclass

from ..secrets import KEY_FORMATS
from .units import Unit, split_lines


@dataclass(frozen=True)
class Hit:
    """A certain finding inside a unit: absolute 1-based lines and why."""

    line: int
    end_line: int
    message: str


Check = Callable[[Unit], list[Hit]]


def _parse(unit: Unit) -> ast.Module | None:
    if unit.kind == "hunk" or not unit.path.endswith(".py"):
        return None
    try:
        return ast.parse(unit.text)
    except (SyntaxError, ValueError):
        return None


def _abs(unit: Unit, node: ast.AST) -> tuple[int, int]:
    """Lines of a node of the unit's (dedented) text, as lines of the file."""
    start = unit.start + node.lineno - 1  # type: ignore[attr-defined]
    end = unit.start + (getattr(node, "end_lineno", None) or node.lineno) - 1  # type: ignore[attr-defined]
    return start, end


# --------------------------------------------------------------------------- swallowed errors

_BROAD = {"Exception", "BaseException"}


def _only_nothing(body: list[ast.stmt]) -> bool:
    """`pass`, `...`, `continue` or a bare string: a body that does nothing with the error."""
    for stmt in body:
        if isinstance(stmt, (ast.Pass, ast.Continue)):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and (
            stmt.value.value is Ellipsis or isinstance(stmt.value.value, str)
        ):
            continue
        return False
    return True


def _broad(handler: ast.ExceptHandler) -> bool:
    t = handler.type
    if t is None:
        return True
    names = t.elts if isinstance(t, ast.Tuple) else [t]
    return any(
        (isinstance(n, ast.Name) and n.id in _BROAD) or (isinstance(n, ast.Attribute) and n.attr in _BROAD)
        for n in names
    )


def _returns_none(body: list[ast.stmt]) -> bool:
    """`return` or `return None` (after statements that do nothing): the failure becomes a None
    the caller cannot tell from a real one."""
    if not body or not isinstance(body[-1], ast.Return) or not _only_nothing(body[:-1]):
        return False
    value = body[-1].value
    return value is None or (isinstance(value, ast.Constant) and value.value is None)


def _several(handler: ast.ExceptHandler) -> bool:
    """A tuple of two or more exception types: a list of failures, all of them dropped."""
    return isinstance(handler.type, ast.Tuple) and len(handler.type.elts) > 1


def _comment_lines(text: str) -> set[int]:
    """Lines (1-based, of `text`) holding a comment that says something: not a pragma, `noqa`
    or type comment."""
    lines: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT and not _PRAGMA.match(tok.string):
                lines.add(tok.start[0])
    except (tokenize.TokenError, SyntaxError):
        return lines  # the lines read so far; ast parsed the text, so this is an edge case
    return lines


_PRAGMA = re.compile(r"#\s*(pragma\b|noqa\b|type:|fmt:|pylint:|seams:)")


def swallowed_error(unit: Unit) -> list[Hit]:
    """An `except` that drops the error for certain.

    * a bare or broad one (`Exception`, `BaseException`) whose body does nothing, or only
      `return`s None;
    * one naming several exception types, `except (ValueError, KeyError):`, whose body does
      nothing and no comment in it says why (`continue  # a damaged entry is asked again` is a
      decision written down, not a silent drop).

    A single narrow type doing nothing (`except KeyError: pass`) may be the point, and a narrow
    `return None` is often a parse-or-None: those are left to the rule's judge.
    """
    tree = _parse(unit)
    if tree is None:
        return []
    comments: set[int] | None = None
    hits = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ExceptHandler):
            continue
        what = "a bare `except:`" if node.type is None else f"`except {ast.unparse(node.type)}`"
        if _broad(node) and _only_nothing(node.body):
            why = f"{what} whose body does nothing swallows every error"
        elif _broad(node) and _returns_none(node.body):
            why = f"{what} that returns None turns every error into a silent None"
        elif _several(node) and _only_nothing(node.body):
            comments = _comment_lines(unit.text) if comments is None else comments
            if any(node.lineno <= ln <= (node.end_lineno or node.lineno) for ln in comments):
                continue
            why = f"{what} whose body does nothing swallows all of them"
        else:
            continue
        start, end = _abs(unit, node)
        hits.append(Hit(start, end, why))
    return hits


# --------------------------------------------------------------------------- secrets and debug

#: Shapes of credentials that are never anything else, by label (the table lives with the memory gate's).
SECRET_PATTERNS: dict[str, re.Pattern[str]] = {f.label: f.pattern for f in KEY_FORMATS}
_SECRET_NAME = re.compile(r"(?i)(pass(word|wd)?|pwd|secret|api_?key|apikey|access_?key|private_?key|token|credential)s?$")
#: Names that hold a secret's *name* or location, not the secret.
_NOT_SECRET_NAME = re.compile(r"(?i)(name|field|header|env|var|path|file|url|uri|prefix|type|kind|label|id|len|length|pattern)$")
_PLACEHOLDER = re.compile(r"(?i)^(|x+|\*+|\.+|changeme|change_me|your[-_ ].*|<.*>|\$\{.*\}|\{.*\}|%\(.*\)s|none|null|todo|dummy|test|example)$")
_DEBUG_NAME = re.compile(r"^(?:[A-Z_]*_)?DEBUG$")
_DEBUGGERS = {"pdb", "ipdb", "pudb", "pydevd", "debugpy"}
_TEXT_SECRET = re.compile(
    r"(?i)(password|passwd|secret|api[_-]?key|access[_-]?key|auth[_-]?token|token)[\"']?\s*[:=]\s*[\"']?([^\s\"'$#{}<>]{8,})"
)
_TEXT_DEBUG = re.compile(r"(?i)^\s*[\"']?debug[\"']?\s*[:=]\s*[\"']?(true|on|yes|1)\b")


def _target_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _looks_secret(name: str | None, value: ast.AST) -> bool:
    if name is None or not _SECRET_NAME.search(name) or _NOT_SECRET_NAME.search(name):
        return False
    if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
        return False
    text = value.value.strip()
    return len(text) >= 8 and " " not in text and not _PLACEHOLDER.match(text)


def secret_or_debug(unit: Unit) -> list[Hit]:
    """Credential-shaped strings, string literals assigned to secret-named targets, a debugger
    call or import, `DEBUG = True`, and `debug=True` passed to a call."""
    hits: list[Hit] = []
    lines = split_lines(unit.text)
    for i, line in enumerate(lines):
        for label, rx in SECRET_PATTERNS.items():
            if rx.search(line):
                hits.append(Hit(unit.start + i, unit.start + i, f"a hard-coded {label}"))
    tree = _parse(unit)
    if tree is None:
        if unit.kind == "hunk":
            for i, line in enumerate(lines):
                m = _TEXT_SECRET.search(line)
                if m and not _PLACEHOLDER.match(m.group(2)):
                    hits.append(Hit(unit.start + i, unit.start + i, f"a hard-coded {m.group(1).lower()}"))
                elif _TEXT_DEBUG.search(line):
                    hits.append(Hit(unit.start + i, unit.start + i, "debug mode switched on"))
        return _dedupe(hits)
    for node in ast.walk(tree):
        found: str | None = None
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                name = _target_name(t.slice if isinstance(t, ast.Subscript) else t)
                if node.value is not None and _looks_secret(name, node.value):
                    found = f"a hard-coded secret in `{name}`"
                elif isinstance(t, ast.Name) and _DEBUG_NAME.match(t.id) and isinstance(node.value, ast.Constant) \
                        and node.value.value is True:
                    found = f"`{t.id} = True` left on"
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if k is not None and _looks_secret(_target_name(k), v):
                    found = f"a hard-coded secret under key {_target_name(k)!r}"
        elif isinstance(node, ast.Call):
            fn = node.func
            fname = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
            owner = fn.value.id if isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name) else ""
            if fname == "breakpoint" or (fname in ("set_trace", "post_mortem") and owner in _DEBUGGERS):
                found = f"a debugger call `{ast.unparse(fn)}()` left in"
            for kw in node.keywords:
                if kw.arg == "debug" and isinstance(kw.value, ast.Constant) and kw.value.value is True:
                    found = f"`debug=True` passed to `{ast.unparse(fn)}`"
                elif _looks_secret(kw.arg, kw.value):
                    found = f"a hard-coded secret passed as `{kw.arg}`"
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if any(m.split(".")[0] in _DEBUGGERS for m in mods):
                found = f"a debugger import `{ast.unparse(node)}` left in"
        if found:
            start, end = _abs(unit, node)
            hits.append(Hit(start, end, found))
    return _dedupe(hits)


def _dedupe(hits: list[Hit]) -> list[Hit]:
    """One hit a line: two reasons on one line (a token's shape and its name) are one finding."""
    by_line: dict[int, Hit] = {}
    for h in sorted(hits, key=lambda h: (h.line, h.end_line)):
        prev = by_line.get(h.line)
        if prev is None:
            by_line[h.line] = h
        elif h.message not in prev.message:
            by_line[h.line] = Hit(prev.line, max(prev.end_line, h.end_line), f"{prev.message}; {h.message}")
    return list(by_line.values())


# --------------------------------------------------------------------------- migrations

_DESTRUCTIVE_OPS = {"drop_table", "drop_column", "drop_index", "drop_constraint", "execute"}
_DJANGO_DESTRUCTIVE = {"RemoveField", "DeleteModel"}


def _is_empty_downgrade(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    body = fn.body
    if _only_nothing(body):
        return True
    return len(body) == 1 and isinstance(body[0], ast.Raise)  # raise NotImplementedError


def irreversible_migration(unit: Unit) -> list[Hit]:
    """An Alembic migration that drops something while its `downgrade` does nothing, and a
    Django `RunPython` with no `reverse_code`."""
    tree = _parse(unit)
    if tree is None:
        return []
    hits = []
    funcs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    up, down = funcs.get("upgrade"), funcs.get("downgrade")
    if up is not None:
        drops = [
            n.func.attr for n in ast.walk(up)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr in _DESTRUCTIVE_OPS - {"execute"}
        ]
        if drops and (down is None or _is_empty_downgrade(down)):
            start, end = _abs(unit, down or up)
            what = "has no downgrade" if down is None else "has a downgrade that restores nothing"
            hits.append(Hit(start, end, f"upgrade() drops with `{drops[0]}` and {what}"))
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "RunPython" \
                and len(n.args) < 2 and not any(k.arg == "reverse_code" for k in n.keywords):
            start, end = _abs(unit, n)
            hits.append(Hit(start, end, "RunPython without reverse_code cannot be reversed"))
    return hits


#: Every named check a rule may use.
CHECKS: dict[str, Check] = {
    "swallowed-error": swallowed_error,
    "secret-or-debug": secret_or_debug,
    "irreversible-migration": irreversible_migration,
}

__all__ = ["CHECKS", "SECRET_PATTERNS", "Check", "Hit", "irreversible_migration", "secret_or_debug",
           "swallowed_error"]
