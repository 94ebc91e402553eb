"""Reading a response within a deadline and a size cap, for the remote judge.

httpx's read timeout restarts with every chunk, so a server that trickles a byte a second never
times out; and `response.read()` keeps whatever it is sent, decoded without limit. Here the raw
body is read chunk by chunk against one deadline for the whole attempt and a cap on its size,
then decoded once, bounded again (`seams._content`). What comes back is a plain, already-read
`httpx.Response` with the same status and headers (less the encoding and framing headers, which
no longer describe its body).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import TypeVar

import httpx

from .._content import BadEncoding, TooLarge, decode_bounded
from ..errors import ProtocolError

#: Largest response accepted, raw and decoded. A System One answer is a few KB (a 255-option
#: Choice is about 10 KB); 4 MiB leaves room for anything a conforming server sends.
MAX_RESPONSE_BYTES = 4 * 1024 * 1024

T = TypeVar("T")
_DROPPED = {b"content-encoding", b"content-length", b"transfer-encoding"}


def _too_large(limit: int) -> ProtocolError:
    return ProtocolError(
        f"the response body is over {limit:,} bytes (max_response_bytes); a System One answer is a few KB"
    )


def _out_of_time(request: httpx.Request) -> httpx.ReadTimeout:
    return httpx.ReadTimeout("the attempt's deadline passed while the response was still arriving", request=request)


def _finish(response: httpx.Response, request: httpx.Request, raw: bytes, limit: int) -> httpx.Response:
    try:
        content = decode_bounded(raw, response.headers.get("content-encoding"), limit)
    except TooLarge:
        raise _too_large(limit) from None
    except BadEncoding as exc:
        raise ProtocolError(f"the response body cannot be decoded: {exc}") from None
    headers = [(k, v) for k, v in response.headers.raw if k.lower() not in _DROPPED]
    return httpx.Response(response.status_code, headers=headers, content=content, request=request,
                          extensions={"http_version": response.extensions.get("http_version", b"HTTP/1.1"),
                                      "reason_phrase": response.extensions.get("reason_phrase", b"")})


def read_bounded(response: httpx.Response, request: httpx.Request, deadline: float, limit: int) -> httpx.Response:
    """Read a streamed response by `deadline` (a `time.monotonic()` instant) and within `limit`
    bytes; close it either way. The deadline is checked as each chunk arrives, so a call can run
    past it by at most one read timeout, never by a trickle's whole length."""
    raw = bytearray()
    try:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise _too_large(limit)
        for chunk in response.iter_raw():
            raw += chunk
            if len(raw) > limit:
                raise _too_large(limit)
            if time.monotonic() > deadline:
                raise _out_of_time(request)
    finally:
        response.close()
    return _finish(response, request, bytes(raw), limit)


async def aread_bounded(response: httpx.Response, request: httpx.Request, limit: int) -> httpx.Response:
    """Async `read_bounded`; the deadline is the caller's `asyncio.timeout` around the exchange."""
    raw = bytearray()
    try:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise _too_large(limit)
        async for chunk in response.aiter_raw():
            raw += chunk
            if len(raw) > limit:
                raise _too_large(limit)
    finally:
        await response.aclose()
    return _finish(response, request, bytes(raw), limit)


async def within(seconds: float, request: httpx.Request, exchange: Awaitable[T]) -> T:
    """Await `exchange` (a coroutine) for at most `seconds` in all: headers, body and decoding."""
    try:
        async with asyncio.timeout(seconds):
            return await exchange
    except TimeoutError:
        raise _out_of_time(request) from None


__all__ = ["MAX_RESPONSE_BYTES", "aread_bounded", "read_bounded", "within"]
