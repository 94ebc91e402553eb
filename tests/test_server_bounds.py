"""`seams serve` bounds the work a request may cost, on a real uvicorn over the tiny ONNX model:
pairs per request (422 naming the limit), a per-request deadline, stopping when the client goes
away, and a deadline on the request body (a slow or short body gets 408, not a held connection).
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from servers import read_message
from test_server import serving

from seams.errors import JudgeTimeout, QuestionError
from seams.judges.local import LocalJudge
from seams.limits import work_limits
from seams.server import create_app

OPTIONS = [f"option {i}" for i in range(255)]
LONG_STATE = "the customer wrote about billing and the invoice " * 40  # about ten windows of the tiny model


class CountingJudge(LocalJudge):
    """The real tiny model, counting the batches it runs, so a test sees when work stops."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.batches = 0
        self.lock = threading.Lock()

    def _run_batch(self, batch: list[tuple[np.ndarray, np.ndarray]], width: int) -> np.ndarray:
        with self.lock:
            self.batches += 1
        return super()._run_batch(batch, width)


def heavy_questions(n: int = 8) -> dict[str, Any]:
    return {f"q{i}": {"type": "choice", "instructions": f"Which option fits part {i}?", "criteria": OPTIONS}
            for i in range(n)}


@pytest.fixture
def counting(tiny_model_dir: Path) -> CountingJudge:
    # One pair a batch: each batch is short, so a stop is seen within one of them.
    return CountingJudge(tiny_model_dir, intra_op_threads=1, max_batch_size=1)


def test_a_request_over_the_pairs_limit_is_a_422_naming_it(tiny_model_dir: Path) -> None:
    judge = LocalJudge(tiny_model_dir, intra_op_threads=1)
    with serving(create_app(judge, max_pairs=100)) as base:
        resp = httpx.post(f"{base}/v1/systemone", json={
            "state": "billing", "questions": {"q": {"type": "choice", "criteria": OPTIONS}}})
        small = httpx.post(f"{base}/v1/systemone", json={
            "state": "billing", "questions": {"q": {"type": "choice", "criteria": OPTIONS[:50]}}})
    assert resp.status_code == 422, resp.text
    (item,) = resp.json()["detail"]
    assert item["loc"] == ["body", "questions"]
    assert "255 model runs" in item["msg"] and "at most 100" in item["msg"] and "max_pairs" in item["msg"]
    assert small.status_code == 200


def test_the_pairs_limit_is_checked_before_anything_runs(counting: CountingJudge) -> None:
    with work_limits(max_pairs=10), pytest.raises(QuestionError, match="max_pairs"):
        counting.ask(LONG_STATE, heavy_questions(1))
    assert counting.batches == 0


def test_a_request_past_its_deadline_is_stopped(counting: CountingJudge) -> None:
    with serving(create_app(counting, max_pairs=None, max_tokens=None, request_timeout=0.2)) as base:
        resp = httpx.post(f"{base}/v1/systemone", json={"state": LONG_STATE, "questions": heavy_questions()},
                          timeout=60)
        at_answer = counting.batches
        time.sleep(0.5)
        later = counting.batches
    assert resp.status_code == 504, resp.text
    assert resp.json()["detail"]["error_type"] == "timeout_error"
    # the server's timeout or the judge's own check, whichever came first; the judge's deadline is
    # what is left of the 0.2 s after the wait for a turn, so a hair under it
    said = re.search(r"(\d+(?:\.\d+)?)s\b", resp.json()["detail"]["message"])
    assert said is not None and 0.15 <= float(said.group(1)) <= 0.2, resp.json()["detail"]["message"]
    assert later - at_answer <= 1  # at most the batch in flight when the deadline passed


def test_work_stops_when_the_client_goes_away(counting: CountingJudge) -> None:
    total = len(counting._plan([LONG_STATE], counting_questions()).pairs)
    with serving(create_app(counting, max_pairs=None, max_tokens=None, request_timeout=None)) as base:
        host, port = httpx.URL(base).host, httpx.URL(base).port
        payload = json.dumps({"state": LONG_STATE, "questions": heavy_questions()}).encode()
        with socket.create_connection((host, port)) as sock:
            sock.sendall(b"POST /v1/systemone HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         + f"Content-Length: {len(payload)}\r\n\r\n".encode() + payload)
            while counting.batches == 0:
                time.sleep(0.01)
        # the client has gone; the server must notice and stop within a batch
        last, steady = -1, 0
        while steady < 20:
            now = counting.batches
            steady = steady + 1 if now == last else 0
            last = now
            time.sleep(0.02)
    assert 0 < last < total


def counting_questions() -> dict[str, Any]:
    from seams.questions import parse_questions

    return parse_questions(heavy_questions())


def test_limits_reach_a_judge_in_a_worker_thread(counting: CountingJudge) -> None:
    import asyncio

    async def ask() -> None:
        with work_limits(timeout=0.05):
            await counting.aask(LONG_STATE, heavy_questions())

    with pytest.raises(JudgeTimeout, match="deadline of 0.05s"):
        asyncio.run(ask())


def read_answer(sock: socket.socket) -> bytes:
    answer = read_message(sock)
    assert answer is not None, "the server closed the connection without an answer"
    return answer


def test_a_content_length_longer_than_the_body_gets_a_408(tiny_model_dir: Path) -> None:
    judge = LocalJudge(tiny_model_dir, intra_op_threads=1)
    with serving(create_app(judge, body_timeout=0.3)) as base:
        url = httpx.URL(base)
        with socket.create_connection((url.host, url.port)) as sock:
            sock.settimeout(10)  # without a body deadline, this recv would wait for ever
            sock.sendall(b"POST /v1/systemone HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 1000\r\n\r\n" + b'{"state": "bil')
            answer = read_answer(sock)
    assert answer.startswith(b"HTTP/1.1 408"), answer
    assert b"did not arrive within 0.3s" in answer and b"request_timeout" in answer


def test_a_trickled_body_gets_a_408(tiny_model_dir: Path) -> None:
    judge = LocalJudge(tiny_model_dir, intra_op_threads=1)
    with serving(create_app(judge, body_timeout=0.3)) as base:
        url = httpx.URL(base)
        payload = json.dumps({"state": "billing", "questions": {"q": {"type": "noul"}}}).encode()
        with socket.create_connection((url.host, url.port)) as sock:
            sock.sendall(b"POST /v1/systemone HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         + f"Content-Length: {len(payload)}\r\n\r\n".encode())
            sock.settimeout(0.05)
            answer = b""
            for byte in payload:  # a byte every 50 ms: the whole body would take seconds
                sock.sendall(bytes([byte]))
                try:
                    answer = sock.recv(65536)
                except TimeoutError:
                    continue
                break
            sock.settimeout(10)
            rest = read_answer(sock) if b"\r\n\r\n" not in answer else b""
            answer += rest
    assert answer.startswith(b"HTTP/1.1 408"), answer


# ---------------------------------------------------------------------- tokens read


def test_a_request_over_the_token_limit_is_a_422_naming_it(tiny_model_dir: Path) -> None:
    judge = LocalJudge(tiny_model_dir, intra_op_threads=1)
    questions = {"q": {"type": "noul", "instructions": "Is this about billing?"}}
    tokens = judge.ask(LONG_STATE, questions).usage.input_tokens
    with serving(create_app(judge, max_tokens=tokens - 1)) as base:
        over = httpx.post(f"{base}/v1/systemone", json={"state": LONG_STATE, "questions": questions}, timeout=60)
    with serving(create_app(judge, max_tokens=tokens)) as base:
        at = httpx.post(f"{base}/v1/systemone", json={"state": LONG_STATE, "questions": questions}, timeout=60)
    assert over.status_code == 422, over.text
    (item,) = over.json()["detail"]
    assert item["loc"] == ["body", "questions"]
    assert f"read {tokens:,} tokens" in item["msg"] and f"at most {tokens - 1:,}" in item["msg"]
    assert "max_tokens" in item["msg"]
    assert at.status_code == 200, at.text


def test_the_token_limit_is_checked_before_anything_runs(counting: CountingJudge) -> None:
    with work_limits(max_tokens=100), pytest.raises(QuestionError, match="max_tokens"):
        counting.ask(LONG_STATE, heavy_questions(1))
    assert counting.batches == 0


def test_the_token_limit_counts_every_state_of_a_bulk_call(counting: CountingJudge) -> None:
    questions = {"q": {"type": "noul", "instructions": "Is this about billing?"}}
    one = counting.ask("billing question", questions).usage.input_tokens
    # each state alone is under the limit; the call's states together are not
    with work_limits(max_tokens=3 * one - 1), pytest.raises(QuestionError, match="max_tokens"):
        counting.ask_many(["billing question", "billing query", "billing issue"], questions)


# ---------------------------------------------------------------------- turns


class GatedJudge(LocalJudge):
    """The real tiny model, whose every batch waits for `gate`: a request holds its turn for as
    long as a test wants."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.gate = threading.Event()
        self.entered = threading.Event()

    def _run_batch(self, batch: list[tuple[np.ndarray, np.ndarray]], width: int) -> np.ndarray:
        self.entered.set()
        assert self.gate.wait(30), "the test never opened the gate"
        return super()._run_batch(batch, width)


NOUL_ASK = {"state": "billing", "questions": {"q": {"type": "noul", "instructions": "Is this about billing?"}}}


def _post_in_background(url: str, out: list[httpx.Response]) -> threading.Thread:
    thread = threading.Thread(target=lambda: out.append(httpx.post(url, json=NOUL_ASK, timeout=60)))
    thread.start()
    return thread


def test_a_request_that_waits_too_long_for_its_turn_is_a_529_with_retry_after(tiny_model_dir: Path) -> None:
    judge = GatedJudge(tiny_model_dir, intra_op_threads=1)
    first: list[httpx.Response] = []
    with serving(create_app(judge, concurrency=1, queue_timeout=0.3)) as base:
        holder = _post_in_background(f"{base}/v1/systemone", first)
        assert judge.entered.wait(30)
        busy = httpx.post(f"{base}/v1/systemone", json=NOUL_ASK, timeout=60)
        judge.gate.set()
        holder.join(60)
        after = httpx.post(f"{base}/v1/systemone", json=NOUL_ASK, timeout=60)
    assert busy.status_code == 529, busy.text
    detail = busy.json()["detail"]
    assert detail["error_type"] == "overloaded_error"
    assert "1 request(s) computing" in detail["message"] and "waited 0.3s" in detail["message"]
    assert int(busy.headers["retry-after"]) >= 1
    assert first[0].status_code == 200 and after.status_code == 200  # the turn came back


def test_a_request_within_its_wait_runs_when_a_turn_frees(tiny_model_dir: Path) -> None:
    judge = GatedJudge(tiny_model_dir, intra_op_threads=1)
    first: list[httpx.Response] = []
    second: list[httpx.Response] = []
    with serving(create_app(judge, concurrency=1, queue_timeout=20)) as base:
        holder = _post_in_background(f"{base}/v1/systemone", first)
        assert judge.entered.wait(30)
        waiter = _post_in_background(f"{base}/v1/systemone", second)
        time.sleep(0.3)
        assert not second  # still waiting for the turn
        judge.gate.set()
        holder.join(60)
        waiter.join(60)
    assert first[0].status_code == 200 and second[0].status_code == 200


def test_a_request_too_large_is_refused_without_waiting_for_a_turn(tiny_model_dir: Path) -> None:
    """Its plan is checked before the turn: while the only turn is held, a request over
    `max_pairs` is answered 422 at once (waiting would have meant the gate or a 529 after 20 s)."""
    judge = GatedJudge(tiny_model_dir, intra_op_threads=1)
    first: list[httpx.Response] = []
    with serving(create_app(judge, concurrency=1, queue_timeout=20, max_pairs=100)) as base:
        holder = _post_in_background(f"{base}/v1/systemone", first)
        assert judge.entered.wait(30)
        big = httpx.post(f"{base}/v1/systemone", json={
            "state": "billing", "questions": {"q": {"type": "choice", "criteria": OPTIONS}}}, timeout=60)
        still_held = not first
        judge.gate.set()
        holder.join(60)
    assert big.status_code == 422 and "max_pairs" in big.text, big.text
    assert still_held  # answered while the turn was still taken
    assert first[0].status_code == 200


def test_a_turn_comes_back_after_its_request_timed_out(tiny_model_dir: Path) -> None:
    judge = GatedJudge(tiny_model_dir, intra_op_threads=1)
    with serving(create_app(judge, concurrency=1, request_timeout=0.3, queue_timeout=5)) as base:
        late = httpx.post(f"{base}/v1/systemone", json=NOUL_ASK, timeout=60)
        judge.gate.set()  # the abandoned thread finishes its batch and sees its cancellation
        again = httpx.post(f"{base}/v1/systemone", json=NOUL_ASK, timeout=60)
    assert late.status_code == 504, late.text
    assert again.status_code == 200, again.text


def test_turns_and_waits_are_checked(tiny_model_dir: Path) -> None:
    judge = LocalJudge(tiny_model_dir, intra_op_threads=1)
    with pytest.raises(ValueError, match="concurrency"):
        create_app(judge, concurrency=0)
    with pytest.raises(ValueError, match="queue_timeout"):
        create_app(judge, concurrency=1, queue_timeout=0)


# ---------------------------------------------------------------------- sizing


def test_seams_serve_sizes_the_token_bound_from_a_timed_run(tiny_model_dir: Path) -> None:
    from seams.cli.serve import token_bound
    from seams.server.sizing import MIN_TOKENS, max_tokens_for, seconds_per_token

    judge = LocalJudge(tiny_model_dir, intra_op_threads=1)
    per_token = seconds_per_token(judge, repeats=2)
    assert 0 < per_token < 0.1
    assert max_tokens_for(30, 1e-4) == 75_000  # a quarter of 30 s at 0.1 ms a token
    assert max_tokens_for(1, 1e-2) == MIN_TOKENS  # never below the floor
    tokens, line = token_bound(judge, None, 30.0, local=True)
    assert tokens is not None and tokens >= MIN_TOKENS and f"--max-tokens {tokens:,}" in line
    assert token_bound(judge, 0, 30.0, local=True) == (None, "")  # 0: no limit, as given
    assert token_bound(judge, 5000, 30.0, local=True) == (5000, "")
    assert token_bound(judge, None, None, local=True) == (None, "")  # nothing to size against
    assert token_bound(judge, None, 30.0, local=False) == (None, "")  # a remote judge bounds its own work


def test_seams_serve_bounds_turns_for_the_local_judge_only() -> None:
    from seams.cli.serve import turns

    assert turns(None, local=True) == 2
    assert turns(None, local=False) is None  # in front of another server, calls mostly wait on it
    assert turns(0, local=True) is None and turns(5, local=False) == 5


def test_the_server_caps_malloc_arenas_unless_the_environment_says(monkeypatch: pytest.MonkeyPatch) -> None:
    """`seams serve` caps glibc's arenas (RSS under load: bench/soak.py); an operator's
    MALLOC_ARENA_MAX wins, and off glibc nothing is done."""
    import sys

    from seams.cli.serve import cap_malloc_arenas

    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert cap_malloc_arenas() is False
    monkeypatch.delenv("MALLOC_ARENA_MAX")
    if not sys.platform.startswith("linux"):
        assert cap_malloc_arenas() is False
        return
    import ctypes

    try:
        ctypes.CDLL("libc.so.6")
    except OSError:
        pytest.skip("not glibc")
    assert cap_malloc_arenas() is True  # mallopt accepted M_ARENA_MAX
