"""Reading rubric YAML with positions, so every error can name its file, line and column."""

from __future__ import annotations

import difflib
import functools
import re
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError
from ruamel.yaml.events import (
    AliasEvent,
    CollectionEndEvent,
    CollectionStartEvent,
    ScalarEvent,
)

from ..errors import RubricError, ValidationProblem, validation_problems
from ..state import MAX_DEPTH, json_problem

#: The most nodes a rubric may hold once its YAML aliases are expanded. The largest built-in
#: rubric has a few hundred; an "alias bomb" of a few KB expands into billions, so the count is
#: checked on the parser's events, before any tree is built.
MAX_YAML_NODES = 100_000


def parse_yaml(text: str, path: str | None) -> CommentedMap:
    """The round-trip document (keeps positions and comments for write-back)."""
    yaml = YAML(typ="rt")
    try:
        _check_expansion(yaml, text, path)
        doc = yaml.load(text)
    except DuplicateKeyError as exc:
        mark = exc.problem_mark
        key = re.search(r'duplicate key "([^"]*)"', exc.problem or "")
        name = key.group(1) if key else "?"
        first = exc.context_mark.line + 1 if exc.context_mark is not None else None
        raise RubricError(
            f"duplicate key {name!r} (the mapping starts at line {first}); keys and option names must be unique",
            path=path, line=mark.line + 1 if mark else None, column=mark.column + 1 if mark else None,
        ) from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        col = mark.column + 1 if mark is not None else None
        problem = exc.problem or exc.context or "invalid YAML"
        raise RubricError(f"malformed YAML: {problem}", path=path, line=line, column=col) from None
    except RubricError:
        raise
    except Exception as exc:  # noqa: BLE001 -- ruamel raises a few unmarked errors (e.g. bad encodings)
        raise RubricError(f"malformed YAML: {exc}", path=path) from None
    if not isinstance(doc, CommentedMap):
        got = "an empty file" if doc is None else ("a list" if isinstance(doc, list) else f"a {type(doc).__name__}")
        raise RubricError(f"a rubric is a YAML mapping, got {got}", path=path, line=1, column=1)
    return doc


def _check_expansion(yaml: YAML, text: str, path: str | None) -> None:
    """Refuse a document that would expand past `MAX_YAML_NODES` nodes or nest past `MAX_DEPTH`.

    Counted on the event stream: each alias adds the size of the node its anchor names, so a
    nested alias bomb is caught after reading a few KB, never by building what it spells.
    """
    sizes: dict[str, int] = {}
    open_: list[tuple[str | None, int]] = []
    total = 0
    for event in yaml.parse(text):
        if isinstance(event, ScalarEvent):
            total += 1
            if event.anchor:
                sizes[event.anchor] = 1
        elif isinstance(event, CollectionStartEvent):
            open_.append((event.anchor, total))
            total += 1
            if len(open_) > MAX_DEPTH:
                _refuse(f"the document is nested more than {MAX_DEPTH} levels deep; a rubric may nest "
                        f"at most {MAX_DEPTH} (seams.state.MAX_DEPTH)", event, path)
        elif isinstance(event, CollectionEndEvent):
            anchor, start = open_.pop()
            if anchor:
                sizes[anchor] = total - start
        elif isinstance(event, AliasEvent):
            total += sizes.get(event.anchor, 1)
        if total > MAX_YAML_NODES:
            _refuse(f"the document expands to more than {MAX_YAML_NODES:,} nodes once its aliases are "
                    f"resolved; a rubric may hold at most {MAX_YAML_NODES:,} (an alias bomb?)", event, path)


def _refuse(message: str, event: Any, path: str | None) -> None:
    mark = event.start_mark
    raise RubricError(message, path=path, line=mark.line + 1 if mark else None,
                      column=mark.column + 1 if mark else None)


def check_sendable(data: dict[str, Any], doc: CommentedMap | None, path: str | None) -> None:
    """Refuse text no judge could be sent or audit log written (a lone surrogate in `version`, a
    key or a description), naming the top-level field and its line."""
    for key, value in data.items():
        problem = json_problem(value, str(key), types=False)
        if problem is not None:
            line, col = position(doc, [key]) if doc is not None else (None, None)
            raise RubricError(problem, path=path, line=line, column=col, field=str(key))


def plain(node: Any) -> Any:
    """Plain dicts and lists; mapping keys become strings (YAML reads `true:` as a boolean)."""
    if isinstance(node, dict):
        return {_key(k): plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [plain(v) for v in node]
    if isinstance(node, str):
        return str(node)
    return node


def _key(k: Any) -> Any:
    if isinstance(k, bool):
        return "true" if k else "false"
    if isinstance(k, (int, float)):
        return str(k)
    return k


def position(doc: CommentedMap, loc: Sequence[Any]) -> tuple[int | None, int | None]:
    """1-based line and column of the deepest node of `loc` found in the document."""
    node: Any = doc
    best: tuple[int | None, int | None] = (None, None)
    for part in loc:
        if isinstance(node, CommentedMap):
            key = _find_key(node, part)
            if key is None:
                continue  # a tag pydantic added (e.g. the question type) rather than a real key
            try:
                line, col = node.lc.key(key)
                best = (line + 1, col + 1)
            except (KeyError, TypeError, AttributeError):
                pass  # this node has no recorded position: the parent's stands
            node = node[key]
        elif isinstance(node, CommentedSeq) and isinstance(part, int) and 0 <= part < len(node):
            try:
                line, col = node.lc.item(part)
                best = (line + 1, col + 1)
            except (KeyError, TypeError, AttributeError):
                pass  # this node has no recorded position: the parent's stands
            node = node[part]
    return best


def _find_key(node: CommentedMap, part: Any) -> Any:
    if part in node:
        return part
    for key in node:
        if _key(key) == part:
            return key
    return None


def located_error(exc: ValidationError, doc: CommentedMap, path: str | None) -> RubricError:
    """Every validation error, each with its position, field path and message; the first leads
    and the rest ride along in `others` (so a misspelt key does not hide a second mistake)."""
    errors = [_located(p, doc, path) for p in validation_problems(exc)]
    first = errors[0]
    return RubricError(first.message, path=path, line=first.line, column=first.column, field=first.field,
                       others=errors[1:])


def _located(problem: ValidationProblem, doc: CommentedMap, path: str | None) -> RubricError:
    loc = list(problem.loc)
    line, col = position(doc, loc)
    field = ".".join(str(p) for p in loc if p not in ("noul", "choice", "score") or loc.index(p) == 0)
    msg = problem.message
    if problem.type == "extra_forbidden" and loc:
        guess = difflib.get_close_matches(str(loc[-1]), _schema_keys(), n=1, cutoff=0.75)
        if guess:
            msg += f"; did you mean {guess[0]!r}?"
    return RubricError(msg, path=path, line=line, column=col, field=field or None)


@functools.cache
def _schema_keys() -> tuple[str, ...]:
    """Every key a rubric file may use (field names and aliases of the rubric's models): what a
    misspelt key is matched against."""
    from pydantic import BaseModel

    from .schema import RubricSpec

    keys: set[str] = set()
    seen: set[type] = set()

    def walk(tp: Any) -> None:
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            if tp in seen:
                return
            seen.add(tp)
            for name, f in tp.model_fields.items():
                keys.add(f.alias or name)
                walk(f.annotation)
        for arg in typing.get_args(tp):
            walk(arg)

    walk(RubricSpec)
    return tuple(sorted(keys))


def read_text(path: str | Path) -> str:
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RubricError("no such rubric file", path=str(p)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RubricError(f"cannot read rubric: {exc}", path=str(p)) from None


__all__ = ["MAX_YAML_NODES", "check_sendable", "located_error", "parse_yaml", "plain", "position", "read_text"]
