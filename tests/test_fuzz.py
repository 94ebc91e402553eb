"""Fuzzing the boundaries (hypothesis, bounded to a few seconds): the real `seams serve` app on
loopback never answers 5xx, and `Rubric.decide`, the judges and the rubric loader raise only
seams' own errors, whatever the input: lone surrogates, deep nesting, odd numbers, odd shapes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_server import serving

from seams.decision import Decision
from seams.errors import SeamsError
from seams.judges import CachedJudge, LocalJudge
from seams.rubric import Rubric
from seams.server import create_app

#: Text that includes lone surrogates, which hypothesis leaves out by default (and `st.text`
#: drops from a union of alphabets, hence the join).
CHARS = st.characters() | st.characters(categories=["Cs"]) | st.sampled_from("yes no billing `")
TEXT = st.lists(CHARS, max_size=12).map("".join)
SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | TEXT
KEYS = TEXT | st.sampled_from(["type", "criteria", "instructions", "true", "false", "q", "state", "questions"])
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
                    max_leaves=16)


def nest(value: Any, depth: int) -> Any:
    for _ in range(depth):
        value = [value]
    return value


DEEP = st.builds(nest, JSON, st.integers(min_value=50, max_value=1200))
STATES = TEXT | JSON | DEEP
QUESTION = st.fixed_dictionaries(
    {"type": st.sampled_from(["noul", "choice", "score"])},
    optional={
        "instructions": TEXT | JSON | DEEP,
        "criteria": st.lists(TEXT, max_size=6) | st.dictionaries(TEXT, TEXT | st.none(), max_size=6) | DEEP,
    },
)
QUESTIONS = st.dictionaries(TEXT, QUESTION, min_size=1, max_size=3)
FUZZ = settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))


def wire(payload: Any) -> bytes:
    """JSON text as a client may send it: lone surrogates escaped, NaN kept (both must be refused)."""
    return json.dumps(payload, ensure_ascii=True).encode()


@pytest.fixture(scope="module")
def local(tiny_model_dir: Path) -> LocalJudge:
    return LocalJudge(tiny_model_dir, intra_op_threads=1)


@pytest.fixture(scope="module")
def client(local: LocalJudge):
    with serving(create_app(local, max_body_bytes=256 * 1024)) as base, httpx.Client(base_url=base, timeout=30) as c:
        yield c


@FUZZ
@given(payload=st.fixed_dictionaries({"state": STATES, "questions": QUESTIONS}, optional={"model": TEXT | JSON})
       | JSON | DEEP)
def test_the_server_never_answers_5xx(client: httpx.Client, payload: Any) -> None:
    try:
        raw = wire(payload)
    except RecursionError:  # the test's own encoder: send what a deeper client would
        raw = b"[" * 5000 + b"]" * 5000
    resp = client.post("/v1/systemone", content=raw, headers={"Content-Type": "application/json"})
    assert resp.status_code < 500, resp.text
    detail = resp.json().get("detail") if resp.status_code != 200 else None
    assert resp.status_code == 200 or detail, resp.text
    if resp.status_code == 422:
        assert all(item["loc"][0] == "body" and item["msg"] for item in detail)


RUBRIC = """\
name: fuzz
version: "1"
state: {type: text}
questions:
  billing: {type: noul, instructions: Is this about billing?}
  team: {type: choice, instructions: Which team?, criteria: [billing, technical, sales]}
  anger: {type: score, instructions: How upset?, criteria: [calm, frustrated, angry]}
policy:
  outcomes: {route: act, skip: refuse, look: review}
  rules:
    - {id: billing, question: billing, high: 0.7, low: 0.3, then: route, else: skip, review: look}
  default: skip
"""


@FUZZ
@given(state=STATES)
def test_decide_raises_only_seams_errors(local: LocalJudge, tmp_path_factory, state: Any) -> None:
    rubric = Rubric.loads(RUBRIC)
    with CachedJudge(local, tmp_path_factory.mktemp("c") / "cache.db") as cached:
        for judge in (local, cached):
            try:
                assert isinstance(rubric.decide(state, judge=judge), Decision)
            except SeamsError:
                pass


@FUZZ
@given(state=STATES, questions=QUESTIONS)
def test_judges_raise_only_seams_errors(local: LocalJudge, state: Any, questions: dict) -> None:
    try:
        local.ask(state, questions)
    except SeamsError:
        pass


@FUZZ
@given(where=st.sampled_from(["version", "name", "instructions", "option"]), text=TEXT,
       depth=st.integers(min_value=0, max_value=300))
def test_the_rubric_loader_raises_only_rubric_errors(where: str, text: str, depth: int) -> None:
    value = json.dumps(nest(text, depth), ensure_ascii=True)  # YAML flow style reads JSON
    source = {
        "version": RUBRIC.replace('version: "1"', f"version: {value}"),
        "name": RUBRIC.replace("name: fuzz", f"name: {value}"),
        "instructions": RUBRIC.replace("instructions: Is this about billing?", f"instructions: {value}"),
        "option": RUBRIC.replace("[billing, technical, sales]", f"[billing, technical, {value}]"),
    }[where]
    try:
        rubric = Rubric.loads(source)
    except SeamsError:
        return
    assert rubric.hash  # a rubric that loads can be hashed and so audited
