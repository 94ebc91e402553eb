"""The shape of a rubric file, as pydantic models. Unknown keys are rejected everywhere."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..policy import Policy
from ..questions import Choice, Noul, Question, Score
from .calibration import CalibrationBlock


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StateField(_Spec):
    """One named field of an object state."""

    description: str | None = None
    required: bool = True


class StateSpec(_Spec):
    """What the judged state looks like: plain text, an array, or an object with named fields."""

    type: Literal["text", "object", "array"] = "object"
    fields: dict[str, StateField] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        if isinstance(data, str):  # `state: text`
            return {"type": data}
        if isinstance(data, dict) and isinstance(data.get("fields"), dict):
            fields = {
                k: ({"description": v} if isinstance(v, str) or v is None else v) for k, v in data["fields"].items()
            }
            data = {**data, "fields": fields}
        return data

    @model_validator(mode="after")
    def _fields_need_object(self) -> StateSpec:
        if self.fields and self.type != "object":
            raise ValueError(f"fields apply to an object state, not to a {self.type} state")
        return self


class RubricSpec(_Spec):
    """A whole rubric file."""

    name: str = Field(min_length=1)
    version: str = "1"
    description: str | None = None
    state: StateSpec = Field(default_factory=StateSpec)
    questions: dict[str, Question] = Field(min_length=1)
    #: Questions asked about the state with some fields replaced (`seams.rubric.alone`).
    #: A field replaced by null is left out: the question is asked without it (optional fields only).
    asked_alone: dict[str, dict[str, str | None]] = Field(default_factory=dict)
    policy: Policy
    calibration: CalibrationBlock | None = None

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value

    @model_validator(mode="after")
    def _asked_alone(self) -> RubricSpec:
        for qid, repl in self.asked_alone.items():
            if qid not in self.questions:
                raise ValueError(f"asked_alone names {qid!r}, which is not a question; questions: {list(self.questions)}")
            if not repl:
                raise ValueError(f"asked_alone.{qid}: name at least one field to replace")
            if self.state.type != "object":
                raise ValueError(f"asked_alone replaces fields of an object state, not of a {self.state.type} state")
            unknown = [f for f in repl if self.state.fields and f not in self.state.fields]
            if unknown:
                raise ValueError(f"asked_alone.{qid}: unknown field(s) {unknown}; declared: {list(self.state.fields)}")
            required = [f for f, v in repl.items() if v is None and f in self.state.fields
                        and self.state.fields[f].required]
            if required:
                raise ValueError(f"asked_alone.{qid}: {required} replaced by null (left out), but the state "
                                 "requires them; only an optional field can be left out")
        return self

    @model_validator(mode="after")
    def _when_fields(self) -> RubricSpec:
        for rule in self.policy.rules:
            if rule.when is None:
                continue
            if self.state.type != "object":
                raise ValueError(f"rule {rule.id!r}: `when` reads a field of an object state, "
                                 f"not of a {self.state.type} state")
            if self.state.fields and rule.when.field not in self.state.fields:
                raise ValueError(f"rule {rule.id!r}: `when` reads unknown field {rule.when.field!r}; "
                                 f"declared: {list(self.state.fields)}")
        return self

    @field_validator("questions")
    @classmethod
    def _ids(cls, value: dict[str, Noul | Choice | Score]) -> dict[str, Noul | Choice | Score]:
        for qid in value:
            if not qid.strip():
                raise ValueError("question ids must be non-empty")
        return value


__all__ = ["RubricSpec", "StateField", "StateSpec"]
