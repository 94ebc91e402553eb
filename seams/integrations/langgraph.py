"""A rubric as a LangGraph node and conditional edge (`pip install seams[langgraph]`).

`RubricGate` decides a rubric over the graph's state and routes by the decision:

* `gate.node` — the node: reads the rubric's state out of the graph's state (`fields` maps each
  rubric field to a graph key, or names the one key of a text state), decides, and writes the
  decision (as JSON) under `key`; a decision for review is put in the `ReviewQueue`, once per
  state (the queue's enqueue is idempotent, so a re-run node does not ask a person twice);
* `gate.route` — the conditional edge: the name of the node for the decision, from `routes`
  (keyed by outcome kind, ``act`` / ``refuse`` / ``review``, or by outcome name, which wins);
* `gate.review` — an optional review node that pauses the graph with LangGraph's `interrupt` and,
  once resumed with ``Command(resume={"outcome": ..., "labels": {...}, "reviewer": ...})``,
  resolves the queued item with the person's labels and records their outcome, so `gate.route`
  sends the case on. It is a node of its own because LangGraph re-runs an interrupted node from
  its start when resumed: with the enqueue in another node, a resumed review never enqueues twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.types import interrupt

from ..decision import Decision
from ..errors import InputError, StateError
from ..judges.base import Judge
from ..queue import ReviewQueue
from ..routing import Decider, as_decider
from ..rubric import Rubric

KINDS = ("act", "refuse", "review")


class RubricGate:
    """Decide `rubric` over a LangGraph state and route `act` / `refuse` / `review` to named nodes.

    Parameters
    ----------
    rubric
        The rubric to decide with.
    routes
        Node name per outcome kind (all three) or per outcome name; an outcome name overrides
        its kind, so two refusals may go to different nodes.
    fields
        Where the rubric's state is in the graph's state: one key (the whole state of a text or
        array rubric), or rubric field → graph key for an object rubric. Default: the graph keys
        named like the rubric's declared fields.
    judge
        A judge or a `Cascade` (None: the shipped local model).
    key
        The graph key the decision is written under; the graph's state must declare it.
    queue
        Where review decisions go; without one a review decision is only routed.
    """

    def __init__(self, rubric: Rubric, routes: Mapping[str, str], *, fields: str | Mapping[str, str] | None = None,
                 judge: Judge | Decider | None = None, key: str = "decision", queue: ReviewQueue | None = None) -> None:
        outcomes = rubric.policy.outcomes
        unknown = sorted(set(routes) - set(KINDS) - set(outcomes))
        if unknown:
            raise InputError(f"routes names {unknown}, which are neither outcome kinds {list(KINDS)} nor outcomes "
                             f"of rubric {rubric.name!r} ({sorted(outcomes)})")
        unrouted = sorted(o for o, kind in outcomes.items() if o not in routes and kind not in routes)
        if unrouted:
            raise InputError(f"routes sends outcome(s) {unrouted} of rubric {rubric.name!r} nowhere; "
                             f"give a node for their kind ({sorted({outcomes[o] for o in unrouted})}) or name")
        if fields is None:
            fields = {f: f for f in rubric.spec.state.fields} if rubric.spec.state.type == "object" else "text"
        self.rubric = rubric
        self.routes = dict(routes)
        self.fields = fields
        self.key = key
        self.queue = queue
        self._decider = as_decider(judge)

    @property
    def targets(self) -> list[str]:
        """Every node `route` can return: the `path_map` of `add_conditional_edges`."""
        return sorted(set(self.routes.values()))

    def rubric_state(self, state: Mapping[str, Any]) -> Any:
        """The rubric's state, read out of the graph's state through `fields`."""
        wanted = [self.fields] if isinstance(self.fields, str) else list(self.fields.values())
        missing = [k for k in wanted if k not in state]
        if missing:
            raise StateError(f"rubric {self.rubric.name!r}: the graph state has no key(s) {missing} "
                             f"(fields={self.fields!r}); its keys: {sorted(state)}")
        if isinstance(self.fields, str):
            return state[self.fields]
        return {field: state[k] for field, k in self.fields.items()}

    def node(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """The deciding node: ``{key: decision}``, the decision queued when it is for review."""
        judged = self.rubric_state(state)
        decision = self._decider.decide(self.rubric, judged)
        out = decision.model_dump(mode="json")
        if decision.needs_review and self.queue is not None:
            out["review_item"] = self.queue.enqueue(judged, decision=decision).item.id
        return {self.key: out}

    __call__ = node

    def route(self, state: Mapping[str, Any]) -> str:
        """The conditional edge: the node for the decision under `key`."""
        decision = state.get(self.key)
        if not isinstance(decision, Mapping) or "outcome" not in decision:
            raise InputError(f"the graph state holds no decision under {self.key!r}: route after the gate's node")
        return self.routes.get(decision["outcome"]) or self.routes[decision["kind"]]

    def review(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """A review node: `interrupt` for a person, then their outcome and labels (see the module docstring)."""
        decision = dict(state[self.key])
        item = decision.get("review_item")
        answer = interrupt({"rubric": self.rubric.name, "review_item": item, "outcome": decision["outcome"],
                            "questions": list(decision.get("answers") or {}), "state": self.rubric_state(state)})
        outcome, labels, reviewer = _read_review(answer, self.rubric)
        if item is not None and self.queue is not None and labels:
            self.queue.resolve(item, labels, reviewer=reviewer)
        # the zone stays the band it came from; the rule says a person decided
        decision.update(outcome=outcome, kind=self.rubric.policy.outcomes[outcome], rule="review",
                        reviewed_by=reviewer)
        return {self.key: decision}

    def __repr__(self) -> str:
        return f"RubricGate({self.rubric.name!r}, routes={self.routes!r}, key={self.key!r})"


def _read_review(answer: Any, rubric: Rubric) -> tuple[str, dict[str, Any], str | None]:
    """(outcome, labels, reviewer) from the value a graph was resumed with."""
    if not isinstance(answer, Mapping) or "outcome" not in answer:
        raise InputError(f"resume a review with Command(resume={{'outcome': ..., 'labels': {{...}}, 'reviewer': ...}}), "
                         f"got {answer!r}")
    outcome = answer["outcome"]
    kinds = rubric.policy.outcomes
    if kinds.get(outcome) not in ("act", "refuse"):
        decided = sorted(o for o, k in kinds.items() if k != "review")
        raise InputError(f"a review must end in an act or refuse outcome of rubric {rubric.name!r} "
                         f"({decided}), got {outcome!r}")
    return outcome, dict(answer.get("labels") or {}), answer.get("reviewer")


def decision_of(state: Mapping[str, Any], key: str = "decision") -> Decision:
    """The decision a gate wrote into the graph's state, as a typed `Decision` again."""
    data = {k: v for k, v in state[key].items() if k in Decision.model_fields}
    return Decision.model_validate(data)


__all__ = ["KINDS", "RubricGate", "decision_of"]
