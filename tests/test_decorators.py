"""`@gate` and `@route` on sync and async functions: signatures kept, every path of a decision."""

from __future__ import annotations

import asyncio
import inspect
import json
import textwrap
import typing

import pytest

from seams.audit import AuditLog
from seams.decorators import current_decision, gate, route
from seams.errors import Deferred, InputError, Refused, ServiceUnavailable
from seams.queue import ReviewQueue
from seams.rubric import Rubric

from .fixed_judge import FixedJudge

# The built-in rubrics carry a calibration fitted on the shipped model; on fixed answers from
# another "model" it is (rightly) not applied, and the rubric warns so. Not what these test.
pytestmark = pytest.mark.filterwarnings("ignore::seams.rubric.CalibrationWarning")

RUBRIC = Rubric.loads(textwrap.dedent("""\
    name: send-check
    state:
      fields: {to: recipient, body: message body}
    questions:
      ok: {type: noul, instructions: Is it fine to send the `body` to `to`?}
    policy:
      outcomes: {send: act, block: refuse}
      rules:
        - {id: ok, question: ok, high: 0.8, low: 0.3, then: send, else: block}
      default: block
    """))


def judge(p: float) -> FixedJudge:
    return FixedJudge({"ok": p})


def make(p: float, **kw):
    calls = []

    @gate(RUBRIC, judge=judge(p), **kw)
    def send(to: str, body: str, *, urgent: bool = False) -> str:
        """Send a message."""
        calls.append((to, body, urgent))
        d = current_decision()
        return f"sent {body} ({d.outcome})"

    return send, calls


def test_signature_name_doc_and_type_hints_are_kept():
    send, _ = make(0.9)
    assert send.__name__ == "send" and send.__doc__ == "Send a message."
    assert str(inspect.signature(send, eval_str=True)) == "(to: str, body: str, *, urgent: bool = False) -> str"
    assert typing.get_type_hints(send) == {"to": str, "body": str, "urgent": bool, "return": str}
    assert send.rubric is RUBRIC and not inspect.iscoroutinefunction(send)


def test_act_proceeds_with_the_decision_visible_inside():
    send, calls = make(0.9)
    assert send("ann", "hi") == "sent hi (send)"
    assert calls == [("ann", "hi", False)] and current_decision() is None


def test_default_state_is_the_bound_arguments():
    seen = []

    class Spy(FixedJudge):
        def ask(self, state, questions):
            seen.append(state)
            return super().ask(state, questions)

    @gate(RUBRIC, judge=Spy({"ok": 0.9}))
    def send(to: str, body: str = "default") -> None: ...

    send("ann")
    assert seen == [{"to": "ann", "body": "default"}]


def test_refuse_raises_a_typed_error_with_the_decision():
    send, calls = make(0.1)
    with pytest.raises(Refused, match=r"decided 'block' \(refuse\) by rule 'ok'") as info:
        send("ann", "hi")
    assert info.value.decision.outcome == "block" and info.value.decision.probability == 0.1
    assert calls == []


def test_refuse_returns_a_fallback_with_the_same_arguments():
    send, calls = make(0.1, on_refuse=lambda to, body, urgent=False: f"not sent to {to}: {current_decision().outcome}")
    assert send("ann", "hi") == "not sent to ann: block" and calls == []


def test_review_escalates_to_a_stronger_step():
    send, calls = make(0.5, escalate=lambda to, body, urgent=False: f"escalated {body}")
    assert send("ann", "hi") == "escalated hi" and calls == []


def test_review_queues_and_defers(tmp_path):
    q = ReviewQueue(tmp_path / "q.db")
    send, calls = make(0.5, queue=q)
    with pytest.raises(Deferred) as info:
        send("ann", "hi")
    item = q.get(info.value.item_id)
    assert item.state == {"to": "ann", "body": "hi", "urgent": False} and item.questions == ["ok"]
    with pytest.raises(Deferred) as again:  # a retried call does not ask a person twice
        send("ann", "hi")
    assert again.value.item_id == item.id and len(q) == 1 and calls == []


def test_review_with_a_full_queue_or_no_target_fails_closed(tmp_path):
    q = ReviewQueue(tmp_path / "q.db", capacity=1)
    q.enqueue("someone else's item")
    send, _ = make(0.5, queue=q)
    with pytest.raises(Refused, match="review queue is full"):
        send("ann", "hi")
    send, _ = make(0.5)
    with pytest.raises(Refused, match="no escalation target or review queue"):
        send("ann", "hi")


def test_judge_failure_fails_closed():
    @gate(RUBRIC, judge=FixedJudge({}, error=ServiceUnavailable("down", status_code=503)))
    def send(to: str, body: str) -> str:
        return "sent"

    with pytest.raises(Refused, match="failed closed"):
        send("ann", "hi")


def test_audit_log_records_each_decision_without_the_state(tmp_path):
    log = AuditLog(tmp_path / "audit.jsonl")
    send, _ = make(0.9, audit=log)
    send("ann", "secret body")
    with pytest.raises(Refused):
        make(0.1, audit=log)[0]("bob", "x")
    lines = list(log.read())
    assert [(x["outcome"], x["action"]) for x in lines] == [("send", "proceeded"), ("block", "raised")]
    assert "secret body" not in (tmp_path / "audit.jsonl").read_text()
    assert lines[0]["site"].endswith("send") and lines[0]["rubric"] == "send-check"
    log.close()
    with AuditLog(tmp_path / "with-state.jsonl", include_state=True) as full:
        d = RUBRIC.decide({"to": "a", "body": "b"}, judge=judge(0.9), keep_state=True)
        full.record(d)
    assert json.loads((tmp_path / "with-state.jsonl").read_text())["state"] == {"to": "a", "body": "b"}


# --------------------------------------------------------------------------- async


def test_async_gate_keeps_coroutine_nature_and_every_path(tmp_path):
    q = ReviewQueue(tmp_path / "q.db")

    async def fallback(to: str, body: str) -> str:
        await asyncio.sleep(0)
        return "fallback"

    def make_async(p: float):
        @gate(RUBRIC, judge=judge(p), on_refuse=fallback, queue=q)
        async def send(to: str, body: str) -> str:
            """Async send."""
            await asyncio.sleep(0)
            return f"sent ({current_decision().outcome})"

        return send

    send = make_async(0.9)
    assert inspect.iscoroutinefunction(send) and send.__doc__ == "Async send."
    assert typing.get_type_hints(send) == {"to": str, "body": str, "return": str}

    async def run():
        assert await make_async(0.9)("a", "b") == "sent (send)"
        assert await make_async(0.1)("a", "b") == "fallback"
        with pytest.raises(Deferred):
            await make_async(0.5)("a", "b")

    asyncio.run(run())
    assert len(q) == 1


def test_async_refusal_raises():
    @gate(RUBRIC, judge=judge(0.0))
    async def send(to: str, body: str) -> str:
        return "sent"

    with pytest.raises(Refused):
        asyncio.run(send("a", "b"))


# --------------------------------------------------------------------------- @route

ROUTING = Rubric.loads(textwrap.dedent("""\
    name: tiers
    state: {fields: {task: the task}}
    questions:
      hard: {type: score, instructions: How hard is the `task`?, criteria: [easy, medium, hard]}
    policy:
      outcomes: {small: act, medium: act, strong: act}
      rules:
        - {id: d, question: hard, high: 0.6, low: 0.3, then: strong, else: small, review: medium}
      default: medium
    """))


def tier(levels):
    return FixedJudge({"hard": levels})


def test_route_injects_the_chosen_model_and_keeps_the_signature():
    models = {"small": "mini", "medium": "mid", "strong": "big"}

    def build(levels):
        @route(ROUTING, state=lambda task, model=None: {"task": task}, judge=tier(levels), choices=models)
        def answer(task: str, model: str = "unset") -> str:
            return f"{model}:{task}"

        return answer

    assert str(inspect.signature(build([1, 0, 0]), eval_str=True)) == "(task: str, model: str = 'unset') -> str"
    assert build([1, 0, 0])("2+2") == "mini:2+2"
    assert build([0, 1, 0])("essay") == "mid:essay"
    assert build([0, 0, 1])("proof") == "big:proof"


def test_route_branches_and_async():
    def strong(task: str) -> str:
        return f"strong:{task}"

    def build(levels):
        @route(ROUTING, judge=tier(levels), branches={"strong": strong})
        async def answer(task: str) -> str:
            return f"default:{task}"

        return answer

    assert asyncio.run(build([0, 0, 1])("x")) == "strong:x"
    assert asyncio.run(build([1, 0, 0])("x")) == "default:x"


def test_route_checks_its_table_when_decorating():
    with pytest.raises(InputError, match=r"miss outcome\(s\) \['strong'\]"):
        route(ROUTING, choices={"small": "a", "medium": "b"})(lambda task, model=None: None)
    with pytest.raises(InputError, match="not outcomes"):
        route(ROUTING, choices={"huge": "a", "small": "a", "medium": "b", "strong": "c"})(lambda task, model=None: None)
    with pytest.raises(InputError, match="no parameter 'model'"):
        route(ROUTING, choices={"small": "a"}, default="z")(lambda task: None)
    with pytest.raises(InputError, match="branch 'huge'"):
        route(ROUTING, branches={"huge": print})(lambda task: None)


def test_builtin_rubric_by_name():
    @gate("confirm-before-act", judge=FixedJudge({"irreversible": 0.9, "matches": 0.99}))
    def act(request: str, action: str) -> str:
        return "done"

    assert act("delete the draft", "delete draft 12") == "done"
    assert act.rubric.name == "confirm-before-act"
