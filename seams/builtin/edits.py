"""Minimal edits between a stored statement and a new one: what code can tell without a model.

A correction is usually phrased as close to the original as possible: "the project deploys on
Fridays" becomes "the project no longer deploys on Fridays" or "the project deploys on
Thursdays". To a similarity score (and to a small model trained on paraphrases) such a pair looks
like a near-duplicate, which is exactly backwards. The *shape* of the edit says more than its
size: the same words with a negation added or removed, or the same words with one short span
swapped for another, is a change of the fact, not a restatement of it. Deletions (a poorer
statement) and insertions other than a negation (an enrichment) are left to the model.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import Literal

Edit = Literal["negation", "substitution"]

_TOKEN = re.compile(r"[a-z0-9]+(?:[.,:/-][a-z0-9]+)*")
MAX_SWAP = 3  # tokens on either side of a substitution


def _norm(word: str) -> str:
    """Lower-case, apostrophes dropped, a plural or third-person -s cut (deploys → deploy)."""
    w = word.replace("'", "").replace("\u2019", "")
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    return w


def _normed(words: str) -> frozenset[str]:
    """A word set, normalised the way the tokens are."""
    return frozenset(map(_norm, words.split()))


#: Words that turn a statement into its denial ("does not", "no longer", "never", "isn't").
_NEGATORS = _normed("not no never nt cannot cant dont doesnt didnt isnt arent wasnt werent wont hasnt "
                    "havent hadnt shouldnt wouldnt anymore neither nor")
#: Words a negation drags in with it ("no *longer*", "*does* not deploy").
_NEGATION_HELPERS = _normed("longer do does did is are was were has have had will would should any more")
_FUNCTION = _normed("the a an of to in on at for and or is are be was were it this that with by as")
#: Words that make a span vaguer: "atorvastatin" → "a medication" generalises, it does not correct.
_VAGUE = _normed("a an some someone somebody something somewhere sometime person people thing things stuff "
                 "one any certain various kind sort")


def tokens(text: str) -> list[str]:
    return [_norm(t) for t in _TOKEN.findall(text.lower().replace("n't", "nt").replace("n\u2019t", "nt"))]


def minimal_edit(old: str, new: str) -> Edit | None:
    """`negation` when `new` is `old` with a negation added or removed, `substitution` when one
    short span (≤ 3 words a side, not only function words) was swapped for one no vaguer ("a
    medication" for "atorvastatin" is a generalisation) and most words are shared; None for
    anything else, including identical texts."""
    a, b = tokens(old), tokens(new)
    if not a or not b or a == b:
        return None
    ops = [op for op in SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes() if op[0] != "equal"]
    changed = [w for _, i1, i2, j1, j2 in ops for w in a[i1:i2] + b[j1:j2]]
    if any(w in _NEGATORS for w in changed) and all(w in _NEGATORS or w in _NEGATION_HELPERS for w in changed):
        return "negation"
    if len(ops) == 1 and ops[0][0] == "replace":
        _, i1, i2, j1, j2 = ops[0]
        old_span, new_span = a[i1:i2], b[j1:j2]
        shared = len(a) - len(old_span)
        if (len(old_span) <= MAX_SWAP and len(new_span) <= MAX_SWAP and shared >= 2
                and shared >= 0.5 * max(len(a), len(b))
                and not set(old_span + new_span) <= _FUNCTION
                and not any(w in _NEGATORS for w in old_span + new_span)
                and not (set(new_span) & _VAGUE) - set(old_span)):  # a vaguer span: the model decides
            return "substitution"
    return None


__all__ = ["Edit", "minimal_edit", "tokens"]
