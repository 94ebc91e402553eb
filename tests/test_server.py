"""The System One server on a real uvicorn on loopback, over the tiny model and a few stub judges.

Every bad input is sent over HTTP and its status code and body checked: the protocol's clients
retry 5xx, so a 5xx for bad input would turn a user's mistake into a retry storm.
"""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seams.answers import Answers, NoulAnswer
from seams.errors import JudgeTimeout, ModelError, ServiceUnavailable, StateError
from seams.judges.base import SyncJudge
from seams.judges.local import LocalJudge
from seams.server import create_app

KEY = "test-key-123"
LIMIT = 16 * 1024
NOUL = {"type": "noul", "instructions": "Is the customer asking for money back?"}
ANSWER_FIELDS = {
    "noul": {"type", "noul"},
    "choice": {"type", "choice", "probabilities", "confidence"},
    "score": {"type", "score", "legend", "probabilities", "confidence"},
}


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """Run `app` on uvicorn in a thread on a free loopback port; yield its base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@pytest.fixture(scope="module")
def judge(tiny_model_dir: Path) -> LocalJudge:
    return LocalJudge(tiny_model_dir, intra_op_threads=1)


@pytest.fixture(scope="module")
def url(judge: LocalJudge) -> Iterator[str]:
    with serving(create_app(judge, api_key=KEY, max_body_bytes=LIMIT, model_names=["seams-local"])) as base:
        yield base


@pytest.fixture(scope="module")
def client(url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {KEY}"}, timeout=30) as c:
        yield c


def body(questions: dict | None = None, **extra: Any) -> dict:
    return {"model": "jev-latest", "state": "I was charged twice, refund please",
            "questions": {"q": NOUL} if questions is None else questions,
            **extra}


def assert_validation(resp: httpx.Response, loc_prefix: list, msg: str = "") -> list[dict]:
    assert resp.status_code == 422, resp.text
    assert resp.headers["content-type"].startswith("application/json")
    detail = resp.json()["detail"]
    assert isinstance(detail, list) and detail
    for item in detail:
        assert set(item) >= {"loc", "msg", "type"} and item["loc"][0] == "body"
    assert any(item["loc"][: len(loc_prefix)] == loc_prefix and msg in item["msg"] for item in detail), detail
    return detail


def assert_error(resp: httpx.Response, status: int, error_type: str, msg: str = "") -> dict:
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"].startswith("application/json")
    detail = resp.json()["detail"]
    assert detail["error_type"] == error_type and isinstance(detail["message"], str)
    assert msg in detail["message"]
    return detail


# ---------------------------------------------------------------------------- answering


def test_answers_are_the_judges_answers(client: httpx.Client, judge: LocalJudge) -> None:
    qs = {
        "refund": NOUL,
        "team": {"type": "choice", "instructions": "Which team?", "criteria": {"Billing": "Payments", "Sales": None}},
        "anger": {"type": "score", "instructions": "How upset?", "criteria": ["Calm", "Frustrated", "Angry"]},
    }
    resp = client.post("/v1/systemone", json=body(qs, state="billing, frustrated"))
    assert resp.status_code == 200 and resp.headers["content-type"] == "application/json"
    data = resp.json()
    direct = judge.ask("billing, frustrated", {k: v for k, v in qs.items()})
    assert data["model"] == judge.model_id
    assert data["usage"] == {"input_tokens": direct.usage.input_tokens, "output_tokens": 0}
    served = Answers.model_validate({"model": data["model"], "answers": data["answers"]})
    assert served.answers == direct.answers


@pytest.mark.parametrize("model", ["jev-latest", "seams-tiny-test", "seams-local", None])
def test_the_judges_names_are_accepted(client: httpx.Client, model: str | None) -> None:
    payload = body()
    if model is None:
        del payload["model"]
    else:
        payload["model"] = model
    assert client.post("/v1/systemone", json=payload).status_code == 200


def test_models_lists_the_model_and_its_aliases(client: httpx.Client) -> None:
    resp = client.get("/v1/models")
    assert resp.status_code == 200
    models = resp.json()["models"]
    assert [m["name"] for m in models] == ["seams-tiny-test", "jev-latest", "seams-local"]
    assert all(isinstance(m["description"], str) and m["release_date"] == "2026-11-29" for m in models)


def test_extras_are_x_prefixed_only(client: httpx.Client) -> None:
    long_state = " ".join(["filler"] * 300 + ["yes"])
    qs = {"n": NOUL, "c": {"type": "choice", "criteria": {"Billing": None, "Sales": None}},
          "s": {"type": "score", "criteria": ["calm", "angry"]}}
    data = client.post("/v1/systemone", json=body(qs, state=long_state)).json()
    assert {k for k in data if not k.startswith("x_")} == {"model", "answers", "usage"}
    assert data["x_windows"] > 1
    for answer in data["answers"].values():
        extras = set(answer) - ANSWER_FIELDS[answer["type"]]
        assert extras == {"x_windows"}


def test_unknown_top_level_fields_are_ignored(client: httpx.Client) -> None:
    assert client.post("/v1/systemone", json=body(seed=7, x_trace="abc", stream=True)).status_code == 200


def test_states_may_be_objects_and_arrays(client: httpx.Client) -> None:
    for state in ({"subject": "refund", "body": "yes"}, ["one", "yes"], ""):
        resp = client.post("/v1/systemone", json=body(state=state))
        assert resp.status_code == 200, resp.text


# ---------------------------------------------------------------------------- bad input


def test_malformed_json_is_a_422(client: httpx.Client) -> None:
    resp = client.post("/v1/systemone", content=b'{"model": "jev-latest", "state": "x", "questions": {',
                       headers={"content-type": "application/json"})
    detail = assert_validation(resp, ["body"], "JSON")
    assert detail[0]["type"] == "json_invalid" and isinstance(detail[0]["loc"][1], int)
    assert_validation(client.post("/v1/systemone", content=b"\xff\xfe"), ["body"], "UTF-8")
    assert_validation(client.post("/v1/systemone", content=b'{"state": NaN}'), ["body"], "NaN")
    assert_validation(client.post("/v1/systemone", json=["not", "an", "object"]), ["body"], "JSON object")


def test_256_options_is_a_422_naming_the_limit(client: httpx.Client) -> None:
    options = {f"Queue {i:03d}": None for i in range(256)}
    resp = client.post("/v1/systemone", json=body({"queue": {"type": "choice", "criteria": options}}))
    assert_validation(resp, ["body", "questions", "queue", "choice", "criteria"], "2–255 options, got 256")


def test_255_options_are_answered(client: httpx.Client) -> None:
    options = {f"Queue {i:03d}": None for i in range(255)}
    resp = client.post("/v1/systemone", json=body({"queue": {"type": "choice", "criteria": options}}))
    assert resp.status_code == 200 and len(resp.json()["answers"]["queue"]["probabilities"]) == 255


def test_11_levels_is_a_422_naming_the_limit(client: httpx.Client) -> None:
    levels = [f"Level {i}" for i in range(11)]
    resp = client.post("/v1/systemone", json=body({"anger": {"type": "score", "criteria": levels}}))
    assert_validation(resp, ["body", "questions", "anger", "score", "criteria"], "2–10 levels, got 11")


@pytest.mark.parametrize(
    ("payload", "loc", "msg"),
    [
        ({"model": "jev-latest", "questions": {"q": NOUL}}, ["body", "state"], "required"),
        ({"model": "jev-latest", "state": "x"}, ["body", "questions"], "required"),
        (body({}), ["body", "questions"], "at least one question"),
        (body({"": NOUL}), ["body", "questions"], "non-empty"),
        (body(state=None), ["body", "state"], ""),
        (body(state=42), ["body", "state"], ""),
        (body({"q": {"instructions": "Refund?"}}), ["body", "questions", "q"], ""),
        (body({"q": {"type": "boolean", "instructions": "Refund?"}}), ["body", "questions", "q"], ""),
        (body({"q": {"type": "choice", "criteria": {"Only": None}}}), ["body", "questions", "q", "choice"], "got 1"),
        (body({"q": {"type": "choice", "criteria": {}}}), ["body", "questions", "q", "choice"], "got 0"),
        (body({"q": {"type": "score", "criteria": ["Calm"]}}), ["body", "questions", "q", "score"], "got 1"),
        (body({"q": {"type": "score", "criteria": {"0": "Calm", "1": "Angry"}}}), ["body", "questions", "q", "score"], "not a map"),
        (body({"q": {"type": "score", "criteria": ["Calm", None]}}), ["body", "questions", "q", "score", "criteria", 1], ""),
        (body({"q": {**NOUL, "colour": "red"}}), ["body", "questions", "q", "noul", "colour"], ""),
        (body(model=7), ["body", "model"], ""),
    ],
)
def test_invalid_requests_are_422_with_the_field(client: httpx.Client, payload: dict, loc: list, msg: str) -> None:
    assert_validation(client.post("/v1/systemone", json=payload), loc, msg)


def test_a_question_too_long_for_the_model_is_a_422(client: httpx.Client) -> None:
    q = {"type": "noul", "instructions": " ".join(["word"] * 80)}
    assert_validation(client.post("/v1/systemone", json=body({"long": q})), ["body", "questions"], "window is 64 tokens")


def test_an_unknown_model_is_a_404_naming_what_is_served(client: httpx.Client) -> None:
    resp = client.post("/v1/systemone", json=body(model="gpt-9"))
    assert_error(resp, 404, "not_found_error", "'gpt-9' is not served here; available: seams-tiny-test, jev-latest")


def test_an_oversize_body_is_a_413(client: httpx.Client) -> None:
    big = body(state="x" * LIMIT)
    assert_error(client.post("/v1/systemone", json=big), 413, "request_too_large", f"at most {LIMIT}")
    # without a Content-Length (chunked), the limit is enforced while reading
    raw = json.dumps(big).encode()
    chunks = (raw[i:i + 4096] for i in range(0, len(raw), 4096))
    assert_error(client.post("/v1/systemone", content=chunks), 413, "request_too_large", f"more than {LIMIT}")


def test_a_small_compressed_body_that_expands_past_the_limit_is_a_413(client: httpx.Client) -> None:
    bomb = zstandard.ZstdCompressor().compress(json.dumps(body(state="a" * (LIMIT * 8))).encode())
    assert len(bomb) < LIMIT
    resp = client.post("/v1/systemone", content=bomb, headers={"content-encoding": "zstd"})
    assert_error(resp, 413, "request_too_large", "decoded request body")


def test_zstd_and_gzip_bodies_are_decoded(client: httpx.Client) -> None:
    raw = json.dumps(body(state="yes " * 400)).encode()
    assert len(raw) >= 1024
    z = client.post("/v1/systemone", content=zstandard.ZstdCompressor().compress(raw),
                    headers={"content-encoding": "zstd", "content-type": "application/json"})
    assert z.status_code == 200, z.text
    # a streaming compressor writes frames without a content size
    streamed = zstandard.ZstdCompressor(write_content_size=False).compressobj()
    frame = streamed.compress(raw) + streamed.flush()
    again = client.post("/v1/systemone", content=frame, headers={"content-encoding": "zstd"})
    assert again.status_code == 200 and again.json()["answers"] == z.json()["answers"]
    g = client.post("/v1/systemone", content=gzip.compress(raw), headers={"content-encoding": "gzip"})
    assert g.status_code == 200 and g.json()["answers"] == z.json()["answers"]


def test_bad_encodings_are_4xx(client: httpx.Client) -> None:
    assert_error(client.post("/v1/systemone", content=b"not zstd at all", headers={"content-encoding": "zstd"}),
                 400, "invalid_request_error", "not valid zstd")
    assert_error(client.post("/v1/systemone", content=b"{}", headers={"content-encoding": "br"}),
                 415, "unsupported_media_type", "'br'")
    multipart = client.post("/v1/systemone", files={"request": ("r.json", json.dumps(body()), "application/json")})
    assert_error(multipart, 415, "unsupported_media_type", "assets (images) are not supported")


@pytest.mark.parametrize(
    ("headers", "message"),
    [({}, "missing API key"), ({"Authorization": "Bearer wrong"}, "invalid API key"),
     ({"Authorization": f"Basic {KEY}"}, "invalid API key"), ({"Authorization": "Bearer"}, "invalid API key")],
)
def test_a_wrong_or_missing_key_is_a_401(url: str, headers: dict, message: str) -> None:
    resp = httpx.post(f"{url}/v1/systemone", json=body(), headers=headers)
    assert_error(resp, 401, "authentication_error", message)
    assert resp.headers["www-authenticate"] == "Bearer"
    assert_error(httpx.get(f"{url}/v1/models", headers=headers), 401, "authentication_error")


def test_the_key_is_checked_before_the_body_is_read(url: str) -> None:
    resp = httpx.post(f"{url}/v1/systemone", content=b"x" * (LIMIT + 1), headers={"Authorization": "Bearer no"})
    assert_error(resp, 401, "authentication_error")


def test_the_bearer_scheme_is_case_insensitive(url: str) -> None:
    assert httpx.post(f"{url}/v1/systemone", json=body(), headers={"Authorization": f"bearer {KEY}"}).status_code == 200


def test_without_a_key_any_authorization_header_is_accepted(judge: LocalJudge) -> None:
    with serving(create_app(judge)) as base:
        for headers in ({}, {"Authorization": "Bearer anything"}, {"Authorization": "Basic xyz"}):
            assert httpx.post(f"{base}/v1/systemone", json=body(), headers=headers).status_code == 200
            assert httpx.get(f"{base}/v1/models", headers=headers).status_code == 200


def test_unknown_routes_and_methods_answer_json(client: httpx.Client) -> None:
    assert_error(client.get("/v1/nothing"), 404, "not_found_error")
    assert_error(client.get("/v1/systemone"), 405, "method_not_allowed")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    payload=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
        lambda children: st.lists(children, max_size=4) | st.dictionaries(
            st.sampled_from(["model", "state", "questions", "type", "criteria", "instructions", "q", "true", "x"]),
            children, max_size=5),
        max_leaves=20,
    )
)
def test_no_json_body_gets_a_5xx(client: httpx.Client, payload: Any) -> None:
    resp = client.post("/v1/systemone", json=payload)
    assert resp.status_code < 500, resp.text
    assert resp.headers["content-type"].startswith("application/json")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    question=st.fixed_dictionaries(
        {"type": st.sampled_from(["noul", "choice", "score"])},
        optional={
            "instructions": st.none() | st.text(max_size=30) | st.lists(st.text(max_size=5), max_size=3),
            "criteria": st.none() | st.lists(st.text(max_size=8) | st.none(), max_size=12)
            | st.dictionaries(st.text(max_size=8), st.none() | st.text(max_size=8), max_size=12),
        },
    ),
    state=st.text(max_size=200) | st.dictionaries(st.text(max_size=5), st.text(max_size=20), max_size=3),
)
def test_no_question_gets_a_5xx(client: httpx.Client, question: dict, state: Any) -> None:
    resp = client.post("/v1/systemone", json=body({"q": question}, state=state))
    assert resp.status_code in (200, 422), resp.text


# ---------------------------------------------------------------------------- a failing judge


class _Failing(SyncJudge):
    """A judge that fails in a chosen way: the server must say the judge failed, not the client."""

    model_id = "failing"

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def ask(self, state: Any, questions: Any) -> Answers:
        raise self.exc


class _Echo(SyncJudge):
    """A judge whose answers carry an extra field that is not x_ prefixed."""

    model_id = "echo"

    def ask(self, state: Any, questions: Any) -> Answers:
        return Answers(model="echo-1", answers={k: NoulAnswer(noul=0.5, debug="leak", x_note="ok") for k in questions})


@pytest.mark.parametrize(
    ("exc", "status", "error_type"),
    [
        (ModelError("onnxruntime failed"), 500, "model_error"),
        (ServiceUnavailable("upstream down", status_code=503), 502, "upstream_error"),
        (JudgeTimeout("upstream slow"), 504, "timeout_error"),
        (RuntimeError("bug"), 500, "internal_error"),
    ],
)
def test_a_failing_judge_is_a_5xx_with_the_error_shape(exc: Exception, status: int, error_type: str) -> None:
    with serving(create_app(_Failing(exc))) as base:
        assert_error(httpx.post(f"{base}/v1/systemone", json=body()), status, error_type)


def test_input_errors_raised_by_a_judge_are_422() -> None:
    with serving(create_app(_Failing(StateError("the state is too long")))) as base:
        assert_validation(httpx.post(f"{base}/v1/systemone", json=body()), ["body", "state"], "too long")


def test_unprefixed_extras_of_a_judge_are_dropped() -> None:
    with serving(create_app(_Echo())) as base:
        data = httpx.post(f"{base}/v1/systemone", json=body()).json()
    assert data["answers"]["q"] == {"type": "noul", "noul": 0.5, "x_note": "ok"}
    assert data["model"] == "echo-1"


# ---------------------------------------------------------------------------- seams on both ends


def test_seams_remote_judge_reads_seams_serve(url: str, judge: LocalJudge) -> None:
    from seams.judges import RemoteJudge

    qs = {
        "refund": NOUL,
        "team": {"type": "choice", "instructions": "Which team?", "criteria": {"Billing": "Payments", "Sales": None}},
        "anger": {"type": "score", "instructions": "How upset?", "criteria": ["Calm", "Frustrated", "Angry"]},
    }
    state = {"subject": "billing", "body": "I am frustrated, yes"}
    with RemoteJudge("jev-latest", base_url=url, api_key=KEY) as remote:
        got = remote.ask(state, qs)
    direct = judge.ask(state, qs)
    assert got.model == judge.model_id
    assert got["refund"].noul == pytest.approx(direct["refund"].noul)
    assert got["team"].choice == direct["team"].choice
    assert got["team"].probabilities == pytest.approx(direct["team"].probabilities)
    assert got["anger"].score == pytest.approx(direct["anger"].score)
    assert got["anger"].probabilities == pytest.approx(direct["anger"].probabilities)


class _Gated(SyncJudge):
    """A judge that answers only once the test opens the gate."""

    model_id = "gated"

    def __init__(self) -> None:
        self.entered, self.gate = threading.Event(), threading.Event()

    def ask(self, state: Any, questions: Any) -> Answers:
        self.entered.set()
        assert self.gate.wait(30)
        return Answers(model="gated", answers={k: NoulAnswer(noul=0.5) for k in questions})


def test_a_busy_judge_does_not_block_the_server() -> None:
    judge = _Gated()
    with serving(create_app(judge)) as base:
        result: dict[str, httpx.Response] = {}
        slow = threading.Thread(target=lambda: result.update(r=httpx.post(f"{base}/v1/systemone", json=body(), timeout=60)))
        slow.start()
        assert judge.entered.wait(30)
        # The judge is mid-answer in a worker thread; the event loop still serves other requests.
        assert httpx.get(f"{base}/v1/models", timeout=10).status_code == 200
        judge.gate.set()
        slow.join(30)
    assert result["r"].status_code == 200


# ---------------------------------------------------------------------------- input no judge can read


def _raw_json(payload: Any) -> bytes:
    """JSON with `\\ud800`-style escapes, as a client may send it (httpx's own `json=` cannot encode
    a lone surrogate)."""
    return json.dumps(payload, ensure_ascii=True).encode()


def _deep(n: int) -> Any:
    return json.loads("[" * n + "]" * n)


@pytest.mark.parametrize(
    ("payload", "loc"),
    [
        (body(state="billing \ud800"), ["body", "state"]),
        (body(state={"k\udfff": "v"}), ["body", "state"]),
        (body({"q": {"type": "noul", "instructions": "is it \ud800"}}), ["body", "questions"]),
        (body({"q": {"type": "choice", "criteria": ["a\ud800", "b"]}}), ["body", "questions"]),
        (body({"q": {"type": "score", "criteria": ["a", "b\ud800"]}}), ["body", "questions"]),
        (body({"q\ud800": NOUL}), ["body", "questions"]),
        (body(state=_deep(200)), ["body", "state"]),
        (body({"q": {"type": "noul", "instructions": _deep(200)}}), ["body", "questions"]),
    ],
    ids=["state", "state-key", "instruction", "option", "level", "question-id", "deep-state", "deep-instruction"],
)
def test_lone_surrogates_and_deep_nesting_are_422_naming_the_limit(client: httpx.Client, payload: dict,
                                                                   loc: list) -> None:
    resp = client.post("/v1/systemone", content=_raw_json(payload), headers={"Content-Type": "application/json"})
    detail = assert_validation(resp, loc)
    assert any("surrogate" in d["msg"] or "levels deep" in d["msg"] for d in detail), detail


def test_json_nested_past_the_parsers_limit_is_a_422(client: httpx.Client) -> None:
    raw = b'{"state":' + b"[" * 5_000 + b"]" * 5_000 + b', "questions": {"q": {"type": "noul"}}}'
    assert_validation(client.post("/v1/systemone", content=raw), ["body"], "nested too deeply")


def test_a_500_body_never_names_the_exception() -> None:
    for exc in (RuntimeError("secret internals at /srv/x.py"), ModelError("/models/x.onnx: onnxruntime failed: Fail")):
        with serving(create_app(_Failing(exc))) as base:
            resp = httpx.post(f"{base}/v1/systemone", json=body())
        assert resp.status_code == 500
        assert "RuntimeError" not in resp.text and "secret" not in resp.text and "onnx" not in resp.text
