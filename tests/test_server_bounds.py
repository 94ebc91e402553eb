"""`seams serve` bounds the work a request may cost, on a real uvicorn over the tiny ONNX model:
pairs per request (422 naming the limit), a per-request deadline, stopping when the client goes
away, and a deadline on the request body (a slow or short body gets 408, not a held connection).
"""

from __future__ import annotations

import json
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
    with serving(create_app(counting, max_pairs=None, request_timeout=0.2)) as base:
        resp = httpx.post(f"{base}/v1/systemone", json={"state": LONG_STATE, "questions": heavy_questions()},
                          timeout=60)
        at_answer = counting.batches
        time.sleep(0.5)
        later = counting.batches
    assert resp.status_code == 504, resp.text
    assert resp.json()["detail"]["error_type"] == "timeout_error"
    assert "0.2s" in resp.json()["detail"]["message"]  # the server's timeout or the judge's own check, whichever came first
    assert later - at_answer <= 1  # at most the batch in flight when the deadline passed


def test_work_stops_when_the_client_goes_away(counting: CountingJudge) -> None:
    total = len(counting._plan([LONG_STATE], counting_questions()).pairs)
    with serving(create_app(counting, max_pairs=None, request_timeout=None)) as base:
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
