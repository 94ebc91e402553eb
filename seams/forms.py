"""What form a text takes — a question or a statement — decided in code, not by a model.

Some judgements only make sense for one form: a passage can contradict a claim, but a question
has no truth value to contradict. The shipped model learnt that only partly (it still read one
short answering passage in fifteen as contradicting its question), so a rubric rule can state the
form it applies to (`when: {field: query, is: statement}`) and code decides it before any answer
is read.
"""

from __future__ import annotations

import re

#: words that open a question whatever follows ("what was the next winner." is still a question)
_WH = frozenset({"who", "whom", "whose", "what", "which", "when", "where", "why", "how"})
#: auxiliaries open a question only in a text that does not end as a sentence does: "Will Smith
#: won an Oscar." and "Can openers date from 1858." are statements, "is it raining" is not
_AUX = frozenset({
    "is", "are", "was", "were", "am", "do", "does", "did", "can", "could", "should", "would", "will",
    "shall", "may", "might", "must", "has", "have", "had", "isn't", "aren't", "doesn't", "don't",
    "didn't", "can't", "won't", "wasn't", "weren't",
})
_FIRST_WORD = re.compile(r"[A-Za-z']+")


def is_question(text: str) -> bool:
    """True for "How tall is Everest?", "how to reset my password", "Is it raining";
    false for "Everest is 8,849 m tall.", "The shop opens at nine." and "Will Smith won an Oscar.".

    A question mark decides; else a question word first (QNLI's questions include "what was the
    next female tennis winner after lee duk-hee."), or an auxiliary first in a text that does not
    end with a full stop or "!". A statement that opens with a question word ("When the wall
    fell, Berlin reunited.") is misread as a question, and the passage gate then does not look
    for a passage contradicting it.
    """
    t = text.strip().rstrip("\"')]»” ")
    if not t:
        return False
    if t.endswith("?"):
        return True
    m = _FIRST_WORD.match(t.lstrip("\"'([{«“‘ "))  # '"how do I reset it"' and '(what changed)' too
    first = m.group(0).lower() if m else ""
    return first in _WH or (first in _AUX and not t.endswith((".", "!")))


__all__ = ["is_question"]
