"""Decoding `Content-Encoding` without ever producing more than a limit.

Shared by the server (request bodies) and the remote judge (responses): a few KB of zstd or gzip
can spell gigabytes, so the decoded size is bounded while decoding, never checked afterwards.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Callable

import zstandard

#: The encodings both ends decode; anything else is refused rather than passed on undecoded.
ENCODINGS = ("identity", "zstd", "gzip", "x-gzip", "deflate")


class TooLarge(ValueError):
    """The decoded body would pass the limit."""


class BadEncoding(ValueError):
    """The body is not valid for its `Content-Encoding`, or the encoding is not one we decode."""

    def __init__(self, message: str, *, unsupported: bool = False) -> None:
        self.unsupported = unsupported
        super().__init__(message)


def decode_bounded(raw: bytes, encoding: str | None, limit: int) -> bytes:
    """Undo `Content-Encoding` (possibly a list, applied in order), never producing more than
    `limit` bytes. Raises `TooLarge` or `BadEncoding`."""
    out = raw
    codings = [c.strip().lower() for c in (encoding or "").split(",") if c.strip()]
    for coding in reversed(codings):
        out = _decode_one(out, coding, limit)
    if len(out) > limit:
        raise TooLarge(f"more than {limit} bytes")
    return out


def _decode_one(raw: bytes, coding: str, limit: int) -> bytes:
    if coding == "identity":
        return raw
    if coding == "zstd":
        try:
            reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw), read_across_frames=True)
            return _bounded_read(reader.read, limit)
        except zstandard.ZstdError as exc:
            raise BadEncoding(f"the body is not valid zstd: {exc}") from None
    if coding in ("gzip", "x-gzip", "deflate"):
        wbits = 16 + zlib.MAX_WBITS if coding != "deflate" else zlib.MAX_WBITS
        try:
            d = zlib.decompressobj(wbits)
            out = d.decompress(raw, limit + 1)
        except zlib.error as exc:
            raise BadEncoding(f"the body is not valid {coding}: {exc}") from None
        if len(out) > limit or d.unconsumed_tail:
            raise TooLarge(f"more than {limit} bytes")
        return out
    raise BadEncoding(f"Content-Encoding {coding!r} is not supported; use zstd, gzip or none", unsupported=True)


def _bounded_read(read: Callable[[int], bytes], limit: int) -> bytes:
    buf = bytearray()
    while True:
        chunk = read(min(65536, limit + 1 - len(buf)))
        if not chunk:
            return bytes(buf)
        buf += chunk
        if len(buf) > limit:
            raise TooLarge(f"more than {limit} bytes")


__all__ = ["ENCODINGS", "BadEncoding", "TooLarge", "decode_bounded"]
