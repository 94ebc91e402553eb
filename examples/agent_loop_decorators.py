"""Decorators in a small agent loop, on the shipped model (no key, no network).

    python examples/agent_loop_decorators.py

Each user turn goes through three seams written as decorators around ordinary functions:

* `@gate("escalation")` on the turn handler: a person takes over when the message needs one
  (the fallback hands over instead of answering);
* `@route("model-routing", choices=...)` picks the model tier for the answer by difficulty;
* `@gate("confirm-before-act", queue=...)` before a side effect: an action that does not match
  the request is refused, an uncertain or irreversible one waits in a SQLite review queue
  (`Deferred` carries the item id) — a person resolves it, and the resolved items export as
  labelled data for calibration.

Every decision is appended to an audit log (JSON lines, no raw state).

What the run shows on the shipped model (0.6.1): the confirm-before-act seam refuses the
action that does not match its request ("delete all bookings" for "show me my trips") and queues
the cancellation for a person, whose answer is exported as labelled data; the router picks a tier
for each turn (the same, `medium`, for all five: this model reads their difficulty alike). The
escalation seam is over-cautious on this model: it hands *every* turn to a person, the plain
travel question included. `asks_human` is asked of the message alone and does not fire on them
(0.26–0.30); the scope rule sends the two questions (`out_of_scope` 0.26 for the Lisbon question,
in the band of its cut-points 0.19 / 0.39 fitted on banking and CLINC requests where a miss costs
five handovers; 0.82 for comparing itineraries) and `harm`, the first rule read, the other three
(0.10 for the cancellation, in its 0.06–0.23 band; 0.26 for the trips and 0.31 for the demand for
a person, above it). Each hand-over prints the rule and the number that sent it. One of them sits
within 0.35 logits of a cut-point, nearer than two CPUs' logits can differ (docs/local-judge.md,
"Same answers on every CPU"): the upcoming trips (harm 0.26 against 0.23); on another CPU it may
land on the other side. That is the model's weakness on yes/no questions it was not trained for
(issue #21), shown as it is; a better judge is one argument away (`gate(..., judge=...)`).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from seams import AuditLog, Deferred, Refused, ReviewQueue, current_decision, gate, route

workdir = Path(tempfile.mkdtemp(prefix="seams-agent-"))
audit = AuditLog(workdir / "audit.jsonl")
reviews = ReviewQueue(workdir / "reviews.db", capacity=50)


@route("model-routing", state=lambda task, model=None: {"task": task},
       choices={"small": "small-llm", "medium": "medium-llm", "strong": "strong-llm", "fallback": "strong-llm"},
       audit=audit)
def answer(task: str, model: str = "medium-llm") -> str:
    """Answer with the routed model (a stand-in: it says which model would answer)."""
    return f"[{model}] answering: {task}"


@gate("confirm-before-act", state=lambda request, action: {"request": request, "action": action},
      queue=reviews, audit=audit)
def perform(request: str, action: str) -> str:
    """Run a side effect (a stand-in that reports what it would do)."""
    return f"done: {action}"


def hand_over(message: str) -> str:
    d = current_decision()
    why = f"{d.question} {d.probability:.2f}" if d.probability is not None else (d.error or d.outcome)
    return f"[handed to a person: {d.rule}: {why}]"


@gate("escalation", state=lambda message: {"message": message, "context": "a travel booking assistant"},
      on_refuse=hand_over, escalate=hand_over, audit=audit)
def handle(message: str) -> str:
    return answer(message)


TURNS = [
    ("Hi! What's a good time of year to visit Lisbon?", None),
    ("Compare the total cost of three itineraries across two currencies and pick the cheapest.", None),
    ("Cancel my hotel booking for next week.", "cancel hotel booking #4471"),
    ("Show me my upcoming trips.", "delete all bookings of the account"),
    ("This is the third time you got it wrong, get me a human now!", None),
]


def main() -> None:
    for message, action in TURNS:
        print(f"user: {message}")
        print(f"  agent: {handle(message)}")
        if action:
            try:
                print(f"  action: {perform(message, action)}")
            except Deferred as d:
                print(f"  action {action!r} waits for review (item {d.item_id})")
            except Refused as r:
                print(f"  action {action!r} refused: {r.decision.outcome} by {r.decision.rule}")
    print("\nThe tier the router picks for each turn, had the agent answered:")
    for message, _ in TURNS:
        print(f"  {answer(message)}")
    # a person works the queue; resolved items become labelled data
    while (item := reviews.claim("reviewer@example.com")) is not None:
        reviews.resolve(item.id, {"matches": "cancel" in item.state["action"]}, reviewer="reviewer@example.com")
    n = reviews.export(workdir / "reviewed.jsonl")
    print(f"\n{n} reviewed item(s) exported to {workdir / 'reviewed.jsonl'}; "
          f"{sum(1 for _ in audit.read())} decisions in {audit.path}")


if __name__ == "__main__":
    main()
