"""A rubric and labelled sets the tiny features model cannot answer alone but a head can learn.

The tiny model (tests/tinymodel.py) gives the word "invoice" no weight, so zero-shot it cannot
tell a billing complaint from filler; its features count the word, so a head fitted on labels
("an invoice is mentioned" → refund) learns it. The Choice's options follow the state's team
word through the model's own match term; an invoice ticket names no team and belongs to billing,
which only a head (an option prior the features allow) can learn; zero-shot, its tie goes to
the first option.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

RUBRIC = """\
# refund desk (heads tests)
name: refund-desk
state: text
questions:
  refund:
    type: noul
    instructions: Is a refund asked for?
  team:
    type: choice
    instructions: Which team should take the ticket?
    criteria:
      technical: null
      sales: null
      billing: null
policy:
  outcomes: {refund: act, route: act, hold: refuse}
  rules:
    - id: refund
      question: refund
      high: 0.7
      low: 0.3
      then: refund
      else: next
  default: route
"""

WORDS = ["the", "customer", "ticket", "was", "charged", "twice", "filler", "text", "word", "team"]
TEAMS = ["billing", "technical", "sales"]


def items(n: int, seed: int = 0, *, label_noise: float = 0.0) -> list[dict[str, Any]]:
    """`n` labelled tickets: half mention an invoice (refund: yes, team: billing)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        invoice = bool(i % 2)
        words = list(rng.choice(WORDS, size=int(rng.integers(3, 8))))
        team = "billing" if invoice else str(rng.choice(["technical", "sales"]))
        if invoice:  # no team word: the model has nothing to match, a head learns invoice → billing
            words.insert(int(rng.integers(0, len(words))), "invoice")
        else:
            words.append(team)
        refund = invoice if rng.uniform() >= label_noise else not invoice
        out.append({"id": f"t{i}", "state": " ".join(words), "labels": {"refund": refund, "team": team}})
    return out


def jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)
