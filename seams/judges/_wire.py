"""Requests on the wire: validated questions, their JSON (computed once), token budgets, splits.

Shared by the remote judge, the cache and the cassettes so that all three see one canonical
form of a request. The wire JSON of a question is computed once per question object and kept on
it (`wire_form`, `wire_json`: questions are frozen, a rubric asks the same question objects again
and again, and re-dumping them through pydantic on every request was the largest part of the
client's own overhead).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ..errors import QuestionError, StateError, validation_problems
from ..questions import Choice, Noul, Score, parse_question, question_id_problem
from ..state import check_state

#: Characters per token assumed when estimating a request's size. Four characters a token is
#: the usual figure for English under BPE tokenizers; it is an estimate, the server is the
#: authority, and a state it finds too long comes back as a `RequestValidationError`.
CHARS_PER_TOKEN = 4
#: The protocol's budget for the state plus the longest question ("about 32k tokens").
STATE_QUESTION_BUDGET = 32_000
#: The protocol's budget for one whole request ("64k per request").
REQUEST_BUDGET = 64_000

AnyQuestion = Noul | Choice | Score

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def estimate_tokens(text: str) -> int:
    """Tokens of a JSON text, estimated as ⌈characters / CHARS_PER_TOKEN⌉."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


class WireQuestion:
    """A validated question with its wire JSON and estimated size, computed once."""

    __slots__ = ("json", "question", "tokens", "wire")

    def __init__(self, question: AnyQuestion) -> None:
        self.question = question
        self.wire: dict[str, Any] = question.wire_form  # shared with the question: read only
        self.json: str = question.wire_json
        self.tokens: int = estimate_tokens(self.json)


def wire_question(question: AnyQuestion) -> WireQuestion:
    """The `WireQuestion` of a question object, from what the question computed once."""
    return WireQuestion(question)


def prepare_questions(questions: Mapping[str, Any]) -> dict[str, WireQuestion]:
    """Validate a question mapping and return each question's wire form, in order.

    Accepts question objects or their JSON shapes (dicts). Raises `QuestionError` for an empty
    mapping, a bad id or an invalid question, before anything is sent.
    """
    if not isinstance(questions, Mapping):
        raise QuestionError(f"questions must be a mapping of id → question, got {type(questions).__name__}")
    if not questions:
        raise QuestionError("at least one question is required")
    out: dict[str, WireQuestion] = {}
    for qid, q in questions.items():
        problem = question_id_problem(qid)
        if problem is not None:
            raise QuestionError(problem)
        if not isinstance(q, (Noul, Choice, Score)):
            if not isinstance(q, Mapping):
                raise QuestionError(f"question {qid!r} is a {type(q).__name__}, not a Noul, Choice or Score")
            try:
                q = parse_question(dict(q))
            except ValidationError as e:
                first = validation_problems(e)[0]
                raise QuestionError(f"question {qid!r}: {first.field + ': ' if first.field else ''}{first.message}") from None
        out[qid] = wire_question(q)
    return out


def encode_state(state: Any) -> str:
    """Validate a state (`check_state`) and return its JSON text for the request body."""
    check_state(state)
    try:
        return _dumps(state)
    except (TypeError, ValueError) as e:  # pragma: no cover - check_state catches these first
        raise StateError(f"state is not JSON-serialisable: {e}") from None


def split_questions(state_json: str, wired: Mapping[str, WireQuestion]) -> list[list[str]]:
    """Question ids grouped into as few requests as the protocol's budgets allow, in order.

    All questions go in one request unless state + questions would pass `REQUEST_BUDGET`; then
    they are packed greedily in declared order. Raises `StateError` when the state, alone or with
    its longest question, is over `STATE_QUESTION_BUDGET`: no split can help then.
    """
    state_tokens = estimate_tokens(state_json)
    if state_tokens > STATE_QUESTION_BUDGET:
        raise StateError(
            f"the state is about {state_tokens:,} tokens (estimated at {CHARS_PER_TOKEN} characters a "
            f"token); System One allows about {STATE_QUESTION_BUDGET:,} tokens for the state plus its "
            f"longest question. Shorten the state or judge it in parts."
        )
    total = state_tokens + sum(w.tokens for w in wired.values())
    if total <= STATE_QUESTION_BUDGET:  # the common case: state plus any one question fits too
        return [list(wired)]
    longest = max(wired, key=lambda qid: wired[qid].tokens)
    if state_tokens + wired[longest].tokens > STATE_QUESTION_BUDGET:
        raise StateError(
            f"the state (about {state_tokens:,} tokens) plus question {longest!r} (about "
            f"{wired[longest].tokens:,}) is over System One's budget of about "
            f"{STATE_QUESTION_BUDGET:,} tokens for the state plus its longest question"
        )
    if total <= REQUEST_BUDGET:
        return [list(wired)]
    groups: list[list[str]] = [[]]
    used = state_tokens
    for qid, w in wired.items():
        if groups[-1] and used + w.tokens > REQUEST_BUDGET:
            groups.append([])
            used = state_tokens
        groups[-1].append(qid)
        used += w.tokens
    return groups


def encode_body(model_json: str, state_json: str, wired: Mapping[str, WireQuestion], ids: list[str]) -> bytes:
    """The request body from pre-encoded parts: no re-serialisation of anything cached."""
    qs = ",".join(f"{_dumps(qid)}:{wired[qid].json}" for qid in ids)
    return f'{{"model":{model_json},"state":{state_json},"questions":{{{qs}}}}}'.encode()


def encode_model(model: str) -> str:
    return _dumps(model)


__all__ = [
    "CHARS_PER_TOKEN",
    "REQUEST_BUDGET",
    "STATE_QUESTION_BUDGET",
    "WireQuestion",
    "encode_body",
    "encode_model",
    "encode_state",
    "estimate_tokens",
    "prepare_questions",
    "split_questions",
    "wire_question",
]
