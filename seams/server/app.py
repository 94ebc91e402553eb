"""A System One server over any judge: `create_app(judge)` is the ASGI app `seams serve` runs.

What a client of the protocol (the official SDK, jevcompat, seams' own remote judge) can rely on:

* `POST /v1/systemone` answers a valid request with 200 and the protocol's response; the answers'
  extra fields are `x_` prefixed, and so are the envelope's (`x_latency_ms`, `x_windows`).
* `GET /v1/models` lists the judge's model and the names it answers to (`jev-latest`, so clients
  that default to it work unchanged).
* Bad input is never a 5xx: a body that is not JSON or breaks a limit is a 422 with
  `{"detail": [{"loc": ["body", ...], "msg", "type"}]}`, validated by the same `seams.questions`
  models the library uses (one set of limits); an unknown model is a 404, a body over the size
  limit a 413, a wrong or missing key a 401, each with `{"detail": {"error_type", "message"}}`.
  A 5xx means the judge itself failed (a model error, an upstream outage behind a remote judge),
  or, 529, that the server is overloaded and the request never started.
* The work of one request is bounded: its model runs (`max_pairs`) and the tokens they read
  (`max_tokens`, what its time is proportional to), a 422 beyond either before anything runs; its
  time (`request_timeout`, a 504) and its client (work stops when the client disconnects); its
  body must arrive within `body_timeout` (a 408 otherwise).
* Load is bounded: at most `concurrency` requests compute at once; the rest wait their turn in
  arrival order, and one that waits longer than `queue_timeout` is answered 529 (the protocol's
  "overloaded", with `retry-after`) rather than computing into its deadline.
* Request bodies may be compressed with `Content-Encoding: zstd` (the official SDK sends bodies
  of 1 KiB and more that way) or gzip/deflate; the size limit holds for the decoded body too, so
  a small compressed body cannot expand into an unbounded one.

FastAPI is imported here and nowhere in the core, so the library works without the `[serve]`
extra.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import time
from collections.abc import Callable, Coroutine, Sequence
from datetime import date
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator
from starlette.exceptions import HTTPException as StarletteHTTPException

from .._content import BadEncoding, TooLarge, decode_bounded
from ..answers import Answers
from ..errors import (
    APIStatusError,
    InputError,
    JudgeError,
    JudgeTimeout,
    ModelError,
    QuestionError,
    RateLimitError,
    StateError,
)
from ..judges.base import Judge, JudgeLike, as_judge
from ..limits import work_limits
from ..questions import Question, question_id_problem
from ..state import MAX_DEPTH, json_problem

log = logging.getLogger("seams.server")

#: The model name the official SDKs send by default; always accepted.
JEV_LATEST = "jev-latest"
#: Bodies larger than this (compressed or decoded) get 413. System One's budget is about 64k
#: tokens per request; 4 MiB leaves room for 255 described options and structured states.
DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
#: The most model runs (hypotheses × windows) one request may cost; more is a 422 naming it.
#: A 255-option Choice on a one-window state is 255; on a 1k-token state, about 765.
DEFAULT_MAX_PAIRS = 512
#: The most tokens one request's model runs may read in all (pairs × their lengths); more is a
#: 422. A model's time is about proportional to it; `seams serve` sizes it from a measured run
#: (`seams.server.sizing`), so this default is for `create_app` callers who do not.
DEFAULT_MAX_TOKENS = 65_536
#: Seconds a request may compute before the work is stopped and a 504 answered.
DEFAULT_REQUEST_TIMEOUT = 30.0
#: Seconds the whole request body may take to arrive; a slower one (or a Content-Length longer
#: than the body sent) is answered 408 rather than holding a connection and a task.
DEFAULT_BODY_TIMEOUT = 10.0
_ANSWER_FIELDS = {
    "noul": {"type", "noul"},
    "choice": {"type", "choice", "probabilities", "confidence"},
    "score": {"type", "score", "legend", "probabilities", "confidence"},
}


class SystemOneRequest(BaseModel):
    """The request body. Unknown top-level fields are ignored, as the protocol asks."""

    model_config = ConfigDict(extra="ignore")

    model: str | None = None
    state: str | dict[str, Any] | list[Any]
    questions: dict[str, Question]

    @field_validator("questions")
    @classmethod
    def _some_questions(cls, value: dict[str, Any]) -> dict[str, Any]:
        if not value:
            raise ValueError("at least one question is required")
        for qid in value:
            problem = question_id_problem(qid)
            if problem is not None:
                raise ValueError(problem)
        return value


class _Problem(Exception):
    """An error answered with `{"detail": {"error_type", "message"}}`."""

    def __init__(self, status: int, error_type: str, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.error_type, self.message, self.headers = status, error_type, message, headers


class _Invalid(Exception):
    """A request that fails validation: 422 with pydantic-style `detail` items."""

    def __init__(self, errors: list[dict[str, Any]]):
        super().__init__(errors)
        self.errors = errors


def _item(loc: Sequence[Any], msg: str, type_: str) -> dict[str, Any]:
    return {"loc": ["body", *loc], "msg": msg, "type": type_}


def create_app(
    judge: Judge | JudgeLike,
    *,
    api_key: str | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    model_names: Sequence[str] = (),
    max_pairs: int | None = DEFAULT_MAX_PAIRS,
    max_tokens: int | None = DEFAULT_MAX_TOKENS,
    request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT,
    body_timeout: float = DEFAULT_BODY_TIMEOUT,
    concurrency: int | None = None,
    queue_timeout: float | None = None,
) -> FastAPI:
    """A FastAPI app serving System One over `judge`.

    Parameters
    ----------
    judge:
        Any judge; its `aask` is awaited, so a synchronous judge runs in a worker thread.
    api_key:
        When set, every request must carry `Authorization: Bearer <api_key>`. When None, requests
        are answered whatever Authorization header they carry (clients always send one).
    max_body_bytes:
        The largest request body accepted, before and after decompression.
    model_names:
        Extra names the server answers to, beside `jev-latest` and the judge's own model id.
    max_pairs:
        The most model runs one request may cost (a local judge counts hypotheses × windows
        before running any); more is a 422 naming the limit. None for no limit.
    max_tokens:
        The most tokens one request's model runs may read, summed over its pairs (a local judge
        counts them as it plans, before running any); more is a 422 naming the limit. None for
        no limit.
    request_timeout:
        Seconds a request may compute; then its work is stopped and a 504 answered. Work also
        stops when the client disconnects. None for no limit.
    body_timeout:
        Seconds the request body may take to arrive; a slower one gets 408.
    concurrency:
        The most requests whose judge work runs at once; None for no bound. A local judge's runs
        share the machine's cores, so more at once makes each slower and none sooner.
    queue_timeout:
        Seconds a request may wait for its turn (with `concurrency`) before it is answered 529 with
        `retry-after`; the wait counts against `request_timeout` too. None: half of
        `request_timeout` (or no limit when that is None).
    """
    judge = as_judge(judge)
    if max_body_bytes < 1:
        raise ValueError("max_body_bytes must be positive")
    if not body_timeout > 0:
        raise ValueError("body_timeout must be positive")
    if api_key is not None and not api_key.strip():
        raise ValueError("api_key is empty; pass None to serve without a key")
    if concurrency is not None and concurrency < 1:
        raise ValueError("concurrency must be at least 1 (or None for no bound)")
    if queue_timeout is not None and not queue_timeout > 0:
        raise ValueError("queue_timeout must be a positive number of seconds (or None)")
    if queue_timeout is None and request_timeout is not None:
        queue_timeout = request_timeout / 2
    turns = _Turns(concurrency, queue_timeout) if concurrency is not None else None
    names = list(dict.fromkeys([judge.model_id, JEV_LATEST, *model_names]))
    app = FastAPI(title="seams — System One", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.judge = judge
    _install_handlers(app)

    def authenticate(request: Request) -> None:
        if api_key is None:
            return
        header = request.headers.get("authorization")
        challenge = {"WWW-Authenticate": "Bearer"}
        if not header:
            raise _Problem(401, "authentication_error", "missing API key: send Authorization: Bearer <key>", challenge)
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(), api_key.encode()):
            raise _Problem(401, "authentication_error", "invalid API key", challenge)

    @app.get("/v1/models")
    async def list_models(request: Request) -> JSONResponse:
        authenticate(request)
        card = _model_card(judge)
        models = [{"name": judge.model_id, **card}]
        models += [
            {"name": name, **card, "description": f"alias of {judge.model_id}: {card['description']}"}
            for name in names[1:]
        ]
        return JSONResponse({"models": models})

    @app.post("/v1/systemone")
    async def system_one(request: Request) -> JSONResponse:
        authenticate(request)
        if request.headers.get("content-type", "").lower().startswith("multipart/"):
            raise _Problem(415, "unsupported_media_type",
                           "this server takes JSON bodies; assets (images) are not supported by its judge")
        raw = await _read_body(request, max_body_bytes, body_timeout)
        body = _decode(raw, request.headers.get("content-encoding"), max_body_bytes)
        parsed = _validate(body)
        if parsed.model is not None and parsed.model not in names:
            raise _Problem(
                404, "not_found_error",
                f"model {parsed.model!r} is not served here; available: {', '.join(names)}",
            )
        try:
            if turns is not None:  # a request too large to answer is refused before it waits for a turn
                with work_limits(max_pairs=max_pairs, max_tokens=max_tokens):
                    await asyncio.to_thread(judge.check_limits, parsed.state, parsed.questions)
            answers = await _bounded(request, lambda: judge.aask(parsed.state, parsed.questions), turns,
                                     max_pairs=max_pairs, max_tokens=max_tokens, timeout=request_timeout)
        except InputError as exc:
            raise _Invalid([_input_error_item(exc)]) from None
        return JSONResponse(_response(answers))

    return app


class _Turns:
    """At most `slots` judge calls at once; the others wait in arrival order, each at most `wait`
    seconds. A turn is given back when its task ends; work a request gave up on is cancelled
    through its limits too, so a local judge's thread stops at its next batch."""

    def __init__(self, slots: int, wait: float | None) -> None:
        self.slots, self.wait = slots, wait
        self._free = asyncio.Semaphore(slots)
        self.waiting = 0

    async def take(self, gone: asyncio.Future[Any], budget: float | None) -> None:
        """Wait for a turn; 529 after `wait` seconds (or `budget`, what is left of the request's
        time, if sooner); `JudgeTimeout` if the client hangs up first."""
        bounds = [x for x in (self.wait, budget) if x is not None]
        limit = min(bounds) if bounds else None
        self.waiting += 1
        turn: asyncio.Future[Any] = asyncio.ensure_future(self._free.acquire())
        try:
            done, _ = await asyncio.wait({turn, gone}, timeout=limit, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            self._abandon(turn)
            raise
        finally:
            self.waiting -= 1
        if turn in done:
            return
        self._abandon(turn)
        if gone in done:
            raise JudgeTimeout("the judge did not answer in time: the client disconnected while it waited its turn")
        retry = max(1, round(limit or 1))
        raise _Problem(529, "overloaded_error",
                       f"the server is busy: {self.slots} request(s) computing and {self.waiting} waiting; this one "
                       f"waited {limit or 0:g}s for its turn. Retry after {retry}s.", {"retry-after": str(retry)})

    def give_back(self, _: object = None) -> None:
        self._free.release()

    def _abandon(self, turn: asyncio.Future[Any]) -> None:
        """Cancel a wait; a turn granted in the same instant is given back, not leaked."""
        if turn.done() and not turn.cancelled():
            self.give_back()
        else:
            turn.cancel()
            turn.add_done_callback(lambda t: None if t.cancelled() else self.give_back())


async def _bounded(request: Request, work: Callable[[], Coroutine[Any, Any, Answers]], turns: _Turns | None, *,
                   max_pairs: int | None, max_tokens: int | None, timeout: float | None) -> Answers:
    """Run a judge call under the request's limits: its turn (with `turns`), its size, and its
    deadline, stopping it at the deadline or when the client goes away (a judge in a worker
    thread sees `cancel` at its next batch). The wait for a turn counts against the deadline."""
    start = time.monotonic()
    gone = asyncio.ensure_future(_disconnected(request))
    try:
        if turns is not None:
            await turns.take(gone, timeout)
        left = None if timeout is None else max(timeout - (time.monotonic() - start), 0.001)
        with work_limits(max_pairs=max_pairs, max_tokens=max_tokens, timeout=left) as limits:
            task = asyncio.ensure_future(work())  # the task copies the context, limits included
        if turns is not None:
            task.add_done_callback(turns.give_back)
        try:
            done, _ = await asyncio.wait({task, gone}, timeout=left, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:  # the server itself is cancelling this request (shutting down)
            limits.cancel("the server stopped the request")
            task.cancel()
            raise
    finally:
        gone.cancel()
    if task in done:
        return task.result()
    why = "the client disconnected" if gone in done else f"the request ran past the server's timeout of {timeout:g}s"
    limits.cancel(why)
    task.cancel()
    task.add_done_callback(_drain)
    raise JudgeTimeout(f"the judge did not answer in time: {why}")


async def _disconnected(request: Request) -> None:
    """Return when the client hangs up (the body is read by now, so only that message is left)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


def _drain(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()  # retrieved, so an abandoned failure is not logged as never retrieved


# ---------------------------------------------------------------------- request reading


async def _read_body(request: Request, limit: int, timeout: float) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(int(declared), limit)
    chunks, size = [], 0
    try:
        async with asyncio.timeout(timeout):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise _too_large(size, limit, at_least=True)
                chunks.append(chunk)
    except TimeoutError:
        raise _Problem(408, "request_timeout", f"the request body did not arrive within {timeout:g}s "
                       f"({size} bytes came); send the whole body at once") from None
    return b"".join(chunks)


def _too_large(size: int, limit: int, *, at_least: bool = False, decoded: bool = False) -> _Problem:
    what = "decoded request body" if decoded else "request body"
    amount = f"more than {limit}" if at_least else str(size)
    return _Problem(413, "request_too_large", f"{what} is {amount} bytes; this server accepts at most {limit}")


def _decode(raw: bytes, encoding: str | None, limit: int) -> bytes:
    """Undo `Content-Encoding`, never producing more than `limit` bytes."""
    try:
        return decode_bounded(raw, encoding, limit)
    except TooLarge:
        raise _too_large(0, limit, at_least=True, decoded=True) from None
    except BadEncoding as exc:
        if exc.unsupported:
            raise _Problem(415, "unsupported_media_type", str(exc)) from None
        raise _Problem(400, "invalid_request_error", str(exc)) from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _validate(body: bytes) -> SystemOneRequest:
    try:
        data = json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
    except UnicodeDecodeError as exc:
        raise _Invalid([_item([], f"the body is not UTF-8: {exc.reason} at byte {exc.start}", "json_invalid")]) from None
    except json.JSONDecodeError as exc:
        raise _Invalid([_item([exc.pos], f"JSON decode error: {exc.msg}", "json_invalid")]) from None
    except ValueError as exc:  # NaN / Infinity
        raise _Invalid([_item([], str(exc), "json_invalid")]) from None
    except RecursionError:
        raise _Invalid([_item([], f"the body is nested too deeply; a state or question may nest at most "
                                  f"{MAX_DEPTH} levels (seams.state.MAX_DEPTH)", "json_invalid")]) from None
    if not isinstance(data, dict):
        raise _Invalid([_item([], f"the body must be a JSON object, got {type(data).__name__}", "model_attributes_type")])
    for part in ("state", "questions"):  # a lone surrogate or deep nesting, refused before any model reads it
        problem = json_problem(data.get(part), part)
        if problem is not None:
            raise _Invalid([_item([part], problem, "value_error")])
    try:
        return SystemOneRequest.model_validate(data)
    except ValidationError as exc:
        raise _Invalid(
            [_item(list(e["loc"]), e["msg"], e["type"]) for e in exc.errors(include_url=False)]
        ) from None


def _input_error_item(exc: InputError) -> dict[str, Any]:
    loc = ["state"] if isinstance(exc, StateError) else ["questions"] if isinstance(exc, QuestionError) else []
    return _item(loc, str(exc), "value_error")


# ---------------------------------------------------------------------- responses


def _response(answers: Answers) -> dict[str, Any]:
    out: dict[str, Any] = {
        "model": answers.model,
        "answers": {qid: _answer(a.model_dump(mode="json")) for qid, a in answers.answers.items()},
        "usage": {"input_tokens": answers.usage.input_tokens, "output_tokens": answers.usage.output_tokens},
        "x_latency_ms": round(answers.latency_ms, 3),
    }
    if answers.windows > 1:
        out["x_windows"] = answers.windows
    return out


def _answer(dumped: dict[str, Any]) -> dict[str, Any]:
    """The protocol's fields and `x_` extras only; anything else a judge attached is dropped."""
    known = _ANSWER_FIELDS.get(dumped.get("type", ""), set())
    return {k: v for k, v in dumped.items() if k in known or k.startswith("x_")}


def _model_card(judge: Judge) -> dict[str, str]:
    description = judge.description or f"seams judge {judge.model_id}"
    released = judge.release_date or date.today().isoformat()
    return {"description": str(description), "release_date": str(released)}


class _ErrorResponse(JSONResponse):
    """An error body that always encodes: messages may quote input, and input may hold a lone
    surrogate, which `JSONResponse`'s UTF-8 rendering cannot encode (that would be a 500)."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


def _error(status: int, error_type: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return _ErrorResponse({"detail": {"error_type": error_type, "message": message}}, status_code=status,
                          headers=headers)


def _install_handlers(app: FastAPI) -> None:
    @app.exception_handler(_Problem)
    async def _problem(_: Request, exc: _Problem) -> JSONResponse:
        return _error(exc.status, exc.error_type, exc.message, exc.headers)

    @app.exception_handler(_Invalid)
    async def _invalid(_: Request, exc: _Invalid) -> JSONResponse:
        return _ErrorResponse({"detail": exc.errors}, status_code=422)

    @app.exception_handler(RequestValidationError)
    async def _fastapi_invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        items = [{"loc": list(e.get("loc", ["body"])), "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))}
                 for e in exc.errors()]
        return _ErrorResponse({"detail": items}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        kind = {404: "not_found_error", 405: "method_not_allowed"}.get(exc.status_code, "invalid_request_error")
        return _error(exc.status_code, kind, str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(JudgeError)
    async def _judge_failed(_: Request, exc: JudgeError) -> JSONResponse:
        # The judge, not the request, failed: a 5xx tells clients they may retry.
        log.warning("judge failed: %s", exc)
        if isinstance(exc, RateLimitError):
            headers = {"retry-after": str(int(exc.retry_after))} if exc.retry_after else None
            return _error(429, "rate_limit_error", str(exc), headers)
        if isinstance(exc, JudgeTimeout):
            return _error(504, "timeout_error", str(exc))
        if isinstance(exc, APIStatusError):
            return _error(502, "upstream_error", str(exc))
        if isinstance(exc, ModelError):  # its message names files and onnxruntime's words: log only
            return _error(500, "model_error", "the model failed while answering; the server log has the details")
        return _error(502, "judge_error", str(exc))

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        # The body never names the exception: that is the server's business, and its log's.
        log.exception("unexpected error while answering a request")
        return _error(500, "internal_error", "the server failed while answering; its log has the details")


__all__ = [
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_PAIRS",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_REQUEST_TIMEOUT",
    "JEV_LATEST",
    "SystemOneRequest",
    "create_app",
]
