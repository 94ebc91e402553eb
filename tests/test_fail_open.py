"""When a Cascade's weak judge fails, what code knows for certain still reaches the strong side.

The weak judge below raises on every ask (a real `JudgeError`, not a mocked transport). The
strong side is a callable target that trusts what it is handed: it proceeds unless the decision
it gets says otherwise. So a target handed a decision without the known answers lets a known
`DROP TABLE` through; one handed the known answers holds it. Every built-in seam that decides
through a decider, and both decorators, are run sync and async.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from seams.audit import AuditLog
from seams.builtin.escalation import ConfirmBeforeAct, Escalation, ModelRouter, OutputCheck
from seams.builtin.memory import MemoryGate
from seams.builtin.passages import PassageGate
from seams.decorators import gate, route
from seams.errors import JudgeError, Refused
from seams.routing import Cascade

from .fixed_judge import FixedJudge

pytestmark = pytest.mark.filterwarnings("ignore::seams.rubric.CalibrationWarning")


def failing() -> FixedJudge:
    return FixedJudge({}, model="weak", error=JudgeError("the weak judge is down"))


class Trusting:
    """A strong target that records what it was handed and answers from it: `answer(answers, rubric)`."""

    def __init__(self, answer):
        self.answer = answer
        self.handed: list[dict[str, float]] = []
        self.__name__ = "trusting"

    def __call__(self, rubric, state, first):
        handed = {qid: _value(a) for qid, a in first.answers.items()}
        self.handed.append({"zone": first.zone, **handed})
        return self.answer(handed, rubric)


class AsyncTrusting(Trusting):
    async def __call__(self, rubric, state, first):  # type: ignore[override]
        return super().__call__(rubric, state, first)


def _value(answer):
    return answer.noul if answer.type == "noul" else answer.model_dump(include={"choice"}).get("choice")


def irreversible_or_proceed(answers, rubric):
    return "confirm" if answers.get("irreversible", 0.0) > 0.5 else "proceed"


# --------------------------------------------------------------------------- the reported case


@pytest.mark.parametrize("target_cls", [Trusting, AsyncTrusting])
def test_a_failing_weak_judge_never_drops_a_known_irreversible_action(target_cls):
    target = target_cls(irreversible_or_proceed)
    seam = ConfirmBeforeAct(judge=Cascade(failing(), target))
    got = [asyncio.run(seam.acheck("DROP TABLE users", request="tidy up", irreversible=True))]
    if target_cls is Trusting:
        got.append(seam.check("DROP TABLE users", request="tidy up", irreversible=True))
    for result in got:
        assert result.outcome == "confirm" and not result.proceed
        assert result.irreversible == 1.0
    assert target.handed == [{"zone": "error", "irreversible": 1.0}] * len(got)


# --------------------------------------------------------------------------- every seam


def _confirm(judge, sync):
    seam = ConfirmBeforeAct(judge=judge)
    call = (seam.check if sync else seam.acheck)("DROP TABLE users", request="tidy up", irreversible=True)
    return call, {"irreversible": 1.0}


def _output(judge, sync):
    seam = OutputCheck(judge=judge)
    call = (seam.grade if sync else seam.agrade)("summarise", "a summary")
    return call, {"contradicts_sources": 0.0, "unsupported": 0.0}


def _memory_empty(judge, sync):
    seam = MemoryGate(judge=judge)
    call = (seam.admit if sync else seam.aadmit)("the user walks to work", nearest=[])
    return call, {"related": 0.0, "poorer": 0.0}


def _memory_edit(judge, sync):
    seam = MemoryGate(judge=judge)
    nearest = [("m1", "the project deploys on Fridays")]
    call = (seam.admit if sync else seam.aadmit)("the project deploys on Thursdays", nearest=nearest)
    return call, {"related": 1.0, "poorer": 0.0, "relation": "correction"}


def _escalation(judge, sync):
    seam = Escalation(judge=judge)
    return (seam.check if sync else seam.acheck)("help me"), {}


def _router(judge, sync):
    seam = ModelRouter({"small": "s", "medium": "m", "strong": "L"}, judge=judge)
    return (seam.route if sync else seam.aroute)("sum two numbers"), {}


def _passages(judge, sync):
    seam = PassageGate(judge=judge)
    return (seam.select if sync else seam.aselect)("what is the capital?", ["Paris is the capital."]), {}


SEAMS = {"confirm": _confirm, "output": _output, "memory-empty": _memory_empty, "memory-edit": _memory_edit,
         "escalation": _escalation, "router": _router, "passages": _passages}


@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
@pytest.mark.parametrize("name", sorted(SEAMS))
def test_every_seam_hands_its_known_answers_to_the_strong_side_when_the_weak_judge_fails(name, sync):
    # any outcome the rubric declares: what matters is what the target was handed
    target = (Trusting if sync else AsyncTrusting)(lambda answers, rubric: next(iter(rubric.policy.outcomes)))
    cascade = Cascade(failing(), target)
    call, known = SEAMS[name](cascade, sync)
    result = call if sync else asyncio.run(call)
    assert result is not None
    assert target.handed, "the weak judge failed, so the strong side decides"
    assert all(h == {"zone": "error", **known} for h in target.handed)
    assert cascade.strong_calls == cascade.weak_calls == len(target.handed)


def test_a_memory_target_that_admits_after_a_weak_failure_is_not_read_as_a_judge_failure():
    """The strong side decided: the gate reads its outcome, not the weak side's error."""
    cascade = Cascade(failing(), lambda rubric, state, first: "admit")
    got = MemoryGate(judge=cascade).admit("the user walks to work", nearest=[])
    assert got.outcome == "admit" and "judge failed" not in got.reason


# --------------------------------------------------------------------------- the decorators


def test_gate_hands_its_known_answers_to_the_strong_side_sync_and_async():
    target = Trusting(irreversible_or_proceed)
    ran: list[str] = []

    @gate("confirm-before-act", judge=Cascade(failing(), target), known={"irreversible": 1.0})
    def run(request: str, action: str) -> str:
        ran.append(action)
        return "ran"

    with pytest.raises(Refused, match="confirm"):
        run("tidy up", "DROP TABLE users")
    atarget = AsyncTrusting(irreversible_or_proceed)

    @gate("confirm-before-act", judge=Cascade(failing(), atarget),
          known=lambda request, action: {"irreversible": 1.0 if "DROP" in action else 0.0})
    async def arun(request: str, action: str) -> str:
        ran.append(action)
        return "ran"

    with pytest.raises(Refused, match="confirm"):
        asyncio.run(arun("tidy up", "DROP TABLE users"))
    assert asyncio.run(arun("tidy up", "SELECT 1")) == "ran"
    assert ran == ["SELECT 1"]
    assert target.handed == [{"zone": "error", "irreversible": 1.0}]
    assert atarget.handed == [{"zone": "error", "irreversible": 1.0}, {"zone": "error", "irreversible": 0.0}]


def test_route_hands_its_known_answers_to_the_strong_side():
    target = Trusting(irreversible_or_proceed)

    @route("confirm-before-act", judge=Cascade(failing(), target), known={"irreversible": 1.0},
           choices={"proceed": "now", "confirm": "ask", "refuse": "no"})
    def run(request: str, action: str, model: str = "") -> str:
        return model

    assert run("tidy up", "DROP TABLE users") == "ask"
    assert target.handed == [{"zone": "error", "irreversible": 1.0}]


def test_gate_keeps_the_state_for_an_audit_log_that_asks_for_it(tmp_path):
    log = AuditLog(tmp_path / "audit.jsonl", include_state=True)

    @gate("confirm-before-act", judge=FixedJudge({"irreversible": 0.0, "matches": 1.0}), audit=log)
    def run(request: str, action: str) -> str:
        return "ran"

    assert run("list files", "ls") == "ran"
    lines = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert lines[0]["state"] == {"request": "list files", "action": "ls"}
    assert lines[0]["action"] == "proceeded"
