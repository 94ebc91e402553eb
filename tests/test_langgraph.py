"""A rubric inside a real LangGraph graph (seams/integrations/langgraph.py): deterministic nodes
around a `RubricGate` on the tiny ONNX model, a real SQLite `ReviewQueue`, LangGraph's own
checkpointer, `interrupt` and `Command(resume=...)`."""

from __future__ import annotations

import json
from typing import Any, TypedDict

import pytest

pytest.importorskip("langgraph", reason="the langgraph extra is not installed: pip install seams[langgraph]")

from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.types import Command  # noqa: E402

from seams import ReviewQueue, Rubric  # noqa: E402
from seams.errors import InputError, StateError  # noqa: E402
from seams.integrations.langgraph import RubricGate, decision_of  # noqa: E402
from seams.judges import LocalJudge  # noqa: E402

RUBRIC = Rubric.loads("""\
name: reply-gate
state:
  type: object
  fields:
    reply: {description: the reply the agent drafted}
questions:
  agreed:
    type: noul
    instructions: Does the `reply` agree?
policy:
  outcomes: {send: act, drop: refuse, review: review}
  rules:
    - id: agreed
      question: agreed
      high: 0.8
      low: 0.2
      then: send
      else: drop
  default: drop
""")


class State(TypedDict, total=False):
    request: str
    draft: str
    decision: dict[str, Any]
    log: list[str]


def build(gate: RubricGate):
    def write(state: State) -> State:  # a deterministic stand-in for the language model
        return {"draft": {"agree": "yes it is", "refuse": "no it is not"}.get(state["request"], "the ticket text")}

    def step(name: str):
        return lambda state: {"log": [*state.get("log", []), name]}

    g = StateGraph(State)
    g.add_node("write", write)
    g.add_node("gate", gate.node)
    g.add_node("human", gate.review)
    for name in ("send", "drop"):
        g.add_node(name, step(name))
        g.add_edge(name, END)
    g.add_edge(START, "write")
    g.add_edge("write", "gate")
    g.add_conditional_edges("gate", gate.route, gate.targets)
    g.add_conditional_edges("human", gate.route, gate.targets)
    return g.compile(checkpointer=InMemorySaver())


@pytest.fixture
def gate(tiny_model_dir, tmp_path):
    return RubricGate(RUBRIC, {"act": "send", "refuse": "drop", "review": "human"}, fields={"reply": "draft"},
                      judge=LocalJudge(tiny_model_dir), queue=ReviewQueue(tmp_path / "reviews.sqlite"))


@pytest.mark.parametrize(("request_", "node", "outcome"), [("agree", "send", "send"), ("refuse", "drop", "drop")])
def test_automatic_decisions_route_to_their_nodes(gate, request_, node, outcome):
    graph = build(gate)
    out = graph.invoke({"request": request_}, {"configurable": {"thread_id": request_}})
    assert out["log"] == [node]
    assert decision_of(out).outcome == outcome and decision_of(out).rubric_hash == RUBRIC.hash
    assert len(gate.queue) == 0


def test_review_queues_the_item_interrupts_and_resumes_with_the_persons_answer(gate, tmp_path):
    graph = build(gate)
    config = {"configurable": {"thread_id": "t1"}}
    paused = graph.invoke({"request": "unsure"}, config)
    [pending] = paused["__interrupt__"]
    assert pending.value["rubric"] == "reply-gate" and pending.value["state"] == {"reply": "the ticket text"}
    assert graph.get_state(config).next == ("human",)
    assert "log" not in paused  # neither sent nor dropped while a person looks
    [item] = gate.queue.items("open")
    assert pending.value["review_item"] == item.id and item.state == {"reply": "the ticket text"}
    assert item.decision["zone"] == "band"

    done = graph.invoke(Command(resume={"outcome": "send", "labels": {"agreed": True}, "reviewer": "ana"}), config)
    assert done["log"] == ["send"]
    final = decision_of(done)
    assert (final.outcome, final.kind, final.rule, final.zone) == ("send", "act", "review", "band")
    assert done["decision"]["reviewed_by"] == "ana"
    resolved = gate.queue.get(item.id)
    assert resolved.status == "resolved" and resolved.labels == {"agreed": True} and resolved.resolved_by == "ana"
    exported = tmp_path / "labelled.jsonl"
    assert gate.queue.export(exported) == 1
    assert json.loads(exported.read_text())["labels"] == {"agreed": True}


def test_a_review_must_end_in_a_decided_outcome(gate):
    graph = build(gate)
    config = {"configurable": {"thread_id": "t2"}}
    graph.invoke({"request": "unsure"}, config)
    with pytest.raises(InputError, match=r"must end in an act or refuse outcome .*\(\['drop', 'send'\]\), got 'review'"):
        graph.invoke(Command(resume={"outcome": "review"}), config)
    assert gate.queue.items("open")  # nothing was resolved


def test_bad_wiring_is_named_before_anything_runs(gate, tiny_model_dir):
    with pytest.raises(InputError, match=r"sends outcome\(s\) \['review'\] .* nowhere"):
        RubricGate(RUBRIC, {"act": "send", "refuse": "drop"})
    with pytest.raises(InputError, match=r"names \['approve'\]"):
        RubricGate(RUBRIC, {"act": "send", "refuse": "drop", "review": "human", "approve": "x"})
    wrong = RubricGate(RUBRIC, {"act": "send", "refuse": "drop", "review": "human"}, judge=LocalJudge(tiny_model_dir))
    with pytest.raises(StateError, match=r"the graph state has no key\(s\) \['reply'\] .*its keys: \['draft', 'request'\]"):
        build(wrong).invoke({"request": "agree"}, {"configurable": {"thread_id": "t3"}})
