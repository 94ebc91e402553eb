"""Cassettes: record against a live server, replay with it gone, miss loudly, survive a torn line."""

from __future__ import annotations

import asyncio
import json

import pytest
from servers import OK, jev_mock

from seams import Choice, Noul, Score
from seams.errors import CassetteError, CassetteMiss, JudgeError, QuestionError
from seams.judges import Cassette, RemoteJudge, RetryPolicy

QUESTIONS = {
    "billing": Noul(instructions="Is this about billing?"),
    "team": Choice(instructions="Which team?", criteria={"billing": None, "technical": "Bugs"}),
    "anger": Score(instructions="How frustrated?", criteria=["Calm", "Frustrated", "Very angry"]),
}
STATES = ["I was charged twice.", {"message": "The app crashes", "tier": "free"}, ["a", "b"]]


def record(path, url: str) -> list:
    with RemoteJudge(base_url=url) as remote:
        tape = Cassette(path, remote, mode="record")
        return [tape.ask(s, QUESTIONS) for s in STATES]


def test_replay_with_the_server_stopped_gives_equal_answers(tmp_path) -> None:
    path = tmp_path / "tape.jsonl"
    with jev_mock() as server:
        recorded = record(path, server.url)
        url = server.url
    # The server is gone: a live call would fail.
    with RemoteJudge(base_url=url, retry=RetryPolicy(max_retries=0)) as dead, pytest.raises(JudgeError):
        dead.ask(STATES[0], QUESTIONS)
    tape = Cassette(path, mode="replay")
    assert tape.model_id == "jev-latest" and len(tape) == 3
    assert [tape.ask(s, QUESTIONS) for s in STATES] == recorded
    assert asyncio.run(tape.aask(STATES[1], QUESTIONS)) == recorded[1]


def test_one_interaction_a_line(tmp_path, mock) -> None:
    path = tmp_path / "tape.jsonl"
    record(path, mock.url)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3
    first = json.loads(lines[0])
    assert first["model"] == "jev-latest" and first["state"] == STATES[0]
    assert first["questions"]["team"] == QUESTIONS["team"].wire()
    assert set(first["answers"]["answers"]) == set(QUESTIONS)


def test_replay_matches_the_canonical_request(tmp_path, mock) -> None:
    path = tmp_path / "tape.jsonl"
    record(path, mock.url)
    tape = Cassette(path, mode="replay")
    reordered = {"tier": "free", "message": "The app crashes"}
    assert tape.ask(reordered, QUESTIONS) == tape.ask(STATES[1], QUESTIONS)  # key order is not content
    with pytest.raises(CassetteMiss, match="has no answer"):
        tape.ask("a state never recorded", QUESTIONS)
    with pytest.raises(CassetteMiss):
        tape.ask(STATES[0], QUESTIONS | {"billing": Noul(instructions="Is this about money?")})
    with pytest.raises(CassetteMiss):
        Cassette(path, mode="replay", model_id="jev-1.13.0").ask(STATES[0], QUESTIONS)


def test_a_miss_is_not_a_judge_error(tmp_path, mock) -> None:
    """A policy's on_error must not turn a forgotten recording into a fail-closed decision."""
    path = tmp_path / "tape.jsonl"
    record(path, mock.url)
    with pytest.raises(CassetteMiss) as info:
        Cassette(path, mode="replay").ask("new", QUESTIONS)
    assert not isinstance(info.value, JudgeError)


def test_auto_records_misses_and_replays_hits(tmp_path, scripted) -> None:
    server = scripted([OK])
    path = tmp_path / "tape.jsonl"
    with RemoteJudge(base_url=server.url) as remote:
        tape = Cassette(path, remote, mode="auto")
        a = tape.ask(STATES[0], QUESTIONS)
        b = tape.ask(STATES[0], QUESTIONS)
        c = asyncio.run(tape.aask(STATES[1], QUESTIONS))
        assert server.count == 2 and a == b
        reopened = Cassette(path, remote, mode="auto")
        assert reopened.ask(STATES[1], QUESTIONS) == c
    assert server.count == 2


def test_record_starts_a_fresh_cassette(tmp_path, mock) -> None:
    path = tmp_path / "tape.jsonl"
    record(path, mock.url)
    record(path, mock.url)
    assert len(path.read_text().splitlines()) == 3


def test_a_torn_last_line_is_skipped_and_repaired(tmp_path, mock) -> None:
    path = tmp_path / "tape.jsonl"
    record(path, mock.url)
    with open(path, "ab") as f:
        f.write(b'{"v":1,"model":"jev-lat')  # a crash in the middle of a write
    with RemoteJudge(base_url=mock.url) as remote:
        tape = Cassette(path, remote, mode="auto")
        assert len(tape) == 3
        tape.ask("one more", QUESTIONS)
    assert len(Cassette(path, mode="replay")) == 4


def test_a_corrupt_line_names_the_file_and_line(tmp_path, mock) -> None:
    path = tmp_path / "tape.jsonl"
    record(path, mock.url)
    lines = path.read_text().splitlines()
    lines.insert(1, "not json")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(CassetteError, match=r"tape\.jsonl:2"):
        Cassette(path, mode="replay")


def test_configuration_errors(tmp_path) -> None:
    with pytest.raises(CassetteError, match="does not exist"):
        Cassette(tmp_path / "missing.jsonl", mode="replay")
    with pytest.raises(CassetteError, match="needs a judge"):
        Cassette(tmp_path / "t.jsonl", mode="record")
    with pytest.raises(CassetteError, match="mode"):
        Cassette(tmp_path / "t.jsonl", mode="rewind")  # type: ignore[arg-type]


def test_questions_are_validated_in_replay(tmp_path, mock) -> None:
    path = tmp_path / "tape.jsonl"
    record(path, mock.url)
    with pytest.raises(QuestionError):
        Cassette(path, mode="replay").ask(STATES[0], {})


def test_wrappers_and_the_remote_judge_are_judges(tmp_path, mock) -> None:
    from seams.judges import CachedJudge, Judge

    path = tmp_path / "tape.jsonl"
    record(path, mock.url)
    with RemoteJudge(base_url=mock.url) as remote:
        cached = CachedJudge(Cassette(path, remote), tmp_path / "c.db")  # wrappers compose
        assert all(isinstance(j, Judge) for j in (remote, cached, Cassette(path, mode="replay")))
        assert (
            cached.ask(STATES[0], QUESTIONS).answers
            == Cassette(path, mode="replay").ask(STATES[0], QUESTIONS).answers
        )


def test_ask_many_records_what_it_lacks_in_one_call_and_replays_the_rest(tmp_path) -> None:
    from seams.judges import Cassette

    from .fixed_judge import FixedJudge

    class Counting(FixedJudge):
        batches = True
        many = 0

        def ask_many(self, states, questions):
            self.many += 1
            return super().ask_many(states, questions)

    inner = Counting({"q": 0.7})
    qs = {"q": Noul(instructions="Is it?")}
    tape = Cassette(tmp_path / "c.jsonl", inner)
    assert tape.batches
    first = tape.ask_many(["a", "b", "a"], qs)
    assert inner.many == 1 and inner.calls == 2 and len(tape) == 2  # "a" asked once
    again = Cassette(tmp_path / "c.jsonl", mode="replay").ask_many(["b", "a"], qs)
    assert [a["q"].noul for a in again] == [first[1]["q"].noul, first[0]["q"].noul]
