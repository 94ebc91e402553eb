"""Small helpers for the sentences seams prints."""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 question`, `2 questions`; `many` for an irregular plural."""
    return f"{n} {word if n == 1 else many or word + 's'}"


__all__ = ["plural"]
