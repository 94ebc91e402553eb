"""Batch scoring throughput: `seams score` single-process against the Ray engine on this machine,
and what one Ray worker costs (start-up with its model load, memory).

    python bench/score_scale.py                      # 2000 traces, the shipped model, 3 rounds
    python bench/score_scale.py --items 5000 --workers 1 2 --rounds 5 --json out.json

Every run scores the same traces (short support-ticket texts) with the built-in-style gate below
into a fresh output file, through `seams.traces.score` as a caller runs it (reading, batching,
deciding, fsynced writing included). Figures are items/s and ratios against the single-process
run with onnxruntime's default threads, measured by the same command; the load average is printed
because other work on the machine slows every row. A benchmark, never a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from seams import Rubric
from seams.judges.local import LocalJudge
from seams.judges.local.runtime import machine
from seams.traces import score

RUBRIC = Rubric.loads("""\
name: bench-refund
state: text
questions:
  refund:
    type: noul
    instructions: Is the customer asking for money back?
policy:
  outcomes: {refund: act, answer: refuse, review: review}
  rules:
    - id: refund
      question: refund
      high: 0.8
      low: 0.2
      then: refund
      else: answer
  default: answer
""")
TEXTS = [
    "I was charged twice for my subscription this month, please return the second payment.",
    "How do I change the email address on my account?",
    "The app crashes every time I open the settings page on my phone.",
    "I cancelled last week but you still took the money. I want it back.",
    "Can you tell me when the new version will be available in my country?",
    "Your courier left the parcel in the rain and everything inside is ruined; refund me.",
]


def write_traces(path: Path, n: int) -> Path:
    with path.open("w") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"t{i}", "state": f"{TEXTS[i % len(TEXTS)]} (ticket {i})"}) + "\n")
    return path


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def scorer_pids() -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if b"MapWorker(MapBatches(Scorer))" in (entry / "cmdline").read_bytes():
                    out.append(int(entry.name))
            except OSError:
                pass
    return out


def run_local(traces: Path, root: Path, threads: int | None, batch: int) -> dict[str, Any]:
    judge = LocalJudge(intra_op_threads=threads)
    s = score(RUBRIC, traces, root / f"local-{threads}.out.jsonl", judge=judge, batch_size=batch)
    return {"engine": "local", "threads": threads or "default", "items": s.scored, "seconds": s.seconds,
            "items_per_s": s.items_per_s}


def run_ray(traces: Path, root: Path, workers: int, batch: int) -> dict[str, Any]:
    import threading

    out = root / f"ray-{workers}.out.jsonl"
    first_line: list[float] = []
    rss: list[float] = []
    started = time.perf_counter()

    def watch() -> None:  # time to the first written line (pool start + model loads) and worker memory
        while not done.is_set():
            if not first_line and out.exists() and out.stat().st_size:
                first_line.append(time.perf_counter() - started)
            for pid in scorer_pids():
                mb = rss_mb(pid)
                if mb:
                    rss.append(mb)
            time.sleep(0.1)

    done = threading.Event()
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    s = score(RUBRIC, traces, out, engine="ray", workers=workers, batch_size=batch,
              judge_factory=functools.partial(LocalJudge, intra_op_threads=1))
    done.set()
    watcher.join()
    return {"engine": "ray", "workers": workers, "items": s.scored, "seconds": s.seconds,
            "items_per_s": s.items_per_s, "to_first_line_s": first_line[0] if first_line else None,
            "worker_rss_mb": max(rss) if rss else None}


def actor_startup() -> float:
    """Seconds from asking for a scoring actor to its judge being loaded: the fixed cost of a worker."""
    import ray

    from seams.integrations.ray import Scorer

    t = time.perf_counter()
    actor = ray.remote(num_cpus=1)(Scorer).remote(RUBRIC, functools.partial(LocalJudge, intra_op_threads=1))
    ray.get(actor.__ray_ready__.remote())
    took = time.perf_counter() - t
    ray.kill(actor)
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=3, help="turns each configuration takes; the median is shown")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    print(machine().line(), flush=True)  # every figure names its machine

    import ray

    print(f"cores {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}; {args.items} traces, batch {args.batch_size}")
    t = time.perf_counter()
    LocalJudge(intra_op_threads=1)
    load_s = time.perf_counter() - t
    print(f"loading the shipped model once: {load_s:.2f} s")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        traces = write_traces(root / "traces.jsonl", args.items)
        t = time.perf_counter()
        ray.init(num_cpus=max(args.workers), include_dashboard=False, log_to_driver=False)
        init_s = time.perf_counter() - t
        print(f"ray.init (a local cluster of {max(args.workers)} CPUs): {init_s:.1f} s")
        startup_s = actor_startup()
        print(f"one worker's start-up (a Ray actor process, then the shipped model loaded in it): {startup_s:.2f} s")
        # the configurations take turns, round after round, so a change in the machine's other load
        # falls on all of them; each row is the median round
        runs: dict[str, list[dict[str, Any]]] = {}
        for _ in range(args.rounds):
            for key, go in [("local-default", lambda: run_local(traces, root, None, args.batch_size)),
                            ("local-1", lambda: run_local(traces, root, 1, args.batch_size)),
                            *[(f"ray-{w}", functools.partial(run_ray, traces, root, w, args.batch_size))
                              for w in args.workers]]:
                for old in root.glob("*.out.jsonl"):
                    old.unlink()
                runs.setdefault(key, []).append(go())
        ray.shutdown()
    rows = [sorted(rs, key=lambda r: r["items_per_s"])[len(rs) // 2] | {"rounds": [round(r["items_per_s"]) for r in rs]}
            for rs in runs.values()]
    base = rows[0]["items_per_s"]
    print(f"{'engine':<8}{'setup':<14}{'items/s':>9}{'× local':>9}{'first line s':>14}{'worker MB':>11}  rounds")
    for r in rows:
        setup = f"threads {r['threads']}" if r["engine"] == "local" else f"workers {r['workers']}"
        first = f"{r['to_first_line_s']:.1f}" if r.get("to_first_line_s") else "-"
        mem = f"{r['worker_rss_mb']:.0f}" if r.get("worker_rss_mb") else "-"
        print(f"{r['engine']:<8}{setup:<14}{r['items_per_s']:>9.0f}{r['items_per_s'] / base:>9.2f}{first:>14}{mem:>11}  {r['rounds']}")
    if args.json:
        args.json.write_text(json.dumps({"load_average": os.getloadavg()[0], "model_load_s": load_s,
                                         "ray_init_s": init_s, "worker_startup_s": startup_s, "rows": rows},
                                        indent=2) + "\n")


if __name__ == "__main__":
    main()
