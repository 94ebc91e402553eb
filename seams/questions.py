"""The three question types, field for field the System One request shapes.

A question is built once and validated where it is built: a Choice has 2–255 uniquely named
options, a Score 2–10 levels; a question that breaks a limit raises `QuestionError` (a seams
error, never pydantic's). Question ids are never part of a question: renaming an id must not
change its answer, so ids live only in the mapping that holds the questions.
"""

from __future__ import annotations

import functools
import json
import unicodedata
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal, TypeAlias

from pydantic import ConfigDict, Field, TypeAdapter, field_validator, model_validator

from ._models import SeamsModel
from .errors import QuestionError, SeamsError
from .state import fingerprint, json_problem, text_problem

#: Instructions and descriptions may be a string, an object or an array (System One §3.1).
Text: TypeAlias = str | dict[str, Any] | list[Any]

MIN_OPTIONS, MAX_OPTIONS = 2, 255
#: What a question derives from its wording and keeps (see `_Question`).
_DERIVED = ("wire_form", "wire_json", "fingerprint")
MIN_LEVELS, MAX_LEVELS = 2, 10


class _Question(SeamsModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    _construction_error: ClassVar[type[SeamsError]] = QuestionError

    def wire(self) -> dict[str, Any]:
        """The question as it goes on the wire (no None fields)."""
        return self.model_dump(mode="json", exclude_none=True, by_alias=True)

    # What is derived from a question's wording is computed once per question object (a question
    # is frozen; a rubric asks the same objects call after call) and kept on it, not in a cache
    # keyed by `id()`: the values live and die with the question.

    @functools.cached_property
    def wire_form(self) -> dict[str, Any]:
        """`wire()`, computed once and shared: read it, never change it (`wire()` gives a copy)."""
        return self.wire()

    @functools.cached_property
    def wire_json(self) -> str:
        """The wire form as compact JSON, as it goes into a request body."""
        return json.dumps(self.wire_form, ensure_ascii=False, separators=(",", ":"), allow_nan=False)

    @functools.cached_property
    def fingerprint(self) -> str:
        """A short hash of the question's wording (`wire()`): what a calibration or a head was
        fitted against."""
        return fingerprint(self.wire_form)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Any:
        """A copy; with `update`, what was derived from the old wording is dropped with it."""
        copied = super().model_copy(update=update, deep=deep)
        if update:
            for name in _DERIVED:
                copied.__dict__.pop(name, None)
        return copied

    @model_validator(mode="after")
    def _sendable(self) -> Any:
        # Text that cannot be sent (a lone surrogate, nesting past MAX_DEPTH) is refused where the
        # question is built, not deep in a tokenizer or serialiser of whichever judge asks it.
        criteria = self.criteria  # type: ignore[attr-defined]
        if isinstance(criteria, NoulCriteria):
            criteria = {"true": criteria.true, "false": criteria.false}
        for name, value in (("instructions", self.instructions), ("criteria", criteria)):  # type: ignore[attr-defined]
            problem = json_problem(value, name)
            if problem is not None:
                raise ValueError(problem)
        return self


class NoulCriteria(SeamsModel):
    """What a true and a false answer mean. Either side may be left out."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    _construction_error: ClassVar[type[SeamsError]] = QuestionError

    true: Text | None = None
    false: Text | None = None

    @model_validator(mode="before")
    @classmethod
    def _bool_keys(cls, data: Any) -> Any:
        # YAML reads a bare `true:` key as a boolean; accept it as the field name it spells.
        if isinstance(data, Mapping) and any(isinstance(k, bool) for k in data):
            return {(str(k).lower() if isinstance(k, bool) else k): v for k, v in data.items()}
        return data


class Noul(_Question):
    """A yes/no statement; the answer is the probability that it holds."""

    type: Literal["noul"] = "noul"
    instructions: Text | None = None
    criteria: NoulCriteria | None = None


class Choice(_Question):
    """One of 2–255 named options; the answer is a distribution, its argmax and a confidence.

    `criteria` maps each option name to a description or None. A list of names is accepted as
    shorthand for options without descriptions.
    """

    type: Literal["choice"] = "choice"
    instructions: Text | None = None
    criteria: dict[str, Text | None]

    @field_validator("criteria", mode="before")
    @classmethod
    def _names_to_map(cls, value: Any) -> Any:
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            if len(set(value)) != len(value):
                dupes = sorted({v for v in value if value.count(v) > 1})
                raise ValueError(f"option names must be unique; repeated: {', '.join(map(repr, dupes))}")
            return dict.fromkeys(value)
        return value

    @field_validator("criteria")
    @classmethod
    def _check_options(cls, value: dict[str, Text | None]) -> dict[str, Text | None]:
        n = len(value)
        if not MIN_OPTIONS <= n <= MAX_OPTIONS:
            raise ValueError(f"a choice needs {MIN_OPTIONS}–{MAX_OPTIONS} options, got {n}")
        seen: dict[str, str] = {}
        for name in value:
            if not name.strip():
                raise ValueError("option names must be non-empty")
            key = unicodedata.normalize("NFC", name)
            if key in seen:
                raise ValueError(f"option names must be unique; {name!r} repeats {seen[key]!r}")
            seen[key] = name
        return value

    @property
    def options(self) -> list[str]:
        return list(self.criteria)


class Score(_Question):
    """A ladder of 2–10 described levels, 0-based; the answer is the expected level."""

    type: Literal["score"] = "score"
    instructions: Text | None = None
    criteria: list[Text]

    @model_validator(mode="before")
    @classmethod
    def _reject_map(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and isinstance(data.get("criteria"), Mapping):
            raise ValueError("score criteria must be an ordered list of level descriptions, not a map")  # noqa: TRY004 -- pydantic turns only ValueError into a ValidationError
        return data

    @field_validator("criteria")
    @classmethod
    def _check_levels(cls, value: list[Text]) -> list[Text]:
        n = len(value)
        if not MIN_LEVELS <= n <= MAX_LEVELS:
            raise ValueError(f"a score needs {MIN_LEVELS}–{MAX_LEVELS} levels, got {n}")
        return value

    @property
    def levels(self) -> list[Text]:
        return list(self.criteria)


Question: TypeAlias = Annotated[Noul | Choice | Score, Field(discriminator="type")]
_QUESTION = TypeAdapter(Question)
_QUESTIONS = TypeAdapter(dict[str, Question])


def parse_question(data: Any) -> Noul | Choice | Score:
    """Validate one question from its JSON shape (raises pydantic's ValidationError)."""
    return _QUESTION.validate_python(data)


def question_id_problem(qid: Any) -> str | None:
    """Why `qid` cannot be a question id (not a non-empty string, or not valid Unicode), or None."""
    if not isinstance(qid, str) or not qid:
        return f"question ids must be non-empty strings, got {qid!r}"
    bad = text_problem(qid)
    return None if bad is None else f"question id {qid!r} {bad}"


def parse_questions(data: Mapping[str, Any]) -> dict[str, Noul | Choice | Score]:
    """Validate a mapping of question id → question; ids must be non-empty strings."""
    for qid in data:
        problem = question_id_problem(qid)
        if problem is not None:
            raise ValueError(problem)
    return _QUESTIONS.validate_python(dict(data))


__all__ = [
    "MAX_LEVELS",
    "MAX_OPTIONS",
    "MIN_LEVELS",
    "MIN_OPTIONS",
    "Choice",
    "Noul",
    "NoulCriteria",
    "Question",
    "Score",
    "Text",
    "parse_question",
    "parse_questions",
    "question_id_problem",
]
