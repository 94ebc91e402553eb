"""The base of seams' public pydantic models: a constructor that raises seams' errors.

`Choice(criteria=["a", "b\\ud800"])` is a call into seams, so what it raises must be a seams
error (`seams.errors`), not pydantic's `ValidationError` — as httpx maps httpcore's errors to its
own at the boundary. The mapping sits on the metaclass's `__call__`, which runs only when a model
is built by calling its class: pydantic's own validation of a nested model (a question inside a
rubric, an answer inside a decision) never goes through it, so a rubric's errors still carry the
path of the field that broke, for `file:line:col` messages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ValidationError

from .errors import InputError, SeamsError, validation_problems

if TYPE_CHECKING:  # pydantic's metaclass is private: named for the type checker, taken from BaseModel at run time
    from pydantic._internal._model_construction import ModelMetaclass as _PydanticMeta
else:
    _PydanticMeta = type(BaseModel)


class _SeamsMeta(_PydanticMeta):
    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        error: type[SeamsError] = getattr(cls, "_construction_error", InputError)
        if args:
            raise error(f"{cls.__name__} takes keyword arguments only, got {len(args)} positional "
                        f"argument{'s' if len(args) > 1 else ''}")
        try:
            return super().__call__(**kwargs)
        except ValidationError as exc:
            raise error(construction_message(cls.__name__, exc)) from None


def construction_message(name: str, exc: ValidationError) -> str:
    """pydantic's errors as one seams message: the model, then each field's path and problem."""
    parts = []
    for p in validation_problems(exc):
        parts.append(f"{p.field}: {p.message}" if p.field else p.message)
    return f"{name}: " + "; ".join(parts)


class SeamsModel(BaseModel, metaclass=_SeamsMeta):
    """A pydantic model whose constructor raises `_construction_error` (an `InputError` unless a
    subclass names a narrower one) instead of pydantic's `ValidationError`."""

    _construction_error: ClassVar[type[SeamsError]] = InputError


__all__ = ["SeamsModel", "construction_message"]
