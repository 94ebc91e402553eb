"""The typed-error contract: bad input is a seams `InputError` from every library call, never a
`TypeError`, `UnicodeEncodeError`, `RecursionError` or `sqlite3` error from a dependency.

Real components throughout: the tiny ONNX model, a loopback server, real SQLite files damaged by
flipping bytes.
"""

from __future__ import annotations

import json
import sqlite3
import textwrap
from pathlib import Path
from typing import Any

import pytest
from servers import OK

from seams import Choice, Noul, Score
from seams.audit import AuditLog
from seams.decision import Decision
from seams.errors import (
    CacheError,
    InputError,
    ProtocolError,
    QuestionError,
    RubricError,
    SeamsError,
    StateError,
    StorageError,
)
from seams.judges import CachedJudge, LocalJudge, RemoteJudge, RetryPolicy
from seams.queue import ReviewQueue
from seams.rubric import Rubric
from seams.state import MAX_DEPTH

LONE = "\ud800"
NO_RETRY = RetryPolicy(max_retries=0)
NOUL = {"type": "noul", "instructions": "Is it about billing?"}


def nested(depth: int) -> list[Any]:
    """A list nested `depth` levels deep."""
    root: list[Any] = []
    node = root
    for _ in range(depth - 1):
        child: list[Any] = []
        node.append(child)
        node = child
    return root


DEEP = nested(1000)
#: (name, state, questions): each breaks the contract in one place.
BAD = [
    ("state", "billing " + LONE, {"q": NOUL}),
    ("state key", {"msg" + LONE: "billing"}, {"q": NOUL}),
    ("nested state value", {"a": [{"b": LONE}]}, {"q": NOUL}),
    ("instruction", "billing", {"q": {"type": "noul", "instructions": "Is it " + LONE}}),
    ("option", "billing", {"q": {"type": "choice", "criteria": ["red" + LONE, "green"]}}),
    ("option description", "billing", {"q": {"type": "choice", "criteria": {"red": LONE, "green": None}}}),
    ("level", "billing", {"q": {"type": "score", "criteria": ["calm", "angry" + LONE]}}),
    ("question id", "billing", {"q" + LONE: NOUL}),
    ("deep state", DEEP, {"q": NOUL}),
    ("deep state object", {"a": DEEP}, {"q": NOUL}),
    ("deep instruction", "billing", {"q": {"type": "noul", "instructions": DEEP}}),
]
IDS = [b[0] for b in BAD]


@pytest.fixture(scope="module")
def local(tiny_model_dir: Path) -> LocalJudge:
    return LocalJudge(tiny_model_dir, intra_op_threads=1)


def assert_input_error(exc: BaseException) -> None:
    assert isinstance(exc, InputError), f"{type(exc).__name__}: {exc}"
    assert isinstance(exc, (StateError, QuestionError))
    text = str(exc)
    assert "surrogate" in text or f"more than {MAX_DEPTH} levels" in text, text


@pytest.mark.parametrize(("name", "state", "questions"), BAD, ids=IDS)
def test_local_and_cached_judges_raise_input_errors(local, tmp_path, name, state, questions) -> None:
    with CachedJudge(local, tmp_path / "cache.db") as cached:
        for judge in (local, cached):
            with pytest.raises(SeamsError) as info:
                judge.ask(state, questions)
            assert_input_error(info.value)
        assert len(cached) == 0


@pytest.mark.parametrize(("name", "state", "questions"), BAD, ids=IDS)
def test_remote_judge_raises_input_errors_before_sending(scripted, name, state, questions) -> None:
    server = scripted([OK])
    with RemoteJudge(base_url=server.url, retry=NO_RETRY) as judge, pytest.raises(SeamsError) as info:
        judge.ask(state, questions)
    assert_input_error(info.value)
    assert server.count == 0  # nothing was sent


def test_question_objects_refuse_unsendable_text_where_they_are_built() -> None:
    for build in (
        lambda: Noul(instructions="x" + LONE),
        lambda: Choice(criteria=["a", "b" + LONE]),
        lambda: Choice(criteria={"red" + LONE: None, "green": None}),
        lambda: Score(criteria=["a", {"deep": DEEP}]),
    ):
        with pytest.raises(QuestionError, match="surrogate|levels deep") as info:
            build()
        assert str(info.value).startswith(("Noul:", "Choice:", "Score:")), info.value


RUBRIC = textwrap.dedent("""\
    name: billing
    version: "1"
    state: {type: text}
    questions:
      billing: {type: noul, instructions: Is this about billing?}
    policy:
      outcomes: {route: act, skip: refuse, look: review}
      rules:
        - {id: billing, question: billing, high: 0.7, low: 0.3, then: route, else: skip, review: look}
      default: skip
      on_error: skip
    """)


@pytest.mark.parametrize("state", ["billing " + LONE, {"k" + LONE: 1}, DEEP], ids=["text", "key", "deep"])
def test_rubric_decide_raises_a_state_error(local, state) -> None:
    with pytest.raises(StateError, match="surrogate|levels deep"):
        Rubric.loads(RUBRIC).decide(state, judge=local)


def test_a_rubric_with_a_lone_surrogate_in_its_version_is_refused_at_load() -> None:
    text = RUBRIC.replace('version: "1"', 'version: "1\\ud800"')
    with pytest.raises(RubricError, match=r"version holds a lone surrogate"):
        Rubric.loads(text, path="billing.yaml")


def test_a_yaml_alias_bomb_is_refused_before_the_tree_is_built() -> None:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 30):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    bomb = RUBRIC + "\n".join(lines) + "\n"
    assert len(bomb) < 12_000
    # Unchecked, this spells 9^30 nodes: the test could not finish, let alone pass.
    with pytest.raises(RubricError, match="alias"):
        Rubric.loads(bomb, path="bomb.yaml")


def test_yaml_nested_past_the_limit_is_refused() -> None:
    text = RUBRIC + "extra: " + "[" * 500 + "]" * 500 + "\n"
    with pytest.raises(RubricError, match=f"more than {MAX_DEPTH} levels"):
        Rubric.loads(text)


# ---------------------------------------------------------------------------- queue and audit


def test_the_queue_refuses_unsendable_items(tmp_path) -> None:
    queue = ReviewQueue(tmp_path / "q.db")
    for kwargs in ({"key": "k" + LONE}, {"meta": {"site": LONE}}, {"meta": {"deep": DEEP}}):
        with pytest.raises(InputError):
            queue.enqueue("fine", **kwargs)
    for state in ("x" + LONE, DEEP):
        with pytest.raises(StateError):
            queue.enqueue(state)
    item = queue.enqueue("fine").item
    with pytest.raises(InputError, match="surrogate"):
        queue.resolve(item.id, {"q": "yes" + LONE})
    assert len(queue) == 1 and queue.get(item.id).status == "open"


def _decision(**kw: Any) -> Decision:
    fields = {"outcome": "skip", "kind": "refuse", "zone": "default", "rubric": "r", "rubric_version": "1",
              "rubric_hash": "h"}
    return Decision(**{**fields, **kw})


def test_the_audit_log_refuses_unsendable_lines_and_writes_nothing(tmp_path) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path, include_state=True) as log:
        for decision, extra in (
            (_decision(state="x" + LONE), {}),
            (_decision(state=DEEP), {}),
            (_decision(), {"site": LONE}),
            (_decision(), {"deep": DEEP}),
            (_decision(outcome="skip" + LONE), {}),
        ):
            with pytest.raises(InputError):
                log.record(decision, **extra)
        log.record(_decision(state="fine"))
    assert [line["state"] for line in AuditLog(path).read()] == ["fine"]


# ---------------------------------------------------------------------------- damaged SQLite files


def flip_bytes(path: Path, start: int, count: int = 64) -> None:
    """Damage a real file: invert `count` bytes from `start` (past the header: pages, not magic)."""
    data = bytearray(path.read_bytes())
    for i in range(start, min(start + count, len(data))):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


def _checkpointed(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def test_a_damaged_cache_fails_closed_through_on_error(local, tmp_path) -> None:
    path = tmp_path / "cache.db"
    rubric = Rubric.loads(RUBRIC)
    with CachedJudge(local, path) as cached:
        for i in range(50):
            rubric.decide(f"billing invoice number {i}", judge=cached)
    _checkpointed(path)
    size = path.stat().st_size
    assert size > 3 * 4096
    seen: set[str] = set()
    for page in range(1, size // 4096):
        flip_bytes(path, page * 4096 + 16, 256)
        with CachedJudge(local, path) as cached:
            for i in range(0, 50, 7):
                try:
                    d = rubric.decide(f"billing invoice number {i}", judge=cached)
                except sqlite3.Error as exc:  # the defect: a dependency's error out of decide
                    pytest.fail(f"sqlite3 error escaped decide: {exc!r}")
                seen.add(d.rule or "")
                if d.rule == "on_error":
                    assert d.outcome == "skip" and d.error.startswith(CacheError.__name__)
    assert "on_error" in seen  # the damage was real: some decisions failed closed


def test_a_cache_file_that_is_not_a_database_is_a_seams_error(local, tmp_path) -> None:
    path = tmp_path / "cache.db"
    path.write_bytes(b"\x00garbage" * 1000)
    with pytest.raises(SeamsError):
        CachedJudge(local, path)


def test_a_damaged_queue_raises_storage_errors(tmp_path) -> None:
    path = tmp_path / "q.db"
    queue = ReviewQueue(path)
    for i in range(200):
        queue.enqueue({"ticket": i, "text": "refund please " * 20})
    _checkpointed(path)
    flip_bytes(path, 4096 * 2, 4096 * 4)
    errors = 0
    calls = (
        lambda: queue.items(), lambda: queue.counts(), lambda: len(queue), lambda: queue.claim("ann"),
        lambda: queue.get(100), lambda: queue.enqueue({"ticket": "new"}), lambda: queue.export(tmp_path / "x.jsonl"),
    )
    for call in calls:
        try:
            call()
        except StorageError as exc:
            assert str(path) in str(exc)
            errors += 1
        except sqlite3.Error as exc:
            pytest.fail(f"sqlite3 error escaped the queue: {exc!r}")
    assert errors > 0


# ---------------------------------------------------------------------------- the remote client


@pytest.mark.parametrize("where", ["answers", "answer", "envelope"])
def test_duplicate_json_keys_in_a_response_are_a_protocol_error(scripted, where) -> None:
    bodies = {
        "answers": b'{"model":"m","answers":{"q":{"type":"noul","noul":0.9},"q":{"type":"noul","noul":0.1}},'
                   b'"usage":{"input_tokens":1,"output_tokens":1}}',
        "answer": b'{"model":"m","answers":{"q":{"type":"noul","noul":0.9,"noul":0.1}},'
                  b'"usage":{"input_tokens":1,"output_tokens":1}}',
        "envelope": b'{"model":"m","model":"n","answers":{"q":{"type":"noul","noul":0.9}},'
                    b'"usage":{"input_tokens":1,"output_tokens":1}}',
    }
    server = scripted([(200, {"Content-Type": "application/json"}, bodies[where])])
    with RemoteJudge(base_url=server.url, retry=NO_RETRY) as judge:
        with pytest.raises(ProtocolError, match="repeats the key"):
            judge.ask("billing", {"q": NOUL})
        d = Rubric.loads(RUBRIC.replace("billing: {type", "q: {type").replace("question: billing", "question: q")
                         ).decide("billing", judge=judge)
    assert d.rule == "on_error" and d.outcome == "skip"


def test_a_deeply_nested_response_is_a_protocol_error(scripted) -> None:
    server = scripted([(200, {}, b'{"model":"m","answers":' + b"[" * 100_000 + b"]" * 100_000 + b"}")])
    with RemoteJudge(base_url=server.url, retry=NO_RETRY) as judge, pytest.raises(ProtocolError):
        judge.ask("billing", {"q": NOUL})


@pytest.mark.parametrize("status", [200, 500, 400])
def test_a_decision_does_not_carry_an_upstream_body_into_the_audit_log(scripted, tmp_path, status) -> None:
    """An upstream that echoes the request would copy the state into the default audit log."""
    secret = "my card is 4111 1111 1111 1111"

    def echo(n: int, body: Any) -> tuple[int, dict[str, str], bytes]:
        return status, {"Content-Type": "text/plain"}, ("echo: " + json.dumps(body)).encode()

    server = scripted(echo)
    rubric = Rubric.loads(RUBRIC)
    with RemoteJudge(base_url=server.url, retry=NO_RETRY) as judge:
        d = rubric.decide(secret, judge=judge)
    assert d.rule == "on_error" and server.count == 1
    assert "4111" not in d.error and "echo" not in d.error
    if status != 200:
        assert f"HTTP {status}" in d.error
    with AuditLog(tmp_path / "audit.jsonl") as log:
        log.record(d)
    assert "4111" not in (tmp_path / "audit.jsonl").read_text()


# ---------------------------------------------------------------------------- review labels


def test_resolve_refuses_labels_the_questions_cannot_take_and_leaves_the_item_open(tmp_path, local) -> None:
    rubric = Rubric.loads(textwrap.dedent("""\
        name: claim
        version: "1"
        state: {type: text}
        questions:
          damaged: {type: noul, instructions: Is the parcel damaged?}
          reason: {type: choice, instructions: Why?, criteria: [red, green, blue]}
          anger: {type: score, instructions: How upset?, criteria: [calm, frustrated, angry]}
        policy:
          outcomes: {pay: act, look: review}
          rules:
            - {id: d, question: damaged, high: 0.99, low: 0.0, then: pay, review: look}
          default: look
        """))
    decision = rubric.decide("the parcel is red", judge=local)
    queue = ReviewQueue(tmp_path / "q.db")
    item = queue.enqueue("the parcel is red", decision=decision).item
    for bad, why in (
        ({"damaged": "yes"}, "true or false"),
        ({"damaged": 1}, "true or false"),
        ({"reason": "teleported"}, "one of the Choice's options"),
        ({"reason": True}, "one of the Choice's options"),
        ({"anger": 3}, "level index 0–2"),
        ({"anger": -1}, "level index 0–2"),
        ({"anger": True}, "level index 0–2"),
        ({"anger": "angry"}, "level index 0–2"),
    ):
        with pytest.raises(InputError, match=why):
            queue.resolve(item.id, bad, reviewer="ann")
        assert queue.get(item.id).status == "open"
    done = queue.resolve(item.id, {"damaged": True, "reason": "red", "anger": 2}, reviewer="ann")
    assert done.status == "resolved" and done.labels == {"damaged": True, "reason": "red", "anger": 2}

