"""The remote client's own overhead per request, against the official `typesafe-sdk`.

    python bench/remote_overhead.py                 # as `jevcompat mock` ships (one connection a request)
    python bench/remote_overhead.py --keep-alive    # the same mock speaking HTTP/1.1 keep-alive

Method
------
One `jevcompat mock` runs in a **separate process** on loopback, so its work never shares this
process's interpreter. In this process, five clients send **the same request** (same state, same
three questions, same model) to it, in **interleaved rounds**: every round runs each client for
`--requests` calls, in a fresh random order, and the figures are medians over rounds. Before
timing, the seams and SDK answers are checked to be equal.

* ``raw``    — a raw-socket HTTP/1.1 client sending pre-encoded bytes and reading the reply. It
               does nothing a client could skip, so its time is the server's time plus the
               kernel's: **the baseline**.
* ``httpx``  — a bare ``httpx.Client.post`` of pre-encoded bytes (seams' HTTP library, no seams).
* ``httpx2`` — the same with ``httpx2`` (the SDK's HTTP library, no SDK).
* ``seams``  — ``RemoteJudge.ask(state, questions)``: validation, encoding, HTTP, strict reading.
* ``sdk``    — ``TypeSafeClient.system_one(state=..., questions=...)`` with SDK question objects
               built once, its default retry policy, compression off (no zstd on this Python).

Two clocks: **wall** time per request, and **CPU** time of the calling thread per request
(`time.thread_time`). A client's time waiting for the server is not CPU time of its thread, so
CPU time is the client's own work, and it is far less disturbed by other load on the machine;
wall time is what a caller waits. **Overhead** = a client's time minus the raw baseline's, on
each clock. The headline ratio is seams' overhead over the SDK's (goal ≤ 0.5); also printed is
the overhead above each client's own HTTP library (seams − httpx, sdk − httpx2), which isolates
what each library adds on top of its transport.
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import httpx
import httpx2
import typesafe_sdk as ts

from seams import Choice, Noul, Score
from seams.judges import RemoteJudge

STATE = {
    "message": "I was charged twice for my subscription this month. Please refund one of them.",
    "customer": {"tier": "gold", "since": "2021-04-01", "orders": [1042, 1043]},
}
QUESTIONS = {
    "billing": Noul(instructions="Is this about billing?", criteria={"true": "Charges, refunds, invoices"}),
    "team": Choice(
        instructions="Which team should handle `message`?",
        criteria={"billing": "Payments and refunds", "technical": "Bugs and outages", "sales": None},
    ),
    "anger": Score(instructions="How frustrated is the customer?", criteria=["Calm", "Annoyed", "Frustrated", "Furious"]),
}
SDK_QUESTIONS = {
    "billing": ts.Noul(instructions="Is this about billing?", criteria={"true": "Charges, refunds, invoices"}),
    "team": ts.Choice(
        instructions="Which team should handle `message`?",
        criteria={"billing": "Payments and refunds", "technical": "Bugs and outages", "sales": None},
    ),
    "anger": ts.Score(instructions="How frustrated is the customer?", criteria=["Calm", "Annoyed", "Frustrated", "Furious"]),
}

LAUNCH = """
import sys, jevcompat.mock as m
if sys.argv[2] == "1":
    m.Handler.protocol_version = "HTTP/1.1"  # the mock sends Content-Length, so keep-alive is safe
    # headers and body go out in two writes; without this, Nagle + delayed ACK add 40 ms to each
    m.Handler.disable_nagle_algorithm = True
m.make_server(m.MockConfig(), port=int(sys.argv[1])).serve_forever()
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_mock(port: int, keep_alive: bool) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", LAUNCH, str(port), "1" if keep_alive else "0"])
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), 0.1).close()
            return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("the mock did not start")


class RawClient:
    """The least a client can do: write pre-encoded bytes, read the status line, headers and body."""

    def __init__(self, port: int, body: bytes, keep_alive: bool) -> None:
        self.addr = ("127.0.0.1", port)
        self.keep_alive = keep_alive
        head = (
            f"POST /v1/systemone HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n{'' if keep_alive else 'Connection: close' + chr(13) + chr(10)}\r\n"
        )
        self.request = head.encode() + body
        self.sock: socket.socket | None = None

    def __call__(self) -> bytes:
        if self.sock is None:
            self.sock = socket.create_connection(self.addr)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock = self.sock
        sock.sendall(self.request)
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = sock.recv(65536)
            if not chunk:
                break
            buf += chunk
        head, _, rest = buf.partition(b"\r\n\r\n")
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
        while len(rest) < length:
            rest += sock.recv(65536)
        if not self.keep_alive or b"connection: close" in head.lower():
            sock.close()
            self.sock = None
        return rest


def measure(clients: dict[str, Callable[[], object]], rounds: int, n: int) -> tuple[dict, dict]:
    wall: dict[str, list[float]] = {k: [] for k in clients}
    cpu: dict[str, list[float]] = {k: [] for k in clients}
    for f in clients.values():  # warm up: imports, pools, caches
        for _ in range(20):
            f()
    for _ in range(rounds):
        order = list(clients)
        random.shuffle(order)
        for name in order:
            f = clients[name]
            t0, c0 = time.perf_counter(), time.thread_time()
            for _ in range(n):
                f()
            cpu[name].append((time.thread_time() - c0) / n * 1e6)
            wall[name].append((time.perf_counter() - t0) / n * 1e6)
    return {k: statistics.median(v) for k, v in wall.items()}, {k: statistics.median(v) for k, v in cpu.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=15, help="interleaved rounds (medians are over rounds)")
    ap.add_argument("--requests", type=int, default=100, help="requests per client per round")
    ap.add_argument("--keep-alive", action="store_true", help="serve HTTP/1.1 keep-alive instead of one connection a request")
    args = ap.parse_args()

    port = free_port()
    proc = start_mock(port, args.keep_alive)
    url = f"http://127.0.0.1:{port}"
    body = json.dumps({"model": "jev-latest", "state": STATE, "questions": {k: q.wire() for k, q in QUESTIONS.items()}}).encode()
    try:
        judge = RemoteJudge(base_url=url)
        sdk = ts.TypeSafeClient(api_key="bench", base_url=url, compression=False)
        hx = httpx.Client()
        hx2 = httpx2.Client()
        hdr = {"Content-Type": "application/json"}
        target = url + "/v1/systemone"

        ours, theirs = judge.ask(STATE, QUESTIONS), sdk.system_one(state=STATE, questions=SDK_QUESTIONS)
        assert ours.model == theirs.model and ours["team"].probabilities == dict(theirs.answers["team"].probabilities)
        assert ours["anger"].score == theirs.answers["anger"].score and ours["billing"].noul == theirs.answers["billing"].noul

        clients: dict[str, Callable[[], object]] = {
            "raw": RawClient(port, body, args.keep_alive),
            "httpx": lambda: hx.post(target, content=body, headers=hdr).content,
            "httpx2": lambda: hx2.post(target, content=body, headers=hdr).content,
            "seams": lambda: judge.ask(STATE, QUESTIONS),
            "sdk": lambda: sdk.system_one(state=STATE, questions=SDK_QUESTIONS),
        }
        wall, cpu = measure(clients, args.rounds, args.requests)
    finally:
        proc.terminate()
        proc.wait()

    mode = "HTTP/1.1 keep-alive" if args.keep_alive else "one connection a request (the mock as shipped)"
    print(f"jevcompat mock in its own process, {mode}; {args.rounds} interleaved rounds x {args.requests} requests")
    print(f"{'client':8s} {'wall µs/req':>12s} {'CPU µs/req':>11s} {'wall overhead':>14s} {'CPU overhead':>13s}")
    for name in clients:
        print(f"{name:8s} {wall[name]:12.0f} {cpu[name]:11.0f} {wall[name] - wall['raw']:14.0f} {cpu[name] - cpu['raw']:13.0f}")
    for clock, d in (("CPU", cpu), ("wall", wall)):
        ours_over, sdk_over = d["seams"] - d["raw"], d["sdk"] - d["raw"]
        own_ours, own_sdk = d["seams"] - d["httpx"], d["sdk"] - d["httpx2"]
        print(
            f"{clock:4s}: overhead over raw socket  seams {ours_over:6.0f} µs, sdk {sdk_over:6.0f} µs, "
            f"ratio {ours_over / sdk_over:.2f}   |   above own HTTP library  seams {own_ours:6.0f} µs, "
            f"sdk {own_sdk:6.0f} µs, ratio {own_ours / own_sdk:.2f}"
        )
    print(f"total time per request, seams / sdk: wall {wall['seams'] / wall['sdk']:.2f}, CPU {cpu['seams'] / cpu['sdk']:.2f}")


if __name__ == "__main__":
    main()
