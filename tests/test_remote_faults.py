"""The remote judge against broken servers: every jevcompat fault, retries, budgets, typed errors.

Response-side faults must end in `ProtocolError`, never in an answer. Request-side faults (a
server rejecting what the protocol allows) must end in the typed error of the status. Retries are
proved on a scripted loopback server by counting what it received, never by wall-clock speed.
"""

from __future__ import annotations

import asyncio
import email.utils
import time

import pytest
from jevcompat.mock import FAULTS
from servers import HANG_UP, OK, free_port, jev_mock

from seams import Choice, Noul, Score
from seams.errors import (
    APIStatusError,
    AuthenticationError,
    ConfigError,
    JudgeTimeout,
    NotFoundError,
    ProtocolError,
    QuestionError,
    RateLimitError,
    RequestValidationError,
    ServiceUnavailable,
    TransportError,
)
from seams.judges._retry import RetryPolicy, retry_after_seconds
from seams.judges.remote import RemoteJudge

STATE = "I was charged twice. Please help."
# Chosen so that every answer-side fault shows: a choice with 3 options (the margin differs from
# the protocol's confidence only beyond 2), capitalised and non-ASCII (NFC) option names, and a
# 4-level score whose expectation is far from its most likely level.
QUESTIONS = {
    "billing": Noul(instructions="Is this about billing?"),
    "team": Choice(
        instructions="Which team?", criteria={"Billing": "Payments", "Technical": None, "Café": "coffee"}
    ),
    "anger": Score(instructions="How frustrated?", criteria=["Calm", "Frustrated", "Very angry", "Furious"]),
}

# fault -> why it is a protocol error (documentation for the reader of a failure)
RESPONSE_FAULTS = {
    "xssi-200": "200 body is not JSON",
    "first-question-only": "an answer is missing",
    "nfd-keys": "option names do not round-trip",
    "no-usage": "usage is missing",
    "float-usage": "token counts are floats",
    "extra-answer": "an answer nobody asked for",
    "boolean-type": "answer type does not match",
    "nan": "NaN in the body",
    "noul-range": "noul above 1",
    "choice-no-confidence": "confidence missing",
    "choice-key-case": "probability keys are not the option names",
    "choice-sum": "probabilities sum to 1.2",
    "choice-second": "choice is not the argmax",
    "score-no-legend": "legend missing",
    "legend-1-based": "legend is 1-based",
    "score-keys-1-based": "probability keys are 1-based",
    "score-sum": "probabilities sum to 0.8",
    "score-argmax": "score is the mode, not the expectation",
    "confidence-over": "confidence above 1",
    "confidence-margin": "confidence is not the protocol's formula",
}
# Faults that break only a SHOULD and leave every answer intact: accepted, extras ignored.
TOLERATED_FAULTS = {"plain-content-type", "unprefixed-extra"}
# Faults in server semantics (the answer depends on the id, batch or order): each single response
# is well-formed, so no client can see them in one response. jevcompat's `test` finds them.
SEMANTIC_FAULTS = {"id-leaks", "batch-leaks", "order-leaks"}


def judge(url: str, **kw) -> RemoteJudge:
    """A judge on `url`; retry settings (`max_retries=...`) go into its `RetryPolicy`."""
    retry = {"max_retries": 0, "total_budget": 5.0}
    retry.update({k: kw.pop(k) for k in ("max_retries", "total_budget", "backoff_initial", "backoff_max") if k in kw})
    return RemoteJudge(base_url=url, retry=RetryPolicy(**retry), **kw)


@pytest.mark.parametrize("fault", sorted(RESPONSE_FAULTS))
def test_response_fault_is_a_protocol_error(fault: str) -> None:
    with jev_mock(fault) as server, judge(server.url) as j, pytest.raises(ProtocolError):
        j.ask(STATE, QUESTIONS)


@pytest.mark.parametrize("fault", ["choice-sum", "nan", "legend-1-based", "first-question-only"])
def test_response_fault_is_a_protocol_error_async(fault: str) -> None:
    async def main() -> None:
        async with judge(jev_mock_url) as j:
            with pytest.raises(ProtocolError):
                await j.aask(STATE, QUESTIONS)

    with jev_mock(fault) as server:
        jev_mock_url = server.url
        asyncio.run(main())


@pytest.mark.parametrize("fault", sorted(TOLERATED_FAULTS))
def test_should_level_deviations_are_tolerated(fault: str, mock) -> None:
    with judge(mock.url) as clean:
        expected = clean.ask(STATE, QUESTIONS)
    with jev_mock(fault) as server, judge(server.url) as j:
        got = j.ask(STATE, QUESTIONS)
    assert got.answers == expected.answers and got.usage == expected.usage


def test_every_jevcompat_fault_is_classified() -> None:
    """A new jevcompat fault must be looked at, not silently skipped."""
    request_side = set(REQUEST_FAULTS) | CLIENT_SIDE_FAULTS
    assert set(FAULTS) == set(RESPONSE_FAULTS) | TOLERATED_FAULTS | SEMANTIC_FAULTS | request_side


# --------------------------------------------------------------------------- request side

# fault -> (what to send, the typed error, a check on it)
REQUEST_FAULTS = {
    "wrong-route": ({}, NotFoundError, None),
    "reject-jev-latest": ({}, NotFoundError, None),
    "text-errors": ({"model": "no-such-model"}, APIStatusError, lambda e: "Unknown model" in str(e)),
    "error-flat": ({"model": "no-such-model"}, APIStatusError, lambda e: e.status_code == 400),
    "validation-400": (
        {"state": ["an", "array"], "fault_also": "reject-array-state"},
        APIStatusError,
        lambda e: e.status_code == 400,
    ),
    "reject-array-state": (
        {"state": ["an", "array"]},
        RequestValidationError,
        lambda e: e.errors[0]["loc"] == ["body", "state"],
    ),
    "strict-ids": (
        {"questions": {"is-billing?": Noul(instructions="Billing?")}},
        RequestValidationError,
        lambda e: e.errors[0]["loc"] == ["body", "questions", "is-billing?"],
    ),
    "string-only-text": (
        {"questions": {"q": Noul(instructions={"ask": "Billing?", "hint": "charges"})}},
        RequestValidationError,
        lambda e: e.errors[0]["loc"][-1] == "instructions",
    ),
    "noul-two-sided": (
        {"questions": {"q": Noul(instructions="Billing?", criteria={"true": "charges"})}},
        RequestValidationError,
        lambda e: e.errors[0]["loc"][-1] == "criteria",
    ),
    "noul-needs-instructions": (
        {"questions": {"q": Noul(criteria={"true": "about billing"})}},
        RequestValidationError,
        lambda e: e.errors[0]["loc"][-1] == "instructions",
    ),
    "no-null-description": (
        {"questions": {"q": Choice(criteria={"a": None, "b": "B"})}},
        RequestValidationError,
        lambda e: e.errors[0]["loc"] == ["body", "questions", "q", "choice", "criteria", "a"],
    ),
    "cap-64": (
        {"questions": {"q": Choice(criteria=[f"o{i}" for i in range(65)])}},
        RequestValidationError,
        lambda e: e.errors[0]["type"] == "too_long",
    ),
    "cap-5-levels": (
        {"questions": {"q": Score(criteria=[str(i) for i in range(6)])}},
        RequestValidationError,
        lambda e: e.errors[0]["type"] == "too_long",
    ),
    "auth-rejects-header": ({"api_key": "k"}, AuthenticationError, lambda e: e.status_code == 401),
    "auth-x-api-key": ({"api_key": "k", "key": "k"}, AuthenticationError, None),
    "auth-plain": ({"key": "k"}, AuthenticationError, lambda e: "Unauthorized" in str(e)),
    "auth-invalid-403-text": (
        {"api_key": "wrong", "key": "k"},
        AuthenticationError,
        lambda e: "bad key" in str(e),
    ),
    "models-404": ({"call": "list_models"}, NotFoundError, None),
}
# Faults in how a server treats requests seams never sends: the client rejects them first.
CLIENT_SIDE_FAULTS = {"forbid-extra", "accept-map-score", "500-on-unknown-type", "accept-boolean"}


@pytest.mark.parametrize("fault", sorted(REQUEST_FAULTS))
def test_request_fault_gives_the_typed_error(fault: str) -> None:
    spec, error, check = REQUEST_FAULTS[fault]
    spec = dict(spec)
    faults = [fault] + ([spec.pop("fault_also")] if "fault_also" in spec else [])
    model, api_key = spec.pop("model", "jev-latest"), spec.pop("api_key", None)
    with (
        jev_mock(*faults, key=spec.pop("key", None)) as server,
        judge(server.url, model=model, api_key=api_key) as j,
        pytest.raises(error) as info,
    ):
        if spec.pop("call", None) == "list_models":
            j.list_models()
        else:
            j.ask(spec.pop("state", STATE), spec.pop("questions", QUESTIONS))
    if check is not None:
        assert check(info.value), info.value


@pytest.mark.parametrize(
    "question",
    [
        {"type": "score", "criteria": {"0": "low", "1": "high"}},  # map-form score (accept-map-score)
        {"type": "boolean", "instructions": "Billing?"},  # unknown type (500-on-unknown-type, accept-boolean)
        {"type": "noul", "instructions": "Billing?", "extra": 1},
        {"type": "choice", "criteria": {"only": None}},
    ],
)
def test_invalid_questions_never_reach_the_server(question, scripted) -> None:
    server = scripted([OK])
    with judge(server.url) as j, pytest.raises(QuestionError):
        j.ask(STATE, {"q": question})
    assert server.count == 0


def test_forbid_extra_server_accepts_what_seams_sends() -> None:
    with jev_mock("forbid-extra") as server, judge(server.url) as j:
        assert len(j.ask(STATE, QUESTIONS)) == 3


# --------------------------------------------------------------------------- statuses


def test_422_carries_the_servers_loc(scripted) -> None:
    detail = [
        {
            "loc": ["body", "questions", "q", "noul", "instructions"],
            "msg": "Field required",
            "type": "missing",
        }
    ]
    server = scripted([(422, {}, {"detail": detail})])
    with judge(server.url, max_retries=3) as j, pytest.raises(RequestValidationError) as info:
        j.ask(STATE, {"q": Noul(instructions="x")})
    assert info.value.errors == detail
    assert info.value.status_code == 422
    assert "questions.q.noul.instructions: Field required" in str(info.value)
    assert server.count == 1  # a validation error is never retried


@pytest.mark.parametrize(
    "status, error",
    [
        (400, APIStatusError),
        (401, AuthenticationError),
        (403, AuthenticationError),
        (404, NotFoundError),
        (409, APIStatusError),
    ],
)
def test_client_errors_are_typed_and_not_retried(status, error, scripted) -> None:
    server = scripted(
        [(status, {"x-typesafe-request-id": "req_1"}, {"detail": {"error_type": "e", "message": "nope"}})]
    )
    with judge(server.url, max_retries=3) as j, pytest.raises(error) as info:
        j.ask(STATE, QUESTIONS)
    assert type(info.value) is error
    assert info.value.status_code == status and info.value.request_id == "req_1"
    assert "nope" in str(info.value)
    assert server.count == 1


def test_429_with_retry_after_waits_then_succeeds(scripted) -> None:
    server = scripted([(429, {"retry-after": "1"}, {"detail": {"message": "slow down"}}), OK])
    with judge(server.url, max_retries=2, backoff_initial=0.0) as j:
        answers = j.ask(STATE, QUESTIONS)
    assert len(answers) == 3
    assert server.count == 2
    waited = server.requests[1].at - server.requests[0].at
    assert waited >= 0.95  # the server asked for a second; the backoff alone would be 0


def test_retry_after_ms_wins_over_retry_after(scripted) -> None:
    server = scripted([(503, {"retry-after-ms": "150", "retry-after": "30"}, None), OK])
    with judge(server.url, max_retries=1, total_budget=10) as j:
        assert len(j.ask(STATE, QUESTIONS)) == 3
    waited = server.requests[1].at - server.requests[0].at
    assert 0.14 <= waited < 10  # 30 s would have blown the budget and failed the call


def test_retry_after_http_date(scripted) -> None:
    when = email.utils.formatdate(time.time() + 1, usegmt=True)
    server = scripted([(429, {"retry-after": when}, None), OK])
    with judge(server.url, max_retries=1, total_budget=10, backoff_initial=0.0) as j:
        assert len(j.ask(STATE, QUESTIONS)) == 3
    assert server.count == 2
    assert server.requests[1].at - server.requests[0].at > 0  # waited for the date (≤ 1 s after rounding)


def test_529_until_the_budget_runs_out(scripted) -> None:
    server = scripted([(529, {}, {"detail": {"error_type": "overloaded_error", "message": "Overloaded"}})])
    budget = 1.0
    with (
        judge(server.url, max_retries=50, total_budget=budget, backoff_initial=0.05, backoff_max=0.2) as j,
        pytest.raises(ServiceUnavailable) as info,
    ):
        j.ask(STATE, QUESTIONS)
    err = info.value
    assert err.status_code == 529 and "Overloaded" in str(err)
    assert 2 <= server.count < 51 and err.attempts == server.count  # retried, and stopped by the budget
    assert server.requests[-1].at - server.requests[0].at <= budget


def test_the_servers_answer_wins_over_a_timeout_the_budget_caused(scripted) -> None:
    def script(n, body):
        if n == 0:
            return (529, {"retry-after-ms": "0"}, {"detail": {"message": "Overloaded"}})
        time.sleep(1.0)  # longer than what is left of the budget
        return OK

    server = scripted(script)
    with judge(server.url, max_retries=3, total_budget=0.4) as j, pytest.raises(ServiceUnavailable) as info:
        j.ask(STATE, QUESTIONS)
    assert info.value.status_code == 529 and info.value.attempts == 2


def test_max_retries_bounds_the_attempts(scripted) -> None:
    server = scripted([(500, {}, None)])
    with (
        judge(server.url, max_retries=2, total_budget=30, backoff_initial=0.01, backoff_max=0.02) as j,
        pytest.raises(ServiceUnavailable) as info,
    ):
        j.ask(STATE, QUESTIONS)
    assert server.count == 3 and info.value.attempts == 3
    assert "after 3 attempts" in str(info.value)


def test_rate_limit_error_carries_retry_after(scripted) -> None:
    server = scripted([(429, {"retry-after": "120"}, {"detail": {"message": "slow down"}})])
    with judge(server.url, max_retries=5, total_budget=2) as j, pytest.raises(RateLimitError) as info:
        j.ask(STATE, QUESTIONS)
    assert info.value.retry_after == 120
    assert server.count == 1  # waiting 120 s cannot fit a 2 s budget: give up at once


def test_408_is_retried(scripted) -> None:
    server = scripted([(408, {}, None), OK])
    with judge(server.url, max_retries=1, backoff_initial=0.01) as j:
        assert len(j.ask(STATE, QUESTIONS)) == 3
    assert server.count == 2


def test_408_until_the_last_try_is_a_timeout(scripted) -> None:
    server = scripted([(408, {}, {"detail": {"error_type": "timeout", "message": "request took too long"}})])
    with (
        judge(server.url, max_retries=1, backoff_initial=0.01) as j,
        pytest.raises(JudgeTimeout, match="HTTP 408"),
    ):
        j.ask(STATE, QUESTIONS)
    assert server.count == 2


def test_connection_refused_is_a_transport_error_after_retries() -> None:
    with (
        judge(f"http://127.0.0.1:{free_port()}", max_retries=2, backoff_initial=0.01, backoff_max=0.02) as j,
        pytest.raises(TransportError) as info,
    ):
        j.ask(STATE, QUESTIONS)
    assert not isinstance(info.value, JudgeTimeout)
    assert info.value.attempts == 3


def test_a_dropped_connection_is_retried(scripted) -> None:
    server = scripted([HANG_UP, OK])
    with judge(server.url, max_retries=1, backoff_initial=0.01) as j:
        assert len(j.ask(STATE, QUESTIONS)) == 3
    assert server.count == 2


def test_a_dropped_connection_every_time_is_a_transport_error(scripted) -> None:
    server = scripted([HANG_UP])
    with judge(server.url, max_retries=2, backoff_initial=0.01) as j, pytest.raises(TransportError) as info:
        j.ask(STATE, QUESTIONS)
    assert server.count == 3 and info.value.attempts == 3


def test_an_html_error_page_is_typed_with_an_excerpt(scripted) -> None:
    page = b"<html><body><h1>502 Bad Gateway</h1>" + b"x" * 1000 + b"</body></html>"
    server = scripted([(502, {"Content-Type": "text/html"}, page)])
    with judge(server.url) as j, pytest.raises(ServiceUnavailable) as info:
        j.ask(STATE, QUESTIONS)
    assert "502 Bad Gateway" in str(info.value) and len(str(info.value)) < 400
    assert info.value.body.startswith("<html>")


@pytest.mark.parametrize("body", [{"models": "jev"}, {"data": []}, {"models": [{"id": "x"}]}, b"not json"])
def test_a_malformed_models_list_is_a_protocol_error(scripted, body) -> None:
    server = scripted([(200, {}, body)])
    with judge(server.url) as j, pytest.raises(ProtocolError):
        j.list_models()


def test_a_slow_server_is_a_timeout(scripted) -> None:
    def slow(n, body):
        time.sleep(0.5)
        return OK

    server = scripted(slow)
    with (
        judge(server.url, timeout=0.1, max_retries=1, backoff_initial=0.01, total_budget=5) as j,
        pytest.raises(JudgeTimeout),
    ):
        j.ask(STATE, QUESTIONS)
    assert server.count == 2


def test_async_retries_mirror_sync(scripted) -> None:
    server = scripted([(503, {"retry-after-ms": "10"}, None), (429, {"retry-after": "0"}, None), OK])

    async def main():
        async with judge(server.url, max_retries=2) as j:
            return await j.aask(STATE, QUESTIONS)

    assert len(asyncio.run(main())) == 3
    assert server.count == 3


def test_async_budget_gives_service_unavailable(scripted) -> None:
    server = scripted([(502, {}, None)])

    async def main():
        async with judge(
            server.url, max_retries=20, total_budget=0.5, backoff_initial=0.05, backoff_max=0.1
        ) as j:
            await j.aask(STATE, QUESTIONS)

    with pytest.raises(ServiceUnavailable):
        asyncio.run(main())
    assert server.requests[-1].at - server.requests[0].at <= 0.5


def test_a_closed_judge_refuses(mock) -> None:
    j = judge(mock.url)
    j.close()
    with pytest.raises(ConfigError):
        j.ask(STATE, QUESTIONS)


# --------------------------------------------------------------------------- retry-after parsing


@pytest.mark.parametrize(
    "headers, expected",
    [
        ({}, None),
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after-ms": "junk", "retry-after": "3"}, 3.0),
        ({"retry-after": "-1"}, None),
        ({"retry-after": "nan"}, None),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # in the past: retry now
    ],
)
def test_retry_after_seconds(headers, expected) -> None:
    assert retry_after_seconds(headers) == expected


def test_retry_after_future_date() -> None:
    now = 1_700_000_000.0
    header = email.utils.formatdate(now + 30, usegmt=True)
    assert retry_after_seconds({"retry-after": header}, now=now) == pytest.approx(30, abs=1)


def test_backoff_is_full_jitter_under_the_ceiling() -> None:
    policy = RetryPolicy(backoff_initial=0.5, backoff_max=4.0)
    draws = [policy.backoff(n) for n in (1, 2, 3, 4, 5, 6) for _ in range(50)]
    assert all(0 <= d <= 4.0 for d in draws)
    assert max(policy.backoff(1) for _ in range(200)) <= 0.5
    assert len({round(d, 6) for d in draws}) > 100  # jittered, not a fixed schedule


@pytest.mark.parametrize(
    "kw",
    [
        {"max_retries": -1},
        {"total_budget": 0},
        {"backoff_max": float("nan")},
        {"timeout": 0},
        {"timeout": float("inf")},
    ],
)
def test_bad_retry_settings_are_config_errors(kw) -> None:
    with pytest.raises(ConfigError):
        judge("http://127.0.0.1:1", **kw)


def test_retry_settings_passed_the_old_way_say_how_to_pass_them() -> None:
    with pytest.raises(ConfigError, match=r"retry=RetryPolicy\(max_retries=0, total_budget=5\)"):
        RemoteJudge(base_url="http://127.0.0.1:1", max_retries=0, total_budget=5)
    with pytest.raises(TypeError, match="unexpected keyword argument.*: retries"):
        RemoteJudge(base_url="http://127.0.0.1:1", retries=2)
