"""The SQLite answer cache: hits cost no request, keys are per question, concurrent writers lose nothing."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from servers import OK

from seams import Choice, Noul, Score
from seams.answers import Usage
from seams.errors import StateError
from seams.judges import CachedJudge, RemoteJudge, RetryPolicy, SyncJudge

QUESTIONS = {
    "billing": Noul(instructions="Is this about billing?"),
    "team": Choice(instructions="Which team?", criteria={"billing": None, "technical": None, "sales": None}),
    "anger": Score(instructions="How frustrated?", criteria=["Calm", "Frustrated", "Very angry"]),
}
STATE = {"message": "I was charged twice.", "tier": "gold"}


@pytest.fixture
def counted(scripted):
    """A conforming loopback server that counts requests, and a remote judge on it."""
    server = scripted([OK])
    with RemoteJudge(base_url=server.url) as judge:
        yield server, judge


def test_a_second_ask_costs_no_request(counted, tmp_path) -> None:
    server, remote = counted
    with CachedJudge(remote, tmp_path / "cache.db") as judge:
        first = judge.ask(STATE, QUESTIONS)
        second = judge.ask(STATE, QUESTIONS)
    assert server.count == 1
    assert second.answers == first.answers and second.model == first.model
    assert second.usage == Usage()  # nothing was spent on the hit
    assert judge.model_id == remote.model_id


def test_adding_a_question_asks_only_the_new_one(counted, tmp_path) -> None:
    server, remote = counted
    with CachedJudge(remote, tmp_path / "cache.db") as judge:
        judge.ask(STATE, {"billing": QUESTIONS["billing"], "team": QUESTIONS["team"]})
        both = judge.ask(STATE, QUESTIONS)
    assert server.count == 2
    assert list(server.requests[1].body["questions"]) == ["anger"]
    assert list(both.answers) == ["billing", "team", "anger"]  # declared order, hits and misses mixed
    direct = remote.ask(STATE, QUESTIONS)
    assert both.answers == direct.answers


def test_renaming_a_question_id_keeps_its_answer(counted, tmp_path) -> None:
    server, remote = counted
    with CachedJudge(remote, tmp_path / "cache.db") as judge:
        a = judge.ask(STATE, {"billing": QUESTIONS["billing"]})
        b = judge.ask(STATE, {"is_billing": QUESTIONS["billing"]})
    assert server.count == 1
    assert b["is_billing"] == a["billing"]


def test_key_order_in_the_state_does_not_matter_but_content_does(counted, tmp_path) -> None:
    server, remote = counted
    with CachedJudge(remote, tmp_path / "cache.db") as judge:
        judge.ask({"a": 1, "b": 2}, QUESTIONS)
        judge.ask({"b": 2, "a": 1}, QUESTIONS)
        assert server.count == 1
        judge.ask({"a": 1, "b": 3}, QUESTIONS)
        judge.ask({"a": 1, "b": 2}, {"billing": Noul(instructions="Is this about billing??")})
    assert server.count == 3


def test_the_model_id_is_part_of_the_key(scripted, tmp_path) -> None:
    server = scripted([OK])
    path = tmp_path / "cache.db"
    with RemoteJudge("jev-latest", base_url=server.url) as a, RemoteJudge("mock", base_url=server.url) as b:
        CachedJudge(a, path).ask(STATE, QUESTIONS)
        CachedJudge(b, path).ask(STATE, QUESTIONS)
        CachedJudge(a, path).ask(STATE, QUESTIONS)
    assert server.count == 2


def test_entries_survive_a_new_process_view(counted, tmp_path) -> None:
    server, remote = counted
    CachedJudge(remote, tmp_path / "cache.db").ask(STATE, QUESTIONS)
    again = CachedJudge(remote, tmp_path / "cache.db")
    assert len(again) == 3
    again.ask(STATE, QUESTIONS)
    assert server.count == 1


def test_a_damaged_entry_is_asked_again(counted, tmp_path) -> None:
    server, remote = counted
    path = tmp_path / "cache.db"
    with CachedJudge(remote, path) as judge:
        expected = judge.ask(STATE, QUESTIONS)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE answers SET answer = ?", (json.dumps({"type": "noul", "noul": 7}),))
    with CachedJudge(remote, path) as judge:
        assert judge.ask(STATE, QUESTIONS).answers == expected.answers
        assert server.count == 2
        judge.ask(STATE, QUESTIONS)
    assert server.count == 2  # the re-asked answers replaced the damaged ones


def test_ttl_expires_entries(counted, tmp_path) -> None:
    server, remote = counted
    with CachedJudge(remote, tmp_path / "cache.db", ttl=1e-6) as judge:
        judge.ask(STATE, QUESTIONS)
        time.sleep(0.01)
        judge.ask(STATE, QUESTIONS)
    assert server.count == 2


def test_invalid_state_is_refused_before_lookup(counted, tmp_path) -> None:
    server, remote = counted
    with CachedJudge(remote, tmp_path / "cache.db") as judge, pytest.raises(StateError):
        judge.ask({"x": {1, 2}}, QUESTIONS)
    assert server.count == 0


def test_aask_hits_and_misses(counted, tmp_path) -> None:
    server, remote = counted

    async def main():
        judge = CachedJudge(remote, tmp_path / "cache.db")
        first = await judge.aask(STATE, {"billing": QUESTIONS["billing"]})
        both = await judge.aask(STATE, QUESTIONS)
        again = await judge.aask(STATE, QUESTIONS)
        return first, both, again

    first, both, again = asyncio.run(main())
    assert server.count == 2
    assert both["billing"] == first["billing"] and again.answers == both.answers


def test_threads_writing_at_once_lose_nothing(mock, tmp_path) -> None:
    path = tmp_path / "cache.db"
    states = [f"message {i}" for i in range(40)]
    with RemoteJudge(base_url=mock.url) as remote:
        shared = CachedJudge(remote, path)
        other = CachedJudge(remote, path)  # a second handle on the same file, as another component would hold
        errors: list[Exception] = []

        def work(offset: int) -> None:
            try:
                for i, state in enumerate(states[offset:] + states[:offset]):
                    (shared if i % 2 else other).ask(state, QUESTIONS)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(k * 5,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert len(shared) == len(states) * len(QUESTIONS)
        expected = {s: remote.ask(s, QUESTIONS).answers for s in states}
    # Every entry is readable with the server gone: a judge that can only fail proves they are hits.
    offline = CachedJudge(RemoteJudge(base_url="http://127.0.0.1:9", retry=RetryPolicy(max_retries=0)), path)
    assert all(offline.ask(s, QUESTIONS).answers == expected[s] for s in states)


WRITER = textwrap.dedent(
    """
    import os, sys, time
    from seams import Noul
    from seams.judges import CachedJudge, RemoteJudge
    path, url, prefix, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    judge = CachedJudge(RemoteJudge(base_url=url), path)
    open(path + "." + prefix + ".ready", "w").close()
    while not os.path.exists(path + ".go"):  # start writing together with the other process
        time.sleep(0.005)
    for i in range(n):
        judge.ask(f"{prefix} {i}", {"q": Noul(instructions="Is this a question?")})
    """
)


def test_two_processes_writing_at_once_lose_nothing(mock, tmp_path) -> None:
    path = tmp_path / "cache.db"
    CachedJudge(RemoteJudge(base_url=mock.url), path).close()  # schema and WAL set up once
    n = 60
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), mock.url, prefix, str(n)], stderr=subprocess.PIPE
        )
        for prefix in ("alpha", "beta")
    ]
    deadline = time.monotonic() + 60
    while (
        not all(Path(f"{path}.{x}.ready").exists() for x in ("alpha", "beta")) and time.monotonic() < deadline
    ):
        time.sleep(0.01)
    Path(f"{path}.go").touch()
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("SELECT COUNT(*) FROM answers").fetchone()[0] == 2 * n


def test_cache_path_problems_are_config_errors(tmp_path) -> None:
    from seams.errors import ConfigError

    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ConfigError):
        CachedJudge(RemoteJudge(base_url="http://127.0.0.1:9"), Path(blocker) / "cache.db")


def test_ask_many_batches_misses_through_the_inner_bulk_path(tmp_path, tiny_model_dir):
    """Cold states go to the local judge's `ask_many` in one call; warm ones cost nothing, and
    a state that only misses a new question asks only that question."""
    from seams import Noul
    from seams.judges import CachedJudge, LocalJudge

    local = LocalJudge(tiny_model_dir)

    class Counting(SyncJudge):  # the inner judge, counting how it is called
        model_id = local.model_id
        batches = True
        many = single = 0

        def ask_many(self, states, questions):
            self.many += 1
            return local.ask_many(states, questions)

        def ask(self, state, questions):
            self.single += 1
            return local.ask(state, questions)

    inner = Counting()
    cache = CachedJudge(inner, tmp_path / "c.sqlite")
    qs = {"a": Noul(instructions="Is it true?")}
    states = [f"yes {i}" for i in range(5)] + ["no"]
    first = cache.ask_many(states, qs)
    assert (inner.many, inner.single) == (1, 0)
    assert [a["a"].noul for a in first] == [local.ask(s, qs)["a"].noul for s in states]
    again = cache.ask_many(states, qs)
    assert (inner.many, inner.single) == (1, 0)
    assert [a["a"].noul for a in again] == [a["a"].noul for a in first]
    more = cache.ask_many(states[:1], {**qs, "b": Noul(instructions="Is it false?")})
    assert (inner.many, inner.single) == (1, 1) and set(more[0].answers) == {"a", "b"}
    assert len(cache) == 7
