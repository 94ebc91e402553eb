"""Real HTTP servers on loopback for the remote-judge, cache and cassette tests.

* `jev_mock(...)` — `jevcompat`'s reference System One server (an independent peer) in a thread,
  optionally with one of its `--fault` modes.
* `Scripted` — a small stdlib server of our own (it decodes zstd and gzip bodies) that answers from a script (429 with
  `retry-after`, 529 forever, a 422 with `loc`, …) and counts and timestamps every request, so
  retry behaviour is asserted on what the server saw, not on wall-clock guesses. Its `OK` reply
  answers correctly (through jevcompat's fake model), so "429 then 200" ends in real answers.

Fixtures (imported into conftest): `mock` (one clean jevcompat mock for the session) and
`scripted` (a factory; every server it starts is stopped after the test).
"""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import zstandard
from jevcompat.mock import MockConfig, make_server, respond

#: A reply: (status, headers, body). A dict body is sent as JSON, bytes as they are; `OK`
#: answers the request correctly; `HANG_UP` closes the connection without a response.
Reply = tuple[int, dict[str, str], Any]
OK: Reply = (200, {}, "__answer__")
HANG_UP: Reply = (0, {}, "__hang_up__")


class JevMock:
    """jevcompat's mock server in a thread (like `jevcompat.mock.Running`, but it stops in
    milliseconds rather than half a second: dozens of fault servers start in one test run)."""

    def __init__(self, cfg: MockConfig) -> None:
        self.cfg = cfg
        self.server = make_server(cfg)
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def jev_mock(*faults: str, key: str | None = None, **kw: Any) -> Iterator[JevMock]:
    """jevcompat's mock server on a free loopback port for the duration of the block."""
    server = JevMock(MockConfig(key=key, faults=frozenset(faults), **kw))
    try:
        yield server
    finally:
        server.stop()


@dataclass
class Seen:
    """One request as the server saw it."""

    at: float
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Scripted:
    """A loopback server that answers the n-th request with `script(n, body)` (or `script[n]`,
    the last reply repeating)."""

    script: Callable[[int, Any], Reply] | list[Reply]
    requests: list[Seen] = field(default_factory=list)

    def __post_init__(self) -> None:
        owner = self
        self._lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                encoding = self.headers.get("Content-Encoding")
                if encoding == "zstd":
                    raw = zstandard.ZstdDecompressor().decompressobj().decompress(raw)
                elif encoding == "gzip":
                    raw = gzip.decompress(raw)
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw
                with owner._lock:
                    n = len(owner.requests)
                    owner.requests.append(
                        Seen(time.monotonic(), self.command, self.path, dict(self.headers), body)
                    )
                status, headers, payload = owner.reply(n, body)
                if payload == "__hang_up__":  # close the connection without any response
                    self.close_connection = True
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if payload == "__answer__":
                    payload = respond(MockConfig(), body)
                data = (
                    payload
                    if isinstance(payload, bytes)
                    else json.dumps(payload).encode()
                    if payload is not None
                    else b""
                )
                self.send_response(status)
                if not isinstance(payload, bytes):
                    self.send_header("Content-Type", "application/json")
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_POST = do_GET = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self.thread.start()

    def reply(self, n: int, body: Any) -> Reply:
        if callable(self.script):
            return self.script(n, body)
        return self.script[min(n, len(self.script) - 1)]

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def count(self) -> int:
        return len(self.requests)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def mock() -> Iterator[JevMock]:
    """One clean jevcompat mock for the whole session (it is stateless)."""
    with jev_mock() as server:
        yield server


def _starting(make: Callable[[Any], Any]) -> Iterator[Callable[[Any], Any]]:
    """A fixture's factory: servers made with it are all stopped when the test ends."""
    started: list[Any] = []

    def start(arg: Any) -> Any:
        server = make(arg)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def scripted() -> Iterator[Callable[..., Scripted]]:
    """Start `Scripted` servers (a script of replies); all are stopped when the test ends."""
    yield from _starting(Scripted)


class Raw:
    """A loopback socket server whose `respond(sock)` writes whatever bytes it likes after reading
    one request: a trickled answer, an endless body, headers that never end. `gone` is set when
    the client hung up on it, so a test can see that the client, not the server, ended it."""

    def __init__(self, respond: Callable[[socket.socket], None]) -> None:
        self.respond = respond
        self.gone = threading.Event()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            if read_message(conn) is None:
                return
            try:
                self.respond(conn)
            except OSError:  # the client hung up: what a bounded client does
                self.gone.set()

    def stop(self) -> None:
        self.sock.close()


def read_message(sock: socket.socket) -> bytes | None:
    """One HTTP message from a raw socket, head and body (by its Content-Length); None when the
    peer closed before the whole of it came."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        body += chunk
    return head + b"\r\n\r\n" + body


def trickle(prefix: bytes, byte: bytes = b" ", every: float = 0.02) -> Callable[[socket.socket], None]:
    """Send `prefix`, then `byte` every `every` seconds until the client hangs up."""

    def respond(conn: socket.socket) -> None:
        conn.sendall(prefix)
        while True:
            conn.sendall(byte)
            time.sleep(every)

    return respond


def drip(message: bytes, then: bytes = b" ", every: float = 0.02) -> Callable[[socket.socket], None]:
    """Send `message` one byte at a time, then `then` the same way, until the client hangs up:
    a status line and headers that trickle in, each byte well inside any read timeout."""

    def respond(conn: socket.socket) -> None:
        for i in range(len(message)):
            conn.sendall(message[i:i + 1])
            time.sleep(every)
        while True:
            conn.sendall(then)
            time.sleep(every)

    return respond


@pytest.fixture
def raw_server() -> Iterator[Callable[[Callable[[socket.socket], None]], Raw]]:
    """Start `Raw` servers (a function writing the answer); all are stopped when the test ends."""
    yield from _starting(Raw)
