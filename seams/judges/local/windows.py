"""States longer than the model's window: how they are split, and how the windows' answers combine.

A cross-encoder reads `[CLS] hypothesis [SEP] state [SEP]` in at most `max_length` tokens. When
the state does not fit beside a question's longest hypothesis, it is **never cut silently**:

1. **Split.** The state's tokens are split into windows of `size` tokens, each overlapping the
   previous one by a quarter of a window (`OVERLAP`), so a phrase that straddles a boundary is
   still seen whole by one window. `size` is the same for every hypothesis of one question (the
   room its longest hypothesis leaves), so all options or levels of a Choice or Score see exactly
   the same windows and stay comparable. It depends only on the state and that question, never on
   the other questions of the call, so adding or reordering questions cannot change an answer.
2. **Combine.**

   * **Noul → the maximum P(yes) over windows.** A Noul at a seam is flag-like ("does this
     contain an injection?", "is a refund asked for?"): one window that shows the thing is the
     signal, and a mean would let a long harmless tail dilute it, so a longer state could hide a
     red flag. This is the same max-aggregation the policy uses across flags. The price: a Noul
     phrased the other way round ("is the whole message polite?") is answered "yes" if any window
     looks polite — phrase Nouls as the thing to detect.
   * **Choice and Score → the distribution of the most confident window** (by the protocol's own
     confidence formula; the first such window on a tie). Windows that do not contain the evidence
     give a flat distribution; the one that does gives a peaked one. Averaging logits would dilute
     that window by the number of irrelevant ones, so the same evidence would read as less
     certain the longer the state. Taking the most confident window keeps the answer a real
     distribution the model produced on one piece of text (so its temperature calibration still
     holds), and is invariant to the order of options.

The number of windows is recorded: `Answers.windows` holds the largest count over the call's
questions, and each windowed answer carries `x_windows`. A hypothesis that leaves less than
`min_state_tokens` for the state is an `InputError` naming the limit: windows that small would
read almost nothing of the state.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...answers import choice_confidence, score_confidence
from ...errors import QuestionError

#: Fraction of a window shared with the previous window.
OVERLAP = 0.25


def min_state_tokens(max_length: int) -> int:
    """The least room a hypothesis must leave for the state: a quarter of the window."""
    return max(8, max_length // 4)


def window_size(max_length: int, specials: int, hypothesis_tokens: Sequence[int], what: str) -> int:
    """Tokens of state that fit beside the longest of a question's hypotheses.

    Raises `QuestionError` (an `InputError`) when the longest hypothesis leaves less than
    `min_state_tokens(max_length)`; `what` names the question in the message.
    """
    longest = max(hypothesis_tokens)
    size = max_length - specials - longest
    floor = min_state_tokens(max_length)
    if size < floor:
        limit = max_length - specials - floor
        raise QuestionError(
            f"{what}: its text is {longest} tokens as the model reads it; the model's window is "
            f"{max_length} tokens, of which a question may use at most {limit} (the rest holds the "
            "state). Shorten the instructions or the option/level descriptions."
        )
    return size


def stride(size: int) -> int:
    """Tokens a window shares with the previous one."""
    return int(size * OVERLAP)


def combine_noul(logits: np.ndarray) -> float:
    """The largest logit over windows (sigmoid is monotonic, so this is the max P(yes))."""
    return float(np.max(logits))


def softmax(logits: np.ndarray, temperature: float) -> np.ndarray:
    """Row-wise softmax of `logits / temperature`, in float64 so distributions sum to 1."""
    z = np.asarray(logits, dtype=np.float64) / temperature
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def combine_distribution(logits: np.ndarray, temperature: float, kind: str) -> np.ndarray:
    """The distribution of the most confident window.

    `logits` is [windows, options or levels]; `kind` is "choice" or "score" and picks the
    protocol's confidence formula. Returns the chosen window's probabilities.
    """
    probs = softmax(np.atleast_2d(logits), temperature)
    return probs[_most_confident(probs, kind)]


def distribution_window(logits: np.ndarray, temperature: float, kind: str) -> int:
    """The index of the window `combine_distribution` reads its answer from."""
    return _most_confident(softmax(np.atleast_2d(logits), temperature), kind)


def noul_window(logits: np.ndarray) -> int:
    """The index of the window `combine_noul` reads its answer from (the first on a tie)."""
    return int(np.argmax(logits))


def _most_confident(probs: np.ndarray, kind: str) -> int:
    if probs.shape[0] == 1:
        return 0
    confidence = choice_confidence if kind == "choice" else score_confidence
    return int(np.argmax([confidence(row.tolist()) for row in probs]))


__all__ = [
    "OVERLAP",
    "combine_distribution",
    "combine_noul",
    "distribution_window",
    "min_state_tokens",
    "noul_window",
    "softmax",
    "stride",
    "window_size",
]
