"""`RemoteJudge`: any System One server over httpx (TypeSafe, OpenRouter, another `seams serve`).

Sync and async mirror each other name for name (`ask`/`aask`, `ask_many`/`aask_many`,
`list_models`/`alist_models`, `close`/`aclose`). What the client guarantees:

* **Nothing bad is sent.** The state and the questions are validated, and the request is sized
  against the protocol's token budgets, before the first byte leaves; a missing key for a hosted
  service is a `ConfigError` at construction.
* **One request per state.** Every question about a state goes in one request; a request is split
  only when state + questions would pass the protocol's 64k-token budget.
* **Retries that respect the server and the caller.** 408, 429, 5xx and connection errors are
  retried with jittered exponential backoff (`seams.judges._retry`), honouring `retry-after-ms`
  and `retry-after`, inside one total time budget.
* **Typed errors, never a dependency's.** httpx errors and error statuses map to `seams.errors`
  at this boundary (the table is in `docs/remote-judge.md`).
* **Strict answers.** A 200 whose body is not JSON, carries NaN/Infinity, lacks `model`,
  `answers` or integer `usage`, or whose answers break the protocol (checked by
  `seams.answers.parse_answers`) is a `ProtocolError`: never an answer.

Deliberate leniency, where the protocol only says SHOULD: a JSON body under a non-JSON
`Content-Type`, and unprefixed extra top-level fields, are accepted and the extras ignored.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import math
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import Any, Literal, NoReturn, Self
from urllib.parse import urlsplit
from urllib.request import getproxies

import httpx
import zstandard

from ..answers import Answers, Usage, parse_answers
from ..errors import (
    APIStatusError,
    AuthenticationError,
    ConfigError,
    JudgeTimeout,
    NotFoundError,
    ProtocolError,
    RateLimitError,
    RequestValidationError,
    SeamsError,
    ServiceUnavailable,
    TransportError,
)
from ..settings import API_KEY_ENV, settings
from ..version import __version__
from ._bounded import MAX_RESPONSE_BYTES, aread_bounded, read_bounded, within
from ._deadline import DeadlineTransport, deadline_at
from ._retry import RETRY_STATUSES, Attempts, RetryPolicy, retry_after_seconds
from ._wire import WireQuestion, encode_body, encode_model, encode_state, prepare_questions, split_questions
from .base import Judge

DEFAULT_BASE_URL = "https://api.typesafe.ai"
DEFAULT_MODEL = "jev-latest"
#: Hosted services that always need a key: asking them without one can only fail.
KEYED_HOSTS = ("typesafe.ai", "openrouter.ai")
SYSTEM_ONE_PATH = "/v1/systemone"
MODELS_PATH = "/v1/models"
REQUEST_ID_HEADER = "x-typesafe-request-id"
#: Bodies under this size fit one TCP segment; compressing them saves nothing (the SDK's rule).
MIN_COMPRESSED_BODY = 1024
_COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    "zstd": lambda data: zstandard.ZstdCompressor().compress(data),
    "gzip": lambda data: gzip.compress(data, compresslevel=6),
}


# --------------------------------------------------------------------------- responses


def _reject_constant(name: str) -> NoReturn:
    raise ProtocolError(
        f"response body contains {name}, which is not JSON (System One forbids NaN and Infinity)"
    )


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are all distinct: a repeated key is read one way by one parser and
    another way by the next, so an answer under it cannot be trusted."""
    out = dict(pairs)
    if len(out) != len(pairs):
        repeated = sorted(k for k, n in Counter(k for k, _ in pairs).items() if n > 1)
        raise ProtocolError(f"response body repeats the key(s) {repeated} in one object; JSON keys must be unique")
    return out


_loads = json.JSONDecoder(parse_constant=_reject_constant, object_pairs_hook=_unique_keys).decode


def _decode_json(content: bytes, what: str) -> Any:
    """Parse a body strictly. Messages never quote it: an upstream that echoes the request would
    put the caller's state into every log line that records the error."""
    try:
        return _loads(content.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ProtocolError(f"{what} is not UTF-8 (invalid byte at {e.start} of {len(content)})") from None
    except json.JSONDecodeError as e:
        raise ProtocolError(f"{what} is not JSON ({e.msg} at {e.pos} of {len(content)} bytes)") from None
    except RecursionError:
        raise ProtocolError(f"{what} is nested too deeply to be a System One response") from None


def _is_count(value: Any) -> bool:
    return type(value) is int and value >= 0


def read_response(content: bytes, questions: Mapping[str, Any]) -> tuple[str, dict[str, Any], Usage]:
    """Read a 200 System One body strictly: (served model, answers by id, usage)."""
    body = _decode_json(content, "response body")
    if not isinstance(body, dict):
        raise ProtocolError(f"response body is a JSON {type(body).__name__}, not an object")
    missing = [k for k in ("model", "answers", "usage") if k not in body]
    if missing:
        raise ProtocolError(
            f"response is missing {', '.join(missing)} (System One requires model, answers and usage)"
        )
    model = body["model"]
    if not isinstance(model, str) or not model:
        raise ProtocolError(f"response model is {model!r}, not a non-empty string")
    usage = body["usage"]
    if not isinstance(usage, dict):
        raise ProtocolError(f"response usage is a {type(usage).__name__}, not an object")
    for key in ("input_tokens", "output_tokens"):
        if not _is_count(usage.get(key)):
            raise ProtocolError(f"usage.{key} is {usage.get(key)!r}, not a non-negative JSON integer")
    answers = parse_answers(questions, body["answers"])
    return model, answers, Usage.model_validate(usage)


def _message(body: Any, fallback: str) -> str:
    """The human message of an error body, in the shapes servers actually send."""
    if isinstance(body, str):
        return body.strip()[:300] or fallback
    if not isinstance(body, dict):
        return fallback
    detail = body.get("detail")
    if isinstance(detail, dict) and isinstance(detail.get("message"), str):
        return detail["message"]
    if isinstance(detail, str):
        return detail
    if isinstance(detail, list):
        parts = [f"{_loc(d.get('loc'))}: {d.get('msg')}" for d in detail if isinstance(d, dict)]
        return "; ".join(parts) or fallback
    for key in ("message", "error"):
        value = body.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, dict) and isinstance(value.get("message"), str):
            return value["message"]
    return fallback


def _loc(loc: Any) -> str:
    if not isinstance(loc, list):
        return str(loc)
    return ".".join(str(p) for p in loc if p != "body") or "body"


def _error_body(response: httpx.Response) -> Any:
    content = response.content
    if not content:
        return None
    try:
        return json.loads(content)
    except (ValueError, UnicodeDecodeError):
        return content.decode("utf-8", "replace")


def status_error(response: httpx.Response) -> APIStatusError | JudgeTimeout:
    """The typed error for a non-200 response (before any retry decision).

    408 is the server timing out on the request, so it ends as a `JudgeTimeout` like a timeout
    of our own; every other status is an `APIStatusError` subclass carrying status and body.
    """
    status = response.status_code
    body = _error_body(response)
    reason = response.reason_phrase or "error"
    message = _message(body, reason)
    kw: dict[str, Any] = {
        "status_code": status,
        "body": body,
        "request_id": response.headers.get(REQUEST_ID_HEADER),
    }
    if status == 408:
        return JudgeTimeout(f"HTTP 408: {reason}")
    if status in (401, 403):
        return AuthenticationError(f"{message} (check the API key)", **kw)
    if status == 404:
        return NotFoundError(message, **kw)
    if status == 422:
        detail = body.get("detail") if isinstance(body, dict) else None
        errors = [d for d in detail if isinstance(d, dict)] if isinstance(detail, list) else []
        return RequestValidationError(f"request rejected: {message}", errors=errors, **kw)
    if status == 429:
        after = retry_after_seconds(response.headers)
        note = f" (the server asks to retry after {after:g}s)" if after is not None else ""
        return RateLimitError(message + note, retry_after=after, **kw)
    if status >= 500:
        return ServiceUnavailable(message, **kw)
    return APIStatusError(message, **kw)


def _with_attempts(error: SeamsError, attempts: Attempts) -> SeamsError:
    """Say how hard we tried: the caller reads it in the message, tools read `error.attempts`."""
    error.attempts = attempts.count
    if attempts.count > 1:
        note = f" (after {attempts.count} attempts in {attempts.elapsed():.2f}s)"
        error.args = (f"{error.args[0]}{note}", *error.args[1:]) if error.args else (note.strip(),)
    return error


def _timeout_error(
    method: str, url: httpx.URL, exc: Exception, last: SeamsError | None, cut_by_budget: bool
) -> SeamsError:
    """The error to keep after an attempt timed out.

    When the attempt only had the budget's last sliver and the server had already answered with
    an error status (a 529, a 429), that answer is the real reason the call failed: keep it,
    rather than reporting a timeout the budget itself caused.
    """
    if cut_by_budget and isinstance(last, APIStatusError):
        return last
    return JudgeTimeout(f"{method} {url} timed out: {type(exc).__name__}")


def _budget_error(attempts: Attempts, last: SeamsError | None) -> SeamsError:
    if last is not None and not isinstance(last, TransportError):
        return last
    err = JudgeTimeout(
        f"the retry budget of {attempts.policy.total_budget:g}s ran out"
        + (f"; last error: {last}" if last is not None else "")
    )
    return err


def _failed_attempt(
    attempts: Attempts, method: str, url: httpx.URL, outcome: httpx.Response | Exception,
    last: SeamsError | None, cut_by_budget: bool,
) -> tuple[SeamsError, float]:
    """What one failed attempt means: the error to keep and the wait before the next try.

    The one place the sync and async loops decide: raises the typed error when the call must
    stop (a status that is not worth retrying, a URL that can never work, retries or budget
    spent), else returns the error to remember and how long to sleep.
    """
    advised: float | None = None
    if isinstance(outcome, httpx.Response):
        error = status_error(outcome)
        if outcome.status_code not in RETRY_STATUSES:
            raise _with_attempts(error, attempts)
        advised = retry_after_seconds(outcome.headers)
    elif isinstance(outcome, httpx.TimeoutException):
        error = _timeout_error(method, url, outcome, last, cut_by_budget)
    elif isinstance(outcome, (httpx.UnsupportedProtocol, httpx.InvalidURL)):
        raise ConfigError(f"cannot reach {url}: {outcome}") from None
    else:
        error = TransportError(f"{method} {url} failed: {type(outcome).__name__}: {outcome}")
    wait = attempts.next_wait(advised)
    if wait is None:
        raise _with_attempts(error, attempts)
    return error, wait


#: A retry is not started with less of the budget left than this: it could not get an answer back
#: in time, and an attempt cut off mid-connect or mid-send would count as tried without reaching
#: the server.
MIN_RETRY_S = 0.05


def _next_attempt(attempts: Attempts, last: SeamsError | None) -> float:
    """Start another attempt and return the budget left for it, or raise when none is left."""
    remaining = attempts.remaining()
    if remaining <= 0 or (attempts.count and remaining < MIN_RETRY_S):
        raise _with_attempts(_budget_error(attempts, last), attempts)
    attempts.count += 1
    return remaining


class _Prepared:
    """One validated request: encoded state, wired questions, and how they split into requests."""

    __slots__ = ("groups", "state_json", "wired")

    def __init__(self, state: Any, questions: Mapping[str, Any]) -> None:
        self.wired: dict[str, WireQuestion] = prepare_questions(questions)
        self.state_json = encode_state(state)
        self.groups = split_questions(self.state_json, self.wired)

    def questions(self, ids: list[str]) -> dict[str, Any]:
        return {qid: self.wired[qid].question for qid in ids}


def _combine(prepared: _Prepared, parts: list[tuple[str, dict[str, Any], Usage]], started: float) -> Answers:
    latency_ms = (time.perf_counter() - started) * 1000
    if len(parts) == 1:
        model, answers, usage = parts[0]
    else:
        models = {p[0] for p in parts}
        if len(models) > 1:
            raise ProtocolError(
                f"a split request was answered by different models {sorted(models)}; the answers "
                "cannot be combined into one decision"
            )
        model = parts[0][0]
        merged = {qid: a for p in parts for qid, a in p[1].items()}
        answers = {qid: merged[qid] for qid in prepared.wired}
        usage = Usage(
            input_tokens=sum(p[2].input_tokens for p in parts),
            output_tokens=sum(p[2].output_tokens for p in parts),
        )
    # Every answer was validated by parse_answers; skip revalidating the envelope.
    return Answers.model_construct(
        model=model, answers=answers, usage=usage, latency_ms=latency_ms, windows=1
    )


# --------------------------------------------------------------------------- the judge


class RemoteJudge(Judge):
    """A judge backed by a System One server.

    Parameters
    ----------
    model
        The model to ask; default `TYPESAFE_DEFAULT_MODEL` or `jev-latest`. This is `model_id`
        (what calibrations are tied to); the id the server reports having served is in
        `Answers.model`.
    base_url
        Server root; default `TYPESAFE_BASE_URL` or `https://api.typesafe.ai`. A local
        `seams serve` is `http://127.0.0.1:PORT`.
    api_key
        Bearer key; default `TYPESAFE_API_KEY`. Required for the hosted services (TypeSafe,
        OpenRouter), optional for any other base URL.
    timeout
        Seconds for one attempt (connect, send, wait, read). 10 s, like the official SDK: an
        answer takes well under a second, so a longer wait is a stuck connection.
    retry
        A `RetryPolicy`: retries after the first attempt, the backoff, and the total budget for
        one call, retries and waits included (default `RetryPolicy()`: 3 retries, 0.5–8 s
        backoff, 60 s).
    max_concurrency
        Requests in flight at once from `aask`/`ask_many` fan-out; beyond it calls queue.
    client, async_client
        Your own `httpx.Client` / `httpx.AsyncClient`: the one injection point per client, as
        httpx has. Proxies, TLS, auth, event hooks and a transport (`httpx.MockTransport` in
        tests, a `WSGITransport`, custom retries at the connection level) are the client's own
        settings: `client=httpx.Client(transport=...)`. Used as given and left open: whoever
        creates a client closes it. None: the judge makes (and closes) its own.
    headers
        Extra headers for every request.
    compression
        ``"zstd"`` or ``"gzip"`` to compress request bodies of 1 KiB and more (long states), as
        the official SDK does with zstd; off by default, because not every System One server
        decodes compressed bodies (TypeSafe and `seams serve` do; `jevcompat mock` does not).
    max_response_bytes
        The largest response body read, before and after decoding (4 MiB); a larger one is a
        `ProtocolError`, read no further. An answer is a few KB.

    `timeout` and the retry budget hold against a server that trickles its answer: each attempt
    has one deadline for its whole exchange, not a read timeout that restarts with every byte.
    Async, and sync on the client this judge makes, it is exact, status line and headers
    included. With your own sync `client`, or an environment proxy, only the
    body is held to it (checked as each chunk arrives): the head waits on httpx's read timeout.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 10.0,
        retry: RetryPolicy | None = None,
        max_concurrency: int = 16,
        client: httpx.Client | None = None,
        async_client: httpx.AsyncClient | None = None,
        headers: Mapping[str, str] | None = None,
        compression: Literal["zstd", "gzip"] | None = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        **removed: Any,
    ) -> None:
        _refuse_removed(removed)
        env = settings()
        self._model = (model or env.default_model or DEFAULT_MODEL).strip()
        base = (base_url or env.base_url or DEFAULT_BASE_URL).rstrip("/")
        parts = urlsplit(base)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"base_url must be an http(s) URL such as {DEFAULT_BASE_URL!r}, got {base!r}")
        self._base_url = base
        key = api_key if api_key is not None else env.api_key
        key = (key or "").strip() or None
        host = parts.hostname.lower()
        if key is None and any(host == h or host.endswith("." + h) for h in KEYED_HOSTS):
            raise ConfigError(
                f"{host} needs an API key: pass api_key=... or set {API_KEY_ENV}. (A local `seams serve` "
                f"or another custom base_url needs none.)"
            )
        if key is not None and (not key.isascii() or not key.isprintable() or " " in key):
            raise ConfigError("the API key must be printable ASCII without whitespace")
        if not (isinstance(timeout, (int, float)) and 0 < timeout < math.inf):
            raise ConfigError(f"timeout must be a positive number of seconds, got {timeout!r}")
        if not (isinstance(max_concurrency, int) and max_concurrency >= 1):
            raise ConfigError(f"max_concurrency must be a positive integer, got {max_concurrency!r}")
        if retry is not None and not isinstance(retry, RetryPolicy):
            raise ConfigError(f"retry must be a RetryPolicy, got {type(retry).__name__}")
        if client is not None and not isinstance(client, httpx.Client):
            raise ConfigError(f"client must be an httpx.Client, got {type(client).__name__}")
        if async_client is not None and not isinstance(async_client, httpx.AsyncClient):
            raise ConfigError(f"async_client must be an httpx.AsyncClient, got {type(async_client).__name__}")
        self._policy = retry if retry is not None else RetryPolicy()
        if not (isinstance(max_response_bytes, int) and max_response_bytes >= 1):
            raise ConfigError(f"max_response_bytes must be a positive integer, got {max_response_bytes!r}")
        self._max_response_bytes = max_response_bytes
        self._timeout = float(timeout)
        self._max_concurrency = max_concurrency
        self._model_json = encode_model(self._model)
        self._url = httpx.URL(base + SYSTEM_ONE_PATH)
        self._models_url = httpx.URL(base + MODELS_PATH)
        hdrs = {
            "Accept": "application/json",
            "Content-Type": "application/json",
            "User-Agent": f"seams/{__version__}",
        }
        if key is not None:
            hdrs["Authorization"] = f"Bearer {key}"
        hdrs.update(headers or {})
        if compression not in (None, "zstd", "gzip"):
            raise ConfigError(f"compression must be 'zstd', 'gzip' or None, got {compression!r}")
        self._compression = compression
        # Every request carries these headers (by body encoding), on a client this judge created or
        # on yours alike: both go through the client's `send`.
        self._headers: dict[str | None, dict[str, str]] = {None: hdrs}
        if compression is not None:
            self._headers[compression] = {**hdrs, "Content-Encoding": compression}
        self._owns_client = client is None
        self._client = client or httpx.Client(timeout=self._timeout, transport=_own_transport())
        self._user_aclient = async_client
        self._aclient: httpx.AsyncClient | None = async_client
        self._aloop: asyncio.AbstractEventLoop | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self._closed = False

    # ------------------------------------------------------------------ properties

    @property
    def model_id(self) -> str:
        """The model requested (calibrations are tied to it); the served id is `Answers.model`."""
        return self._model

    @property
    def base_url(self) -> str:
        return self._base_url

    @property
    def retry_policy(self) -> RetryPolicy:
        return self._policy

    def __repr__(self) -> str:
        return f"RemoteJudge(model={self._model!r}, base_url={self._base_url!r})"

    # ------------------------------------------------------------------ sync

    def ask(self, state: Any, questions: Mapping[str, Any]) -> Answers:
        """Answer every question about `state`: one request unless the protocol's budget forces more."""
        prepared = _Prepared(state, questions)
        started = time.perf_counter()
        parts = []
        for ids in prepared.groups:
            body = encode_body(self._model_json, prepared.state_json, prepared.wired, ids)
            response = self._send("POST", self._url, body)
            parts.append(read_response(response.content, prepared.questions(ids)))
        return _combine(prepared, parts, started)

    def ask_many(
        self, states: Sequence[Any], questions: Mapping[str, Any], *, return_exceptions: bool = False
    ) -> list[Any]:
        """`ask` for many states, up to `max_concurrency` at once, answers in input order.

        With `return_exceptions=True` a state that fails gives its `SeamsError` in its slot
        instead of failing the batch.
        """

        def one(state: Any) -> Any:
            try:
                return self.ask(state, questions)
            except SeamsError as e:
                if return_exceptions:
                    return e
                raise

        states = list(states)
        if len(states) <= 1:
            return [one(s) for s in states]
        with ThreadPoolExecutor(max_workers=min(self._max_concurrency, len(states))) as pool:
            return list(pool.map(one, states))

    def list_models(self) -> list[dict[str, Any]]:
        """The models the server lists at `GET /v1/models`: dicts with at least a string `name`
        (and, from conforming servers, `description` and `release_date`)."""
        return _read_models(self._send("GET", self._models_url, None).content)

    def _encode(self, body: bytes | None) -> tuple[bytes | None, str | None]:
        """The body as sent, compressed once for every attempt when asked and worth it."""
        if self._compression is None or body is None or len(body) < MIN_COMPRESSED_BODY:
            return body, None
        return _COMPRESSORS[self._compression](body), self._compression

    def _send(self, method: str, url: httpx.URL, body: bytes | None) -> httpx.Response:
        """One call with retries; returns the 200 response or raises a typed error."""
        if self._closed:
            raise ConfigError("this RemoteJudge is closed")
        body, encoding = self._encode(body)
        attempts = self._policy.start()
        last: SeamsError | None = None
        while True:
            remaining = _next_attempt(attempts, last)
            try:
                outcome: httpx.Response | Exception = self._request(
                    method, url, body, min(self._timeout, remaining), encoding
                )
            except (httpx.TransportError, httpx.InvalidURL) as e:
                outcome = e
            if isinstance(outcome, httpx.Response) and outcome.status_code == 200:
                return outcome
            last, wait = _failed_attempt(attempts, method, url, outcome, last, remaining < self._timeout)
            time.sleep(wait)

    def _request(
        self, method: str, url: httpx.URL, body: bytes | None, timeout: float, encoding: str | None
    ) -> httpx.Response:
        """One HTTP exchange through the client's public `send` (its transport, proxies, auth and
        event hooks apply, whoever made the client), the body read within the attempt's time and
        `max_response_bytes`, and the connection released."""
        deadline = time.monotonic() + timeout
        request = self._client.build_request(method, url, content=body, headers=self._headers[encoding],
                                             timeout=timeout)
        # On the transport this judge makes, every connect and read ends by the deadline, so a
        # trickled status line or header cannot outlast it; read_bounded holds it over the body on
        # any transport.
        with deadline_at(deadline):
            return read_bounded(self._client.send(request, stream=True), request, deadline,
                                self._max_response_bytes)

    def close(self) -> None:
        """Close the HTTP client this judge created (a client you passed in stays open)."""
        self._closed = True
        if self._owns_client:
            self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ async

    async def aask(self, state: Any, questions: Mapping[str, Any]) -> Answers:
        """Async `ask`. Split requests go out concurrently; all share the concurrency limit."""
        prepared = _Prepared(state, questions)
        started = time.perf_counter()

        async def part(ids: list[str]) -> tuple[str, dict[str, Any], Usage]:
            body = encode_body(self._model_json, prepared.state_json, prepared.wired, ids)
            response = await self._asend("POST", self._url, body)
            return read_response(response.content, prepared.questions(ids))

        if len(prepared.groups) == 1:
            parts = [await part(prepared.groups[0])]
        else:
            parts = list(await asyncio.gather(*(part(ids) for ids in prepared.groups)))
        return _combine(prepared, parts, started)

    async def aask_many(
        self, states: Sequence[Any], questions: Mapping[str, Any], *, return_exceptions: bool = False
    ) -> list[Any]:
        """`aask` for many states concurrently (bounded by `max_concurrency`), in input order."""

        async def one(state: Any) -> Any:
            try:
                return await self.aask(state, questions)
            except SeamsError as e:
                if return_exceptions:
                    return e
                raise

        return list(await asyncio.gather(*(one(s) for s in states)))

    async def alist_models(self) -> list[dict[str, Any]]:
        """Async `list_models`."""
        return _read_models((await self._asend("GET", self._models_url, None)).content)

    def _async_state(self) -> tuple[httpx.AsyncClient, asyncio.Semaphore]:
        """The async client and semaphore for the running loop, made on first use in each loop.

        An httpx.AsyncClient's connections and an asyncio.Semaphore belong to one event loop;
        a judge used from successive `asyncio.run` calls gets fresh ones rather than errors.
        """
        loop = asyncio.get_running_loop()
        if self._aloop is not loop:
            if self._user_aclient is None:
                self._aclient = httpx.AsyncClient(timeout=self._timeout)
            self._semaphore = asyncio.Semaphore(self._max_concurrency)
            self._aloop = loop
        assert self._aclient is not None and self._semaphore is not None
        return self._aclient, self._semaphore

    async def _asend(self, method: str, url: httpx.URL, body: bytes | None) -> httpx.Response:
        """Async `_send`: the same loop, the same `_failed_attempt` decisions, awaiting instead."""
        if self._closed:
            raise ConfigError("this RemoteJudge is closed")
        client, semaphore = self._async_state()
        body, encoding = self._encode(body)
        async with semaphore:
            attempts = self._policy.start()
            last: SeamsError | None = None
            while True:
                remaining = _next_attempt(attempts, last)
                try:
                    outcome: httpx.Response | Exception = await self._arequest(
                        client, method, url, body, min(self._timeout, remaining), encoding
                    )
                except (httpx.TransportError, httpx.InvalidURL) as e:
                    outcome = e
                if isinstance(outcome, httpx.Response) and outcome.status_code == 200:
                    return outcome
                last, wait = _failed_attempt(attempts, method, url, outcome, last, remaining < self._timeout)
                await asyncio.sleep(wait)

    async def _arequest(
        self, client: httpx.AsyncClient, method: str, url: httpx.URL, body: bytes | None, timeout: float,
        encoding: str | None,
    ) -> httpx.Response:
        """Async mirror of `_request`."""
        request = client.build_request(method, url, content=body, headers=self._headers[encoding], timeout=timeout)

        async def exchange() -> httpx.Response:
            return await aread_bounded(await client.send(request, stream=True), request, self._max_response_bytes)

        # One deadline for the whole exchange: headers, body and decoding, however they trickle.
        return await within(timeout, request, exchange())

    async def aclose(self) -> None:
        """Close both HTTP clients this judge created."""
        self._closed = True
        if self._owns_client:
            self._client.close()
        if self._user_aclient is None and self._aclient is not None:
            client, self._aclient, self._aloop = self._aclient, None, None
            try:
                await client.aclose()
            except RuntimeError:  # its loop is gone; nothing is left open on it
                pass

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


def _own_transport() -> httpx.BaseTransport | None:
    """The sync transport for a client this judge makes: `DeadlineTransport`, which holds the
    attempt's deadline over the whole exchange; None (httpx's own, which honours them) when a
    proxy is set in the environment, as `DeadlineTransport` does not speak to proxies."""
    proxies = getproxies()
    return None if any(proxies.get(k) for k in ("http", "https", "all")) else DeadlineTransport()


#: The retry settings `RemoteJudge` once took one by one; they are `RetryPolicy` fields now.
_RETRY_FIELDS = ("max_retries", "backoff_initial", "backoff_max", "total_budget")
#: The HTTP injection points `RemoteJudge` once took, and what replaced each (issue 27).
_HTTP_FIELDS = {
    "http_client": "client=httpx.Client(...)",
    "async_http_client": "async_client=httpx.AsyncClient(...)",
    "transport": "client=httpx.Client(transport=...)",
    "async_transport": "async_client=httpx.AsyncClient(transport=...)",
}


def _refuse_removed(removed: Mapping[str, Any]) -> None:
    """A clear error for the retry settings or HTTP injection points passed the old way, a
    TypeError for anything else."""
    if not removed:
        return
    old = {k: v for k, v in removed.items() if k in _RETRY_FIELDS}
    if old:
        given = ", ".join(f"{k}={v!r}" for k, v in old.items())
        raise ConfigError(f"RemoteJudge takes its retry settings as one policy: retry=RetryPolicy({given})")
    http = [k for k in removed if k in _HTTP_FIELDS]
    if http:
        raise ConfigError("RemoteJudge takes one httpx client per kind, as httpx does: "
                          + "; ".join(f"{k}= is now {_HTTP_FIELDS[k]}" for k in http))
    raise TypeError(f"RemoteJudge() got unexpected keyword argument(s): {', '.join(sorted(removed))}")


def _read_models(content: bytes) -> list[dict[str, Any]]:
    body = _decode_json(content, "models response")
    models = body.get("models") if isinstance(body, dict) else None
    if not isinstance(models, list) or not all(
        isinstance(m, dict) and isinstance(m.get("name"), str) for m in models
    ):
        raise ProtocolError('models response must be {"models": [{"name": ..., ...}, ...]}')
    return models


__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_MODEL",
    "RemoteJudge",
    "read_response",
    "status_error",
]
