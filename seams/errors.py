"""Every exception seams raises, grouped by cause.

Callers catch these types, never a dependency's: foreign errors (httpx, onnxruntime, YAML,
pydantic) are mapped to them at the boundary where they occur. Two families matter most:

* `InputError` — the caller's input is wrong. Raised *before* anything is sent to a judge, with
  a message that names what was wrong and the limit it broke.
* `JudgeError` — a judge could not give a trustworthy answer. A policy never turns one of these
  into a pass: its `on_error` decides, and fails closed by default.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError


class SeamsError(Exception):
    """Base class of every error seams raises."""

    #: How many requests a remote judge made before giving up with this error (None: not a retried request).
    attempts: int | None = None


# --------------------------------------------------------------------------- input errors


class InputError(SeamsError, ValueError):
    """The caller's input is invalid; nothing was sent."""


class StateError(InputError):
    """A state cannot be judged: not JSON-serialisable, missing a field, or over a budget."""


class QuestionError(InputError):
    """A question or a set of questions breaks a limit of the protocol."""


class RubricError(InputError):
    """A rubric file is invalid. Names the file, line, column and field where it can."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        column: int | None = None,
        field: str | None = None,
        others: Sequence[RubricError] = (),
    ) -> None:
        self.message = message
        self.path = path
        self.line = line
        self.column = column
        self.field = field
        #: Further errors found in the same file, each located (shown one a line after the first).
        self.others = tuple(others)
        super().__init__("\n".join([self._render(), *(o._render() for o in self.others)]))

    def _render(self) -> str:
        where = self.path or "<rubric>"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        field = f" [{self.field}]" if self.field else ""
        return f"{where}:{field} {self.message}"


class OptionError(InputError):
    """An option object's parameter is out of its range; names the field and the limit.

    `owner` is the object (`FitOptions`), `field` the parameter and `rule` what it must be (with
    the value given), so the CLI can say the same thing of its flag."""

    def __init__(self, owner: str, field: str, rule: str) -> None:
        super().__init__(f"{owner}.{field} {rule}")
        self.owner = owner
        self.field = field
        self.rule = rule


class LabelledSetError(InputError):
    """A labelled set cannot be used: names the file and the line (1-based) where it is wrong."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.message = message
        self.path = path
        self.line = line
        where = path or "<labelled set>"
        if line is not None:
            where += f":{line}"
        super().__init__(f"{where}: {message}")


class ConfigError(SeamsError):
    """seams is misconfigured: a missing API key, model directory or setting."""


class HeadMismatch(ConfigError):
    """A fitted head was offered to a judge it was not fitted on (another model, no features)."""


# --------------------------------------------------------------------------- judge errors


class JudgeError(SeamsError):
    """A judge could not produce a trustworthy answer."""


class TransportError(JudgeError):
    """The request did not complete: connection refused, reset or otherwise broken."""


class JudgeTimeout(TransportError):
    """The request, or the whole retry budget, ran out of time."""


class ProtocolError(JudgeError):
    """The server answered, but its answer breaks the System One protocol.

    seams never guesses around a malformed answer: a wrong sum, a missing answer, a legend that
    is not 0-based or a confidence that does not follow the formula all end here.
    """


class APIStatusError(JudgeError):
    """The server answered with an error status."""

    def __init__(self, message: str, *, status_code: int, body: Any = None, request_id: str | None = None):
        self.status_code = status_code
        self.body = body
        self.request_id = request_id
        super().__init__(f"HTTP {status_code}: {message}")


class AuthenticationError(APIStatusError):
    """401/403: the API key is missing or wrong."""


class RequestValidationError(APIStatusError):
    """422: the server rejected the request. `errors` holds its `detail` items with their `loc`."""

    def __init__(self, message: str, *, errors: Sequence[dict[str, Any]] = (), **kw: Any):
        self.errors = list(errors)
        super().__init__(message, **kw)


class NotFoundError(APIStatusError):
    """404: unknown route or a model the server does not serve."""


class RateLimitError(APIStatusError):
    """429 after every retry: `retry_after` is the server's last advice in seconds, if any."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kw: Any):
        self.retry_after = retry_after
        super().__init__(message, **kw)


class ServiceUnavailable(APIStatusError):
    """5xx (including 529 overloaded) after every retry."""


def error_summary(exc: BaseException) -> str:
    """What a decision (and so the audit log) records of a failure: the error's type and its
    message, except that an error status keeps only the status and request id. The body an
    upstream sent is left out: one that echoes the request would copy the caller's state into a
    log that deliberately holds none. The exception itself keeps the body (`error.body`)."""
    if isinstance(exc, APIStatusError):
        rid = f" (request {exc.request_id})" if exc.request_id else ""
        return f"{type(exc).__name__}: HTTP {exc.status_code}{rid}"
    return f"{type(exc).__name__}: {exc}"


class ModelError(JudgeError):
    """A local model failed while running (onnxruntime error, malformed output)."""


# --------------------------------------------------------------------------- storage


class StorageError(SeamsError):
    """A SQLite file seams keeps (review queue, answer cache) is damaged or cannot be read or written."""


class CacheError(StorageError, JudgeError):
    """The answer cache's file is damaged or unusable. A `JudgeError` too: a rubric's `on_error`
    decides, as for any judge that cannot answer, rather than a sqlite3 error escaping `decide`."""


# --------------------------------------------------------------------------- cassettes


class CassetteError(SeamsError):
    """A cassette file cannot be used: a corrupt line, or a mode that needs a judge has none."""


class CassetteMiss(CassetteError, LookupError):
    """A replayed cassette holds no interaction for this request.

    Deliberately not a `JudgeError`: a policy's `on_error` must not turn a test that forgot to
    record into a fail-closed decision; the test should fail loudly instead.
    """


# --------------------------------------------------------------------------- gates and review


class GateError(SeamsError):
    """A gated call did not run as written: refused by its policy, or deferred to review."""

    def __init__(self, message: str, *, decision: Any = None) -> None:
        self.decision = decision
        super().__init__(message)


class Refused(GateError):
    """A gate's policy refused the call; `decision` says which rule, number and threshold."""


class Deferred(GateError):
    """The decision was not automatic and the call was queued for a person; `item_id` names it."""

    def __init__(self, message: str, *, decision: Any = None, item_id: int | None = None) -> None:
        self.item_id = item_id
        super().__init__(message, decision=decision)


class QueueError(SeamsError):
    """A review-queue operation is invalid: an unknown item, a lease held by someone else."""


class QueueFull(QueueError):
    """The review queue holds as many open items as its capacity; nothing was added."""

    def __init__(self, message: str, *, open_items: int, capacity: int) -> None:
        self.open_items = open_items
        self.capacity = capacity
        super().__init__(message)


# --------------------------------------------------------------------------- warnings


class CalibrationWarning(UserWarning):
    """A rubric's calibration is stale for the model it runs on, so it was not applied."""


class MovingAliasWarning(UserWarning):
    """A calibrated rubric runs on a moving model alias (`jev-latest`, `*-preview`): the model
    behind it can change under the fitted thresholds."""


# --------------------------------------------------------------------------- pydantic's errors


@dataclass(frozen=True)
class ValidationProblem:
    """One of pydantic's validation errors as seams words it: where (`loc`, `field`) and what."""

    loc: tuple[str | int, ...]
    message: str
    type: str

    @property
    def field(self) -> str:
        """The dotted path of the field (`policy.rules.0.high`); empty for the whole value."""
        return ".".join(str(p) for p in self.loc)


def validation_problems(exc: ValidationError) -> list[ValidationProblem]:
    """pydantic's errors, translated once for every caller that maps them to a seams error:
    without pydantic's "Value error, " prefix, and an unknown key, a missing key or an unknown
    question type named as such."""
    out = []
    for e in exc.errors(include_url=False):
        loc = tuple(e["loc"])
        msg = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden" and loc:
            msg = f"unknown key {loc[-1]!r}"
        elif e["type"] == "missing" and loc:
            msg = f"missing required key {loc[-1]!r}"
        elif e["type"] == "union_tag_invalid" and isinstance(e.get("input"), dict):
            msg = f"unknown question type {e['input'].get('type')!r}; allowed: noul, choice, score"
        out.append(ValidationProblem(loc, msg, e["type"]))
    return out


__all__ = [
    "APIStatusError",
    "AuthenticationError",
    "CacheError",
    "CalibrationWarning",
    "CassetteError",
    "CassetteMiss",
    "ConfigError",
    "Deferred",
    "GateError",
    "HeadMismatch",
    "InputError",
    "JudgeError",
    "JudgeTimeout",
    "LabelledSetError",
    "ModelError",
    "MovingAliasWarning",
    "NotFoundError",
    "OptionError",
    "ProtocolError",
    "QuestionError",
    "QueueError",
    "QueueFull",
    "RateLimitError",
    "Refused",
    "RequestValidationError",
    "RubricError",
    "SeamsError",
    "ServiceUnavailable",
    "StateError",
    "StorageError",
    "TransportError",
    "ValidationProblem",
    "error_summary",
    "validation_problems",
]
