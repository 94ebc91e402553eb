"""Load held: `seams serve` under concurrent clients, and the review queue under concurrent reviewers.

    python bench/soak.py [--seconds 60] [--clients 16] [--think-ms 0] [--model DIR] [--threads 1]
                         [--concurrency 2] [--queue-seconds 30] [--processes 4] [--reviewers 4] [--items 3000]
                         [--json bench/results/soak.json]

A bench, never a timed test: every loop is bounded by a deadline and stops by itself, and only
loopback addresses are used.

**Server.** Starts `seams serve` as a subprocess on a free 127.0.0.1 port (`--port 0`, the bound
port read from its start line) over the shipped local model (or `--model DIR`), then runs
`--clients` threads for `--seconds`, each with its own HTTP connection, pausing a random time of
mean `--think-ms` between its requests (0: none, so the clients keep the server saturated, and
what is measured is how it sheds load; a pause that keeps the offered load under capacity
measures load held), with a seeded mix of requests: valid asks (a Noul, a Choice, a Score, several questions at once, and two questions
over a state of about eight windows), malformed JSON, states over the state budget, requests over
`max_pairs` and over `max_tokens` (a 255-option Choice over a 2,000-token state: within the pairs
bound thanks to the shortlist, but 43k tokens of reading), a body over `--max-body-bytes`, an
unknown model, wrong types (questions as a list, a state of the wrong shape, a Score of one
level), and an unknown route. It counts responses by kind and status — **0 5xx** is the
requirement, and every kind must get the status it should — and prints p50/p99 latency overall
and per kind, the token bound the server sized at start, and the server's resident memory
(VmRSS) after the first answer, every 10 s, and at the end (a leak grows with the requests; an
allocator's arenas level off).

**Queue.** One `ReviewQueue` SQLite file; a producer process enqueues `--items` items while
`--processes` processes of `--reviewers` threads each claim the oldest open item, then resolve it
(most of the time) or release it (15 %), until every item is resolved or `--queue-seconds` run
out. Every claim, release and resolve is logged with its reviewer and time; at the end the file is
read back: **0 lost** (every enqueued item resolved, by exactly the reviewer who held it) and
**0 duplicated** (no item claimed by two reviewers at once, none resolved twice). Prints
throughput and p50/p99 of each operation.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from itertools import pairwise
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from seams.judges.local.runtime import machine  # noqa: E402
from seams.queue import ReviewQueue  # noqa: E402

# ---------------------------------------------------------------------------------------------
# the server
# ---------------------------------------------------------------------------------------------

NOUL = {"type": "noul", "instructions": "Is this about billing?"}
CHOICE = {"type": "choice", "instructions": "Which team?", "criteria": ["billing", "technical", "sales"]}
SCORE = {"type": "score", "instructions": "How upset is the writer?", "criteria": ["calm", "annoyed", "angry"]}
STATES = ["I was charged twice for my subscription this month.", "The app crashes when I open settings.",
          "Can I get a quote for 40 seats?", "Thanks, that fixed it!", {"subject": "refund", "body": "Where is it?"}]
#: What each kind of request should get; a 5xx is never among them.
EXPECTED = {"noul": {200}, "choice": {200}, "score": {200}, "many": {200}, "long_state": {200},
            "malformed_json": {422}, "over_token_budget": {422}, "over_max_pairs": {422}, "over_max_tokens": {422}, "over_body_limit": {413}, "unknown_model": {404},
            "questions_as_list": {422}, "one_level_score": {422}, "wrong_state_type": {422}, "unknown_route": {404}}
#: The mix: valid asks are half of the requests.
WEIGHTS = {"noul": 14, "choice": 10, "score": 10, "many": 6, "long_state": 4, "malformed_json": 8,
           "over_token_budget": 6, "over_max_pairs": 3, "over_max_tokens": 3, "over_body_limit": 4, "unknown_model": 8, "questions_as_list": 8,
           "one_level_score": 6, "wrong_state_type": 6, "unknown_route": 4}


def _request(kind: str, rng: random.Random, max_body: int) -> tuple[str, bytes]:
    """The path and body of one request of `kind`."""
    state = rng.choice(STATES)

    def body(payload: Any) -> bytes:
        return json.dumps(payload).encode()

    if kind == "noul":
        return "/v1/systemone", body({"state": state, "questions": {"q": NOUL}})
    if kind == "choice":
        return "/v1/systemone", body({"state": state, "questions": {"team": CHOICE}})
    if kind == "score":
        return "/v1/systemone", body({"state": state, "questions": {"anger": SCORE}})
    if kind == "many":
        return "/v1/systemone", body({"state": state, "questions": {"q": NOUL, "team": CHOICE, "anger": SCORE}})
    if kind == "malformed_json":
        good = body({"state": state, "questions": {"q": NOUL}})
        return "/v1/systemone", good[: rng.randrange(1, len(good) - 1)]
    if kind == "over_token_budget":  # 40k words: past the local model's state budget (32768 tokens)
        return "/v1/systemone", body({"state": "refund " * 40_000, "questions": {"q": NOUL}})
    if kind == "long_state":  # ~1,800 tokens: eight windows, two questions, about 8k tokens of reading
        return "/v1/systemone", body({"state": "the customer wrote about billing and the invoice " * 200,
                                      "questions": {"q": NOUL, "team": CHOICE}})
    crit = {f"team {i}": None for i in range(255)}
    if kind == "over_max_pairs":  # 255 options (16 shortlisted) on ~40 windows: 640 runs, over max_pairs (512)
        return "/v1/systemone", body({"state": "billing question " * 5000,
                                      "questions": {"t": {"type": "choice", "criteria": crit}}})
    if kind == "over_max_tokens":  # the same over ~11 windows: 176 runs, within max_pairs, but ~43k tokens
        return "/v1/systemone", body({"state": "billing question " * 1000,
                                      "questions": {"t": {"type": "choice", "criteria": crit}}})
    if kind == "over_body_limit":
        return "/v1/systemone", body({"state": "x" * (max_body + 1024), "questions": {"q": NOUL}})
    if kind == "unknown_model":
        return "/v1/systemone", body({"model": "no-such-model-7", "state": state, "questions": {"q": NOUL}})
    if kind == "questions_as_list":
        return "/v1/systemone", body({"state": state, "questions": [NOUL]})
    if kind == "one_level_score":
        return "/v1/systemone", body({"state": state, "questions": {"s": {"type": "score", "criteria": ["only"]}}})
    if kind == "wrong_state_type":
        return "/v1/systemone", body({"state": None, "questions": {"q": {"type": "noul", "instructions": 7}}})
    if kind == "unknown_route":
        return "/v1/nothing-here", body({"state": state})
    raise ValueError(kind)


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


def _pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def soak_server(*, seconds: float, clients: int, model: Path | None, threads: int, max_body: int,
                concurrency: int, think_ms: float = 0.0, seed: int = 30) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "seams", "serve", "--host", "127.0.0.1", "--port", "0", "--threads", str(threads),
           "--max-body-bytes", str(max_body), "--concurrency", str(concurrency)]
    if model is not None:
        cmd += ["--model-dir", str(model)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        base, sizing = None, ""
        started = time.monotonic()
        assert proc.stderr is not None
        while time.monotonic() - started < 120:
            line = proc.stderr.readline()
            if not line and proc.poll() is not None:
                raise RuntimeError(f"seams serve exited with {proc.returncode} before it listened")
            if "--max-tokens" in line:
                sizing = line.split("seams serve: ", 1)[1].strip()
            m = re.search(r"on (http://127\.0\.0\.1:\d+) ", line)
            if m:
                base = m.group(1)
                model_id = line.split("seams serve: ", 1)[1].split(" on ", 1)[0]
                break
        if base is None:
            raise RuntimeError("seams serve did not print its address within 120 s")
        # drain the server's stderr so it can never block on a full pipe
        threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()  # type: ignore[union-attr]
        with httpx.Client(base_url=base, timeout=60) as c:
            first = c.post("/v1/systemone", json={"state": STATES[0], "questions": {"q": NOUL}})
            assert first.status_code == 200, first.text
        rss_start = _rss_kib(proc.pid)
        counts: dict[str, Counter[int]] = defaultdict(Counter)
        latencies: dict[str, list[float]] = defaultdict(list)
        errors: Counter[str] = Counter()
        lock = threading.Lock()
        deadline = time.monotonic() + seconds
        kinds, weights = zip(*WEIGHTS.items(), strict=True)

        def client(i: int) -> None:
            rng = random.Random(seed * 1000 + i)
            with httpx.Client(base_url=base, timeout=60) as c:
                while time.monotonic() < deadline:
                    kind = rng.choices(kinds, weights)[0]
                    path, body = _request(kind, rng, max_body)
                    t0 = time.perf_counter()
                    try:
                        r = c.post(path, content=body, headers={"Content-Type": "application/json"})
                        status = r.status_code
                    except httpx.HTTPError as e:  # a dropped connection is a failure too
                        with lock:
                            errors[f"{kind}: {type(e).__name__}"] += 1
                        continue
                    dt = (time.perf_counter() - t0) * 1000
                    with lock:
                        counts[kind][status] += 1
                        latencies[kind].append(dt)
                    if think_ms > 0:
                        time.sleep(min(rng.expovariate(1000 / think_ms), max(0.0, deadline - time.monotonic())))

        workers = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
        t0 = time.monotonic()
        for w in workers:
            w.start()
        rss_every_10s, sample_at = [], time.monotonic() + 10
        while any(w.is_alive() for w in workers):
            time.sleep(0.2)
            if time.monotonic() >= sample_at:
                rss_every_10s.append(round(_rss_kib(proc.pid) / 1024, 1))
                sample_at += 10
        for w in workers:
            w.join()
        wall = time.monotonic() - t0
        rss_end = _rss_kib(proc.pid)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    every = [x for xs in latencies.values() for x in xs]
    valid = [x for k in ("noul", "choice", "score", "many") for x in latencies[k]]
    statuses: Counter[int] = Counter()
    for c in counts.values():
        statuses.update(c)
    wrong = {k: dict(c) for k, c in counts.items() if set(c) - EXPECTED[k]}
    return {
        "model": model_id, "sizing": sizing, "concurrency": concurrency, "clients": clients, "think_ms": think_ms, "seconds": round(wall, 1), "requests": len(every),
        "throughput_rps": round(len(every) / wall, 1),
        "by_status": dict(sorted(statuses.items())), "5xx": sum(v for s, v in statuses.items() if s >= 500),
        "transport_errors": dict(errors), "unexpected_status": wrong,
        "by_kind": {k: {"statuses": dict(sorted(counts[k].items())), "p50_ms": round(_pct(latencies[k], 0.5), 1),
                        "p99_ms": round(_pct(latencies[k], 0.99), 1)} for k in WEIGHTS},
        "p50_ms": round(_pct(every, 0.5), 1), "p99_ms": round(_pct(every, 0.99), 1),
        "valid_p50_ms": round(_pct(valid, 0.5), 1), "valid_p99_ms": round(_pct(valid, 0.99), 1),
        "rss_start_mib": round(rss_start / 1024, 1), "rss_every_10s_mib": rss_every_10s,
        "rss_end_mib": round(rss_end / 1024, 1),
    }


# ---------------------------------------------------------------------------------------------
# the review queue
# ---------------------------------------------------------------------------------------------

def _producer(path: str, items: int, seconds: float, out: str) -> None:
    queue = ReviewQueue(path)
    ids = []
    spacing = seconds / 3 / items  # every item enqueued within the first third of the window
    t_end = time.monotonic() + seconds
    for i in range(items):
        if time.monotonic() > t_end:
            break
        e = queue.enqueue({"candidate": f"memory {i}"}, questions=["ok"], meta={"n": i})
        ids.append(e.item.id)
        time.sleep(spacing * random.random())
    Path(out).write_text(json.dumps(ids))
    queue.close()


def _reviewers(path: str, proc: int, threads: int, items: int, seconds: float, out: str) -> None:
    log: list[tuple[str, int, str, float, float, float]] = []  # (op, item, reviewer, start, end, ms)
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def reviewer(t: int) -> None:
        queue = ReviewQueue(path)
        name = f"p{proc}t{t}"
        rng = random.Random(proc * 100 + t)
        idle_since = None
        while time.monotonic() < deadline:
            t0, w0 = time.perf_counter(), time.time()
            item = queue.claim(name, lease_s=600)
            ms, w1 = (time.perf_counter() - t0) * 1000, time.time()
            if item is None:
                with lock:
                    log.append(("claim_empty", -1, name, w0, w1, ms))
                counts = queue.counts()
                if counts.get("resolved", 0) >= items:
                    break
                idle_since = idle_since or time.monotonic()
                time.sleep(0.005)
                continue
            idle_since = None
            with lock:
                log.append(("claim", item.id, name, w0, w1, ms))
            time.sleep(rng.random() * 0.002)  # a reviewer reads it
            t0, w0 = time.perf_counter(), time.time()
            if rng.random() < 0.15:
                queue.release(item.id, name)
                op = "release"
            else:
                done = queue.resolve(item.id, {"ok": True}, reviewer=name)
                op = "resolve" if done.resolved_by == name else "resolve_not_mine"
            with lock:
                log.append((op, item.id, name, w0, time.time(), (time.perf_counter() - t0) * 1000))
        queue.close()

    workers = [threading.Thread(target=reviewer, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    Path(out).write_text(json.dumps(log))


def soak_queue(*, seconds: float, processes: int, reviewers: int, items: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "reviews.db")
        ReviewQueue(path).close()  # the schema, before anyone races to create it
        ctx = mp.get_context("spawn")
        t0 = time.monotonic()
        prod = ctx.Process(target=_producer, args=(path, items, seconds, f"{tmp}/produced.json"))
        revs = [ctx.Process(target=_reviewers, args=(path, p, reviewers, items, seconds, f"{tmp}/log{p}.json"))
                for p in range(processes)]
        prod.start()
        for r in revs:
            r.start()
        prod.join()
        for r in revs:
            r.join()
        wall = time.monotonic() - t0
        produced = json.loads(Path(f"{tmp}/produced.json").read_text())
        log = [tuple(x) for p in range(processes) for x in json.loads(Path(f"{tmp}/log{p}.json").read_text())]
        queue = ReviewQueue(path)
        stored = {it.id: it for it in queue.items()}
        queue.close()
    resolved_by_log: dict[int, list[str]] = defaultdict(list)
    holds: dict[int, list[tuple[float, float]]] = defaultdict(list)
    claims: dict[tuple[int, str], list[float]] = defaultdict(list)
    for op, item, who, start, end, _ in sorted(log, key=lambda e: e[3]):
        if op == "resolve":
            resolved_by_log[item].append(who)
        if op == "claim":
            claims[(item, who)].append(end)  # held from no later than the claim's return ...
        elif op in ("release", "resolve", "resolve_not_mine") and claims.get((item, who)):
            holds[item].append((claims[(item, who)].pop(0), start))  # ... until no earlier than the release's start
    # two reviewers hold one item at once only if one's claim returned before the other's release began:
    # intervals measured that way can only under-state a hold, so any overlap is a real double hand-out
    overlaps = 0
    for spans in holds.values():
        spans.sort()
        overlaps += sum(1 for (_, e1), (s2, _) in pairwise(spans) if s2 < e1)
    lost = [i for i in produced if i not in stored or stored[i].status != "resolved"]
    wrong_reviewer = [i for i in produced if i in stored and stored[i].status == "resolved"
                      and resolved_by_log.get(i) != [stored[i].resolved_by]]
    duplicated = [i for i, who in resolved_by_log.items() if len(who) > 1]
    ops = defaultdict(list)
    for op, _, _, _, _, ms in log:
        ops[op].append(ms)
    n_resolved = sum(1 for it in stored.values() if it.status == "resolved")
    return {
        "processes": processes, "reviewers_per_process": reviewers, "items_enqueued": len(produced),
        "seconds": round(wall, 1), "resolved": n_resolved, "lost": len(lost), "duplicated": len(duplicated),
        "claimed_twice_at_once": overlaps, "resolved_by_someone_else": len(wrong_reviewer),
        "resolve_not_mine": len(ops.get("resolve_not_mine", [])), "extra_items": len(set(stored) - set(produced)),
        "releases": len(ops.get("release", [])), "claims": len(ops.get("claim", [])),
        "throughput_resolved_per_s": round(n_resolved / wall, 1),
        "ops": {op: {"n": len(ms), "p50_ms": round(_pct(ms, 0.5), 2), "p99_ms": round(_pct(ms, 0.99), 2),
                     "mean_ms": round(statistics.fmean(ms), 2)} for op, ms in sorted(ops.items())},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--think-ms", type=float, default=0.0, help="mean pause of a client between requests")
    ap.add_argument("--model", type=Path, default=None, help="model directory (default: the shipped model)")
    ap.add_argument("--threads", type=int, default=1, help="onnxruntime threads of the server")
    ap.add_argument("--concurrency", type=int, default=2, help="the server's --concurrency (requests computing at once)")
    ap.add_argument("--max-body-bytes", type=int, default=512 * 1024)
    ap.add_argument("--queue-seconds", type=float, default=30)
    ap.add_argument("--processes", type=int, default=4)
    ap.add_argument("--reviewers", type=int, default=4, help="threads per reviewer process")
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--skip-server", action="store_true")
    ap.add_argument("--skip-queue", action="store_true")
    ap.add_argument("--json", type=Path, default=ROOT / "bench" / "results" / "soak.json")
    args = ap.parse_args()
    print(machine().line(), flush=True)  # every figure names its machine
    report: dict[str, Any] = {"cpus": os.cpu_count(), "machine": machine().line()}
    if not args.skip_server:
        s = soak_server(seconds=args.seconds, clients=args.clients, model=args.model, threads=args.threads,
                        max_body=args.max_body_bytes, concurrency=args.concurrency, think_ms=args.think_ms)
        report["server"] = s
        print(f"seams serve ({s['model']}), {s['clients']} clients (pausing a mean {s['think_ms']:g} ms) for {s['seconds']} s: {s['requests']} requests "
              f"({s['throughput_rps']}/s); by status {s['by_status']}; 5xx {s['5xx']}; transport errors "
              f"{s['transport_errors'] or 0}; unexpected statuses {s['unexpected_status'] or 'none'}")
        print(f"  threads {args.threads}, concurrency {s['concurrency']}; {s['sizing'] or 'max-tokens as given'}")
        print(f"  latency p50 {s['p50_ms']} ms, p99 {s['p99_ms']} ms; valid asks p50 {s['valid_p50_ms']} ms, "
              f"p99 {s['valid_p99_ms']} ms; server RSS {s['rss_start_mib']} MiB after the first answer, "
              f"{s['rss_every_10s_mib']} every 10 s, {s['rss_end_mib']} MiB at the end")
        for k, v in s["by_kind"].items():
            print(f"  {k:18} {v['statuses']}  p50 {v['p50_ms']} ms  p99 {v['p99_ms']} ms")
    if not args.skip_queue:
        q = soak_queue(seconds=args.queue_seconds, processes=args.processes, reviewers=args.reviewers,
                       items=args.items)
        report["queue"] = q
        print(f"review queue, {q['processes']}×{q['reviewers_per_process']} reviewers for {q['seconds']} s: "
              f"{q['resolved']}/{q['items_enqueued']} resolved ({q['throughput_resolved_per_s']}/s); lost {q['lost']}, "
              f"duplicated {q['duplicated']}, claimed twice at once {q['claimed_twice_at_once']}, resolved by "
              f"someone else {q['resolved_by_someone_else']}; {q['claims']} claims, {q['releases']} releases")
        for op, v in q["ops"].items():
            print(f"  {op:18} n {v['n']:6}  p50 {v['p50_ms']} ms  p99 {v['p99_ms']} ms")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
