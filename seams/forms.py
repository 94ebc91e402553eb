"""What form a text takes — a question or a statement — decided in code, not by a model.

Some judgements only make sense for one form: a passage can contradict a claim, but a question
has no truth value to contradict. The shipped model learnt that only partly (it still read one
short answering passage in fifteen as contradicting its question), so a rubric rule can state the
form it applies to (`when: {field: query, is: statement}`) and code decides it before any answer
is read.
"""

from __future__ import annotations

import re

#: words that open a question in English ("how to …" without a question mark included)
_OPENERS = frozenset({
    "who", "whom", "whose", "what", "which", "when", "where", "why", "how",
    "is", "are", "was", "were", "am", "do", "does", "did", "can", "could", "should", "would", "will",
    "shall", "may", "might", "must", "has", "have", "had", "isn't", "aren't", "doesn't", "don't",
    "didn't", "can't", "won't", "wasn't", "weren't",
})
_FIRST_WORD = re.compile(r"[A-Za-z']+")


def is_question(text: str) -> bool:
    """True for "How tall is Everest?", "how to reset my password", "Is it raining";
    false for "Everest is 8,849 m tall." and "The shop opens at nine."."""
    t = text.strip()
    if not t:
        return False
    if t.rstrip("\"')]»” ").endswith("?"):
        return True
    m = _FIRST_WORD.match(t)
    return m is not None and m.group(0).lower() in _OPENERS


__all__ = ["is_question"]
