"""How much work `seams serve` lets one request cost, sized from a run timed on this machine.

A bound in model runs alone is sized for one machine: `--max-pairs 512` let through a 255-option
Choice over a 2,000-token state (176 runs, 43k tokens) that takes 14.5 s on one AVX2 thread, about
ten times what it takes on the machine the bound was chosen on, so under load every such request
ran into `--request-timeout` and was answered 504 (bench/soak.py). A model's time is about proportional
to the tokens it reads, so the server bounds those too (`max_tokens`), and `seams serve` sizes
that bound at start: it times a fixed ask over a window-long state, divides by the tokens the
model read (`Answers.usage.input_tokens`), and allows one request a share of
`--request-timeout`'s worth. The share leaves room for the requests a busy server runs beside it.
"""

from __future__ import annotations

import statistics
import time

from ..judges.base import Judge
from ..questions import Choice, Noul, Question

#: The share of the request timeout one request's model work may fill on an idle server.
SHARE = 0.25
#: Never size the bound below this: a state of a few windows with a few questions fits.
MIN_TOKENS = 4_096
#: A state one window long (about 200 tokens), so the probe pays the longest pairs' cost a token.
_SENTENCE = ("The customer writes that the invoice for March charged the team plan twice, once on the 1st"
             " and again on the 3rd, and asks for one of the charges to be refunded to the card on file.")
PROBE_STATE = " ".join([_SENTENCE] * 5)
PROBE_QUESTIONS: dict[str, Question] = {
    "billing": Noul(instructions="Is this about a payment or a charge?"),
    "team": Choice(instructions="Which team should take it?",
                   criteria=["billing", "technical support", "sales", "security"]),
}


def seconds_per_token(judge: Judge, repeats: int = 3) -> float:
    """The judge's wall seconds per token read, the median of `repeats` timed asks after a warm-up.

    Raises `ValueError` when the judge reports no tokens (a remote judge, whose work is not ours)."""
    judge.ask(PROBE_STATE, PROBE_QUESTIONS)  # warm-up: first-run allocations, caches
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        answers = judge.ask(PROBE_STATE, PROBE_QUESTIONS)
        elapsed = time.perf_counter() - t0
        if answers.usage.input_tokens <= 0:
            raise ValueError(f"{judge.model_id} reports no tokens read; its cost cannot be measured here")
        rates.append(elapsed / answers.usage.input_tokens)
    return statistics.median(rates)


def max_tokens_for(request_timeout: float, per_token: float, share: float = SHARE) -> int:
    """The tokens one request may read so that it computes in `share` of `request_timeout`."""
    if not request_timeout > 0 or not per_token > 0:
        raise ValueError("request_timeout and per_token must be positive")
    return max(MIN_TOKENS, int(share * request_timeout / per_token))


__all__ = ["MIN_TOKENS", "SHARE", "max_tokens_for", "seconds_per_token"]
