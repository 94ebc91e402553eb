"""States: what is judged. A string, an object or an array, always JSON.

One canonical JSON form keys the cache and the audit hash; one plain-text rendering feeds local
models; backtick references in instructions are checked against an object state's fields.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any, TypeAlias

from .errors import StateError

State: TypeAlias = str | dict[str, Any] | list[Any]

_BACKTICK = re.compile(r"`([^`\n]+)`")


#: The deepest nesting of objects and arrays seams accepts in a state, an instruction or a rubric.
#: Real states are a few levels deep; past this, serialisers and tokenisers recurse until Python's
#: own limit (about 1,000) breaks them, so the limit is checked once, here, with a clear message.
MAX_DEPTH = 64

_SURROGATE = re.compile("[\ud800-\udfff]")


def check_state(state: Any) -> State:
    """Return `state` if it is a JSON string, object or array; raise `StateError` otherwise.

    JSON here means what can be sent as UTF-8 JSON text: finite numbers, string keys, no lone
    surrogate in any string or key, and at most `MAX_DEPTH` levels of objects and arrays.
    """
    if not isinstance(state, (str, dict, list)):
        raise StateError(f"a state must be a string, object or array, got {type(state).__name__}")
    problem = json_problem(state, "state")
    if problem is not None:
        raise StateError(problem)
    return state


def json_problem(value: Any, root: str, *, types: bool = True) -> str | None:
    """Why `value` cannot be sent as JSON text, naming where (`root` then the path), or None.

    One walk checks what would otherwise fail deep inside a serialiser, a tokenizer or SQLite as
    a foreign error: types, NaN/Infinity, non-string keys, lone surrogates and nesting deeper
    than `MAX_DEPTH`. The path is built only when something is wrong. With `types=False` values
    of other types pass (YAML's dates), as long as the strings and nesting are sendable.
    """
    path: list[str] = []
    problem = _problem(value, path, 0, types)
    if problem is None:
        return None
    shown = path if len(path) <= 8 else [*path[:4], f"…({len(path) - 4} more levels)"]
    return f"{root}{''.join(shown)} {problem}"


def text_problem(text: str) -> str | None:
    """Why a string cannot be encoded as UTF-8 (a lone surrogate, and where), or None."""
    if text.isascii():
        return None
    found = _SURROGATE.search(text)
    if found is None:
        return None
    return (
        f"holds a lone surrogate (U+{ord(found.group()):04X}) at character {found.start()}; "
        "text must be valid Unicode, which a lone surrogate is not (it cannot be encoded as UTF-8)"
    )


def _problem(value: Any, path: list[str], depth: int, types: bool) -> str | None:
    if value is None or isinstance(value, (bool, int)):
        return None
    if isinstance(value, str):
        return text_problem(value)
    if isinstance(value, float):
        return None if math.isfinite(value) else f"is {value!r}; JSON has no NaN or Infinity"
    if isinstance(value, (dict, list, tuple)):
        if depth >= MAX_DEPTH:
            return (f"is nested more than {MAX_DEPTH} levels deep (objects and arrays); seams accepts "
                    f"at most {MAX_DEPTH} (seams.state.MAX_DEPTH)")
        if isinstance(value, dict):
            for key in value:
                if not isinstance(key, str):
                    if types:
                        return f"has a non-string key {key!r}; JSON object keys are strings"
                    continue
                bad = text_problem(key)
                if bad is not None:
                    return f"has a key that {bad}"
            children = ((f".{key}", item) for key, item in value.items() if isinstance(key, str))
        else:
            children = ((f"[{i}]", item) for i, item in enumerate(value))
        for step, item in children:
            path.append(step)
            found = _problem(item, path, depth + 1, types)
            if found is not None:
                return found
            path.pop()
        return None
    return f"has type {type(value).__name__}, which is not JSON-serialisable" if types else None


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 kept: equal values give equal strings."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def fingerprint(value: Any) -> str:
    """A short, stable hash of a JSON value (sorted keys, no whitespace)."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()[:16]


def render_text(value: Any) -> str:
    """Plain text of an instruction, description or state value for a text model.

    Strings stay as they are; objects become `field: value` lines; arrays become one line an
    item. Nested values are rendered recursively and indented so structure survives.
    """
    return "\n".join(_lines(value, 0)).strip()


def _lines(value: Any, depth: int) -> list[str]:
    pad = "  " * depth
    if isinstance(value, dict):
        out: list[str] = []
        for key, item in value.items():
            if isinstance(item, (dict, list)) and item:
                out.append(f"{pad}{key}:")
                out.extend(_lines(item, depth + 1))
            else:
                out.append(f"{pad}{key}: {_scalar(item)}")
        return out
    if isinstance(value, list):
        out = []
        for item in value:
            if isinstance(item, (dict, list)) and item:
                sub = _lines(item, depth + 1)
                out.append(f"{pad}- {sub[0].strip()}")
                out.extend(sub[1:])
            else:
                out.append(f"{pad}- {_scalar(item)}")
        return out
    return [pad + _scalar(value)]


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def backtick_refs(value: Any) -> list[str]:
    """Every `name` in backticks inside an instruction (string, object or array), in order."""
    if isinstance(value, str):
        return _BACKTICK.findall(value)
    if isinstance(value, dict):
        return [ref for item in value.values() for ref in backtick_refs(item)]
    if isinstance(value, list):
        return [ref for item in value for ref in backtick_refs(item)]
    return []


__all__ = ["MAX_DEPTH", "State", "backtick_refs", "canonical_json", "check_state", "fingerprint", "json_problem", "render_text", "text_problem"]
