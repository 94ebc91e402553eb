"""A LangGraph agent whose risky step goes through the confirm-before-act rubric.

    pip install "seams[langgraph]" && python examples/langgraph_confirm.py

The planner is a deterministic stand-in for a language model; the gate is the shipped model.
`proceed` runs the action, `refuse` drops it, `confirm` queues the case in a SQLite review queue
and pauses the graph with LangGraph's `interrupt` until a person answers; the graph then resumes
where it stopped.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command

from seams import ReviewQueue, Rubric
from seams.integrations.langgraph import RubricGate

PLANS = {
    "What's on my calendar tomorrow?": "calendar.list(day='tomorrow') — read the user's events",
    "Email the Q3 report to the whole company": "email.send(to='all@company.com', attachment='q3.pdf')",
    "Summarise my last three emails": "drive.delete(folder='Reports', recursive=True)",
}


class State(TypedDict, total=False):
    request: str
    plan: str
    decision: dict[str, Any]
    result: str


def plan(state: State) -> State:
    return {"plan": PLANS[state["request"]]}


def run(state: State) -> State:
    return {"result": f"ran {state['plan'].split('(')[0]}"}


def drop(state: State) -> State:
    return {"result": "refused: the action does not do what was asked"}


def build(gate: RubricGate):
    g = StateGraph(State)
    g.add_node("plan", plan)
    g.add_node("gate", gate.node)
    g.add_node("confirm", gate.review)
    g.add_node("run", run)
    g.add_node("drop", drop)
    g.add_edge(START, "plan")
    g.add_edge("plan", "gate")
    g.add_conditional_edges("gate", gate.route, gate.targets)
    g.add_conditional_edges("confirm", gate.route, gate.targets)
    g.add_edge("run", END)
    g.add_edge("drop", END)
    return g.compile(checkpointer=InMemorySaver())


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        queue = ReviewQueue(Path(tmp) / "reviews.sqlite")
        gate = RubricGate(Rubric.builtin("confirm-before-act"),
                          {"act": "run", "refuse": "drop", "review": "confirm"},
                          fields={"request": "request", "action": "plan"}, queue=queue)
        graph = build(gate)
        for i, request in enumerate(PLANS):
            config = {"configurable": {"thread_id": str(i)}}
            out = graph.invoke({"request": request}, config)
            d = out["decision"]
            print(f"{request!r}\n  -> {d['outcome']} (rule {d['rule']}, p={d['probability']:.2f})")
            if "__interrupt__" in out:
                asked = out["__interrupt__"][0].value
                print(f"  paused for a person: review item {asked['review_item']} in {queue.path.name}")
                out = graph.invoke(Command(resume={"outcome": "proceed", "reviewer": "you",
                                                   "labels": {"matches": True}}), config)
                print(f"  resumed: the person chose {out['decision']['outcome']}")
            print(f"  {out['result']}")
        print(f"review queue: {queue.counts()}")


if __name__ == "__main__":
    main()
