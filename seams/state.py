"""States: what is judged. A string, an object or an array, always JSON.

One canonical JSON form keys the cache and the audit hash; one plain-text rendering feeds local
models; backtick references in instructions are checked against an object state's fields.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, TypeAlias

from .errors import StateError

State: TypeAlias = str | dict[str, Any] | list[Any]

_BACKTICK = re.compile(r"`([^`\n]+)`")


def check_state(state: Any) -> State:
    """Return `state` if it is a JSON string, object or array; raise `StateError` otherwise."""
    if not isinstance(state, (str, dict, list)):
        raise StateError(f"a state must be a string, object or array, got {type(state).__name__}")
    _check_json(state, "state")
    return state


def _check_json(value: Any, path: str) -> None:
    if value is None or isinstance(value, (str, bool, int)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise StateError(f"{path} is {value!r}; JSON has no NaN or Infinity")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise StateError(f"{path} has a non-string key {key!r}; JSON object keys are strings")
            _check_json(item, f"{path}.{key}")
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_json(item, f"{path}[{i}]")
        return
    raise StateError(f"{path} has type {type(value).__name__}, which is not JSON-serialisable")


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 kept: equal values give equal strings."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


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


__all__ = ["State", "backtick_refs", "canonical_json", "check_state", "render_text"]
