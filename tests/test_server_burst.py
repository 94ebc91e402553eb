"""A mixed burst against `seams serve` (the real app on uvicorn on loopback, over the tiny ONNX
model): good and bad requests at once, as a careless or hostile client fleet sends them. Issue 16
saw 25 of 50 such requests answered 500; here every bad one must be a 422 in the protocol's
`detail` shape, naming what was wrong, and every good one a 200 with the judge's own answers.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_server import serving

from seams.answers import Answers
from seams.judges.local import LocalJudge
from seams.server import create_app

MAX_PAIRS = 100
NOUL = {"type": "noul", "instructions": "Is the customer asking for money back?"}
GOOD: dict[str, dict[str, Any]] = {
    "noul": {"state": "I was charged twice, refund please", "questions": {"refund": NOUL}},
    "choice": {"state": "my invoice is wrong", "questions": {"team": {
        "type": "choice", "instructions": "Which team?", "criteria": {"Billing": "Payments", "Sales": None}}}},
    "score": {"state": "this is the third time, I am furious", "questions": {"anger": {
        "type": "score", "instructions": "How upset?", "criteria": ["Calm", "Frustrated", "Angry"]}}},
}


def deep(n: int) -> Any:
    return json.loads("[" * n + "]" * n)


def raw(payload: Any) -> bytes:
    """JSON as a client may send it: a lone surrogate as its `\\ud800` escape."""
    return json.dumps(payload, ensure_ascii=True).encode()


#: Each bad request: its raw body, and what the 422's `detail` must say (a `msg` fragment).
BAD: dict[str, tuple[bytes, str]] = {
    "surrogate-state": (raw({"state": "billing \ud800", "questions": {"q": NOUL}}), "surrogate"),
    "surrogate-option": (raw({"state": "billing", "questions": {"q": {"type": "choice", "criteria": ["a\udfff", "b"]}}}),
                         "surrogate"),
    "surrogate-id": (raw({"state": "billing", "questions": {"q\ud800": NOUL}}), "surrogate"),
    "deep-state": (raw({"state": deep(200), "questions": {"q": NOUL}}), "levels deep"),
    "deep-past-parser": (b'{"state":' + b"[" * 5_000 + b"]" * 5_000 + b', "questions": {"q": {"type": "noul"}}}',
                         "nested too deeply"),
    "too-many-options": (raw({"state": "billing", "questions": {"q": {
        "type": "choice", "criteria": [f"option {i}" for i in range(256)]}}}), "255"),
    "over-max-pairs": (raw({"state": "billing", "questions": {"q": {
        "type": "choice", "criteria": [f"option {i}" for i in range(MAX_PAIRS + 20)]}}}), "max_pairs"),
    "malformed-json": (b'{"state": "billing", "questions": {"q": ', ""),
}


@pytest.fixture(scope="module")
def judge(tiny_model_dir: Path) -> LocalJudge:
    return LocalJudge(tiny_model_dir, intra_op_threads=1)


@pytest.fixture(scope="module")
def url(judge: LocalJudge) -> Iterator[str]:
    with serving(create_app(judge, max_pairs=MAX_PAIRS)) as base:
        yield base


def burst(url: str, bodies: list[bytes]) -> list[httpx.Response]:
    """Send every body at once, each on its own connection."""

    async def fire() -> list[httpx.Response]:
        limits = httpx.Limits(max_connections=len(bodies))
        async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
            return list(await asyncio.gather(*(
                client.post("/v1/systemone", content=b, headers={"Content-Type": "application/json"})
                for b in bodies)))

    return asyncio.run(fire())


@pytest.mark.timeout(120)
def test_a_mixed_burst_gets_no_5xx_and_every_answer_right(url: str, judge: LocalJudge) -> None:
    kinds = [*GOOD, *BAD] * 5  # 55 requests, good and bad interleaved
    bodies = [raw(GOOD[k]) if k in GOOD else BAD[k][0] for k in kinds]
    responses = burst(url, bodies)

    assert [r.status_code for r in responses if r.status_code >= 500] == []
    expected = {k: judge.ask(g["state"], g["questions"]).answers for k, g in GOOD.items()}
    for kind, resp in zip(kinds, responses, strict=True):
        assert resp.headers["content-type"].startswith("application/json"), (kind, resp.text)
        if kind in GOOD:
            assert resp.status_code == 200, (kind, resp.text)
            served = Answers.model_validate({"model": resp.json()["model"], "answers": resp.json()["answers"]})
            assert served.answers == expected[kind], kind
            continue
        assert resp.status_code == 422, (kind, resp.text)
        detail = resp.json()["detail"]
        assert isinstance(detail, list) and detail, (kind, detail)
        assert all(set(d) >= {"loc", "msg", "type"} and d["loc"][0] == "body" for d in detail), (kind, detail)
        assert any(BAD[kind][1] in d["msg"] for d in detail), (kind, detail)
