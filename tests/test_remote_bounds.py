"""The remote judge's bounds hold against hostile servers on loopback: a trickled answer ends at
the budget, and an oversized or bomb-compressed body is refused at the cap, not decoded whole.

Each server here would keep going for as long as the client listens (it sends until the client
hangs up), so a client without the bound would never return: the test could not pass.
"""

from __future__ import annotations

import asyncio
import gzip

import pytest
import zstandard
from servers import drip, trickle

from seams.errors import JudgeTimeout, ProtocolError
from seams.judges import RemoteJudge, RetryPolicy

NOUL = {"q": {"type": "noul", "instructions": "Is it about billing?"}}
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"


def judge(url: str, *, timeout: float = 0.5, total_budget: float = 1.0, **kw) -> RemoteJudge:
    """A judge with a short budget: 0.5 s an attempt, one retry, 1 s in all."""
    retry = RetryPolicy(max_retries=1, total_budget=total_budget)
    return RemoteJudge(base_url=url, timeout=timeout, retry=retry, **kw)


def test_a_trickled_body_ends_at_the_budget(raw_server) -> None:
    server = raw_server(trickle(HEAD + b"Content-Length: 1000000\r\n\r\n{"))
    with judge(server.url) as remote, pytest.raises(JudgeTimeout):
        remote.ask("billing", NOUL)
    assert server.gone.wait(5)  # the client hung up; the server did not finish


def test_a_trickled_chunked_body_ends_at_the_budget(raw_server) -> None:
    server = raw_server(trickle(HEAD + b"Transfer-Encoding: chunked\r\n\r\n", b"1\r\n \r\n"))
    with judge(server.url) as remote, pytest.raises(JudgeTimeout):
        remote.ask("billing", NOUL)
    assert server.gone.wait(5)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("message, then", [
    (b"HTTP/1.1 200 OK", b" "),  # a status line that never ends
    (HEAD + b"X-Slow: ", b"a"),  # a status line, then a header that never ends
], ids=["status line", "headers"])
def test_sync_holds_one_deadline_while_the_head_trickles_in(raw_server, message: bytes, then: bytes) -> None:
    # Every byte, the status line's included, comes well inside the 0.5 s read timeout, so only
    # a deadline over the whole exchange can end the call.
    server = raw_server(drip(message, then))
    with judge(server.url) as remote, pytest.raises(JudgeTimeout):
        remote.ask("billing", NOUL)
    assert server.gone.wait(5)


@pytest.mark.parametrize("phase", ["headers", "body"])
def test_async_holds_one_deadline_for_the_whole_exchange(raw_server, phase: str) -> None:
    prefix = b"HTTP/1.1 200 OK\r\nX-Slow: " if phase == "headers" else HEAD + b"Content-Length: 1000000\r\n\r\n"
    server = raw_server(trickle(prefix, b"a"))

    async def ask() -> None:
        async with judge(server.url) as remote:
            await remote.aask("billing", NOUL)

    with pytest.raises(JudgeTimeout):
        asyncio.run(ask())
    assert server.gone.wait(5)


def endless(conn) -> None:
    conn.sendall(HEAD + b"Transfer-Encoding: chunked\r\n\r\n")
    chunk = b"ffff\r\n" + b"x" * 0xFFFF + b"\r\n"
    while True:
        conn.sendall(chunk)


def test_an_endless_body_stops_at_the_cap(raw_server) -> None:
    server = raw_server(endless)
    with (judge(server.url, timeout=30, total_budget=60, max_response_bytes=1 << 20) as remote,
          pytest.raises(ProtocolError, match="over 1,048,576 bytes")):
        remote.ask("billing", NOUL)
    assert server.gone.wait(5)


def test_a_declared_length_over_the_cap_is_refused_unread(scripted) -> None:
    server = scripted([(200, {}, b"{" + b" " * (2 << 20) + b"}")])
    with (judge(server.url, timeout=30, total_budget=60, max_response_bytes=1 << 20) as remote,
          pytest.raises(ProtocolError, match="max_response_bytes")):
        remote.ask("billing", NOUL)


@pytest.mark.parametrize("encoding", ["gzip", "zstd"])
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_compression_bomb_is_refused_at_the_decoded_cap(scripted, encoding: str, mode: str) -> None:
    plain = b" " * (64 << 20)  # 64 MiB of spaces: about 64 KB of gzip, a few KB of zstd
    bomb = gzip.compress(plain) if encoding == "gzip" else zstandard.ZstdCompressor().compress(plain)
    assert len(bomb) < (1 << 20)  # the compressed body is under the cap; only decoding passes it
    server = scripted([(200, {"Content-Encoding": encoding, "Content-Type": "application/json"}, bomb)])

    async def aask() -> None:
        async with judge(server.url, timeout=30, total_budget=60, max_response_bytes=1 << 20) as remote:
            await remote.aask("billing", NOUL)

    with pytest.raises(ProtocolError, match="over 1,048,576 bytes"):
        if mode == "async":
            asyncio.run(aask())
        else:
            with judge(server.url, timeout=30, total_budget=60, max_response_bytes=1 << 20) as remote:
                remote.ask("billing", NOUL)


@pytest.mark.parametrize("encoding", ["gzip", "zstd"])
def test_compressed_answers_under_the_cap_are_read(scripted, encoding: str) -> None:
    import json

    answer = json.dumps({"model": "m", "answers": {"q": {"type": "noul", "noul": 0.25}},
                         "usage": {"input_tokens": 3, "output_tokens": 1}}).encode()
    packed = gzip.compress(answer) if encoding == "gzip" else zstandard.ZstdCompressor().compress(answer)
    server = scripted([(200, {"Content-Encoding": encoding, "Content-Type": "application/json"}, packed)])
    with judge(server.url) as remote:
        got = remote.ask("billing", NOUL)
    assert got.answers["q"].noul == 0.25 and got.model == "m"
