"""A review queue for the reviewer's desk tests: a rubric with a Noul, a Choice and a Score, and
items routed to review by its policy through a real decision (a fixed judge's answers), one of
them a passage that carries a `<script>`."""

from __future__ import annotations

from pathlib import Path

from seams.queue import ReviewQueue
from seams.rubric import Rubric

from .fixed_judge import FixedJudge

RUBRIC = """\
name: desk-test
version: 1
description: Support replies, checked before they are sent.
state:
  fields:
    request: {description: "What the user asked.", required: true}
    reply: {description: "The drafted reply.", required: true}
questions:
  harmful:
    type: noul
    instructions: Could the `reply` cause the user harm?
    criteria:
      true: it gives advice that risks health, money or safety
      false: it is safe to follow
  topic:
    type: choice
    instructions: What is the `request` about?
    criteria:
      billing: payments, refunds and invoices
      account: sign-in, profile and settings
      other: anything else
  quality:
    type: score
    instructions: How well does the `reply` answer the `request`?
    criteria:
      - it does not answer
      - it answers in part
      - it answers fully and correctly
policy:
  outcomes: {send: act, review: review, block: refuse}
  rules:
    - id: harm
      description: A reply that may harm is held for a person unless clearly safe.
      question: harmful
      high: 0.8
      low: 0.2
      then: block
      else: send
      review: review
  default: send
"""

#: The item whose reply carries a script: the page must show it as text.
SCRIPT = '<script>document.title="pwned";window.__pwned=1</script><b>bold?</b>'


def make_queue(root: Path, *, n: int = 3, capacity: int = 50) -> tuple[Path, Path]:
    """A rubric file and a queue file with `n` items in review (the first carries SCRIPT)."""
    rubric_path = root / "desk-test.yaml"
    rubric_path.write_text(RUBRIC, encoding="utf-8")
    rubric = Rubric.load(rubric_path)
    judge = FixedJudge({"harmful": 0.5, "topic": {"billing": 0.6, "account": 0.3, "other": 0.1},
                        "quality": [0.2, 0.5, 0.3]})
    queue_path = root / "queue.sqlite"
    q = ReviewQueue(queue_path, capacity=capacity)
    for i in range(n):
        state = {"request": f"Can I get a refund for order {i}?",
                 "reply": SCRIPT if i == 0 else f"Yes: refunds take 5 days (order {i})."}
        d = rubric.decide(state, judge=judge)
        assert d.kind == "review", d
        q.enqueue(state, decision=d)
    q.close()
    return rubric_path, queue_path
