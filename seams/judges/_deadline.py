"""One deadline over a whole sync HTTP exchange: connect, headers, body.

httpx's timeouts are per operation: the read timeout restarts with every byte, so a server that
trickles its status line and headers a byte a second holds a sync call for ever (the body is
bounded by `_bounded.read_bounded`, but only once the headers are in). Async code wraps the
exchange in `asyncio.timeout`; sync code cannot interrupt a blocked read from outside without
closing the socket, which only the transport holds.

So the sync client `RemoteJudge` creates gets `DeadlineTransport`: httpx's own HTTP/1.1 transport
rebuilt on httpcore's public `ConnectionPool` and `NetworkBackend`, whose streams give every
connect, read and write `min(timeout, deadline - now)`. With the deadline of the attempt set by
`deadline_at` around it, no single byte can carry the exchange past it. Outside `deadline_at` it
behaves like `httpx.HTTPTransport()`.
"""

from __future__ import annotations

import ssl
import time
import typing
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import httpcore
import httpx

#: The `time.monotonic()` instant the current thread's exchange must end by (None: no deadline).
_DEADLINE: ContextVar[float | None] = ContextVar("seams_http_deadline", default=None)

#: httpcore's errors as httpx's (most specific first), as `httpx.HTTPTransport` maps them.
_ERRORS: dict[type[Exception], type[httpx.TransportError]] = {
    httpcore.ConnectTimeout: httpx.ConnectTimeout,
    httpcore.ReadTimeout: httpx.ReadTimeout,
    httpcore.WriteTimeout: httpx.WriteTimeout,
    httpcore.PoolTimeout: httpx.PoolTimeout,
    httpcore.TimeoutException: httpx.TimeoutException,
    httpcore.ConnectError: httpx.ConnectError,
    httpcore.ReadError: httpx.ReadError,
    httpcore.WriteError: httpx.WriteError,
    httpcore.NetworkError: httpx.NetworkError,
    httpcore.ProxyError: httpx.ProxyError,
    httpcore.UnsupportedProtocol: httpx.UnsupportedProtocol,
    httpcore.LocalProtocolError: httpx.LocalProtocolError,
    httpcore.RemoteProtocolError: httpx.RemoteProtocolError,
    httpcore.ProtocolError: httpx.ProtocolError,
}
_CORE_ERRORS = tuple(_ERRORS)


@contextmanager
def deadline_at(deadline: float) -> Iterator[None]:
    """Bound every network operation of this thread's exchange by `deadline` (monotonic)."""
    token = _DEADLINE.set(deadline)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _bounded(timeout: float | None, late: type[Exception]) -> float | None:
    """`timeout`, cut to what is left before the deadline; `late` raised when nothing is."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise late("the attempt's deadline passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    """A network stream whose every read and write ends by the deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _bounded(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _bounded(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, _bounded(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    """httpcore's sync backend, its connections made by the deadline and their streams bounded."""

    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
        socket_options: Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_tcp(host, port, _bounded(timeout, httpcore.ConnectTimeout),
                                               local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[typing.Any] | None = None
    ) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_unix_socket(path, _bounded(timeout, httpcore.ConnectTimeout),
                                                       socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _mapped(exc: Exception, request: httpx.Request) -> Exception:
    for kind in type(exc).__mro__:
        if kind in _ERRORS:
            return _ERRORS[kind](str(exc), request=request)
    return exc


class _Body(httpx.SyncByteStream):
    def __init__(self, stream: Iterable[bytes], request: httpx.Request) -> None:
        self._stream = stream
        self._request = request

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._stream
        except _CORE_ERRORS as exc:
            raise _mapped(exc, self._request) from exc

    def close(self) -> None:
        closer = getattr(self._stream, "close", None)
        if closer is not None:
            closer()


class DeadlineTransport(httpx.BaseTransport):
    """`httpx.HTTPTransport()` (HTTP/1.1, verified TLS, httpx's default limits, no proxy) whose
    network operations end by the deadline `deadline_at` sets."""

    def __init__(self) -> None:
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(verify=True, trust_env=True),
            max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0,  # httpx's defaults
            network_backend=_Backend(),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=request.url.raw_scheme, host=request.url.raw_host,
                             port=request.url.port, target=request.url.raw_path),
            headers=request.headers.raw,
            content=typing.cast(Iterable[bytes], request.stream),
            extensions=request.extensions,
        )
        try:
            response = self._pool.handle_request(core)
        except _CORE_ERRORS as exc:
            raise _mapped(exc, request) from exc
        return httpx.Response(status_code=response.status, headers=response.headers,
                              stream=_Body(typing.cast(Iterable[bytes], response.stream), request),
                              extensions=response.extensions)

    def close(self) -> None:
        self._pool.close()


__all__ = ["DeadlineTransport", "deadline_at"]
