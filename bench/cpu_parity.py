"""Same answers on every CPU: how far each way of running the shipped graph is from exact int8, and what it costs.

    python bench/cpu_parity.py [--threads 1,2] [--tokens 32,128] [--reps 30] [--json bench/results/cpu_parity.json]

Three ways of running the cross-encoder, side by side in one process on the same feeds:

* **onnxruntime defaults**: `InferenceSession(path)` with nothing set — what seams did before
  (saturating u8s8 kernels on x86 CPUs without VNNI);
* **exact int8 (shipped)**: `seams.judges.local.runtime.load_session`, what `LocalJudge` uses;
* **basic optimisation**: the same options at `ORT_ENABLE_BASIC` (no fusions: what the
  shipped level buys), and **no spinning**: the shipped session with its worker threads asleep
  between runs (`session.intra_op.allow_spinning=0`), which matters when other work shares the cores;
* **weight-only fp32**: the same int8 weights behind `DequantizeLinear`, fp32 activations
  (`training/weight_only.py`), through the same `load_session`.

Parity is against `tests/data/cpu_parity.json` (onnx's reference evaluator, exact int8, on the 60
pairs `LocalJudge` feeds for `scripts/cpu_parity_reference.py`); the weight-only graph is also held
to its own reference (the evaluator on that graph, first 20 pairs) and its distance from exact
int8 is printed, since it is another function. Speed: p50 per pair of a one-pair run at each
length, wall and CPU (process) time, the latter steadier on a loaded machine; and per pair of a
batch of 16 for the weight-only graph, whose logits do not depend on batch mates. The machine line
(CPU, instruction sets, load, library versions) heads the output.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from cpu_parity_reference import record_noul_feeds, reference_evaluator  # noqa: E402

from seams.judges.local import LocalJudge  # noqa: E402
from seams.judges.local.runtime import UNSTABLE_FUSIONS, load_session, machine, session_options  # noqa: E402
from training.weight_only import weight_only  # noqa: E402

MODEL = ROOT / "seams" / "models" / "seams-minilm"
REFERENCE = ROOT / "tests" / "data" / "cpu_parity.json"


def _default_session(path: Path, threads: int) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.log_severity_level = 3
    return ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])


def _variant_session(path: Path, threads: int, *, basic: bool = False, spin: bool = True) -> ort.InferenceSession:
    """The shipped options with one change: without the extended fusions (what ORT_ENABLE_ALL buys),
    or with the worker threads sleeping instead of spinning between runs (for a loaded machine)."""
    opts = session_options(threads)
    if basic:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    if not spin:
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"],
                                disabled_optimizers=[] if basic else list(UNSTABLE_FUSIONS))


def _feeds() -> list[dict[str, np.ndarray]]:
    """The exact feeds `LocalJudge` sends for the 60 reference pairs."""
    return record_noul_feeds(LocalJudge(MODEL, intra_op_threads=1))


def _logits(sess: ort.InferenceSession, feeds: list[dict[str, np.ndarray]]) -> np.ndarray:
    return np.array([float(np.asarray(sess.run(["logits"], f)[0]).ravel()[0]) for f in feeds])


def _gap(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    d = np.abs(a - b)
    return {"mean": round(float(d.mean()), 5), "max": round(float(d.max()), 5)}


def _timed(sess: ort.InferenceSession, tokens: int, batch: int, reps: int) -> dict[str, float]:
    rng = np.random.default_rng(0)
    ids = rng.integers(1000, 20000, size=(batch, tokens), dtype=np.int64)
    ids[:, 0], ids[:, -1] = 101, 102
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    for _ in range(3):
        sess.run(["logits"], feed)
    wall, cpu = [], []
    for _ in range(reps):
        w, c = time.perf_counter(), time.process_time()
        sess.run(["logits"], feed)
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return {"wall_ms": round(1000 * statistics.median(wall) / batch, 2),
            "cpu_ms": round(1000 * statistics.median(cpu) / batch, 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", default="1,2", help="intra-op thread counts to time")
    ap.add_argument("--tokens", default="32,128", help="pair lengths to time")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    print(machine().line(), flush=True)  # every figure names its machine
    threads = [int(t) for t in args.threads.split(",")]
    lengths = [int(t) for t in args.tokens.split(",")]
    want = np.array([r["logit"] for r in json.loads(REFERENCE.read_text(encoding="utf-8"))["noul"]])
    feeds = _feeds()
    report: dict[str, Any] = {"machine": machine().to_dict(), "parity": {}, "speed": {}}
    with tempfile.TemporaryDirectory() as tmp:
        wonly = Path(tmp) / "weight_only.onnx"
        weight_only(MODEL / "model.onnx", wonly)
        makers = {
            "onnxruntime defaults": lambda t: _default_session(MODEL / "model.onnx", t),
            "exact int8 (shipped)": lambda t: load_session(MODEL / "model.onnx", t),
            "basic optimisation": lambda t: _variant_session(MODEL / "model.onnx", t, basic=True),
            "exact int8, no spinning": lambda t: _variant_session(MODEL / "model.onnx", t, spin=False),
            "weight-only fp32": lambda t: load_session(wonly, t),
        }
        got = {name: _logits(make(1), feeds) for name, make in makers.items()}
        own = _logits(reference_evaluator(wonly), feeds[:20])
        report["parity"] = {
            "onnxruntime defaults vs exact int8": _gap(got["onnxruntime defaults"], want),
            "exact int8 (shipped) vs exact int8": _gap(got["exact int8 (shipped)"], want),
            "basic optimisation vs exact int8": _gap(got["basic optimisation"], want),
            "weight-only fp32 vs its reference (20 pairs)": _gap(got["weight-only fp32"][:20], own),
            "weight-only fp32 vs exact int8": _gap(got["weight-only fp32"], want),
        }
        print("\nparity on the 60 reference pairs (|Δlogit|)")
        for name, gap in report["parity"].items():
            print(f"  {name:<46} mean {gap['mean']:.4f}  max {gap['max']:.4f}")
        print("\np50 per pair, ms (wall / CPU)")
        for name, make in makers.items():
            for t in threads:
                sess = make(t)
                for n in lengths:
                    row = {"one": _timed(sess, n, 1, args.reps)}
                    if name == "weight-only fp32":
                        row["batch16"] = _timed(sess, n, 16, max(5, args.reps // 6))
                    report["speed"][f"{name} | {t} thread(s) | {n} tokens"] = row
                    extra = (f"   batch of 16: {row['batch16']['wall_ms']:.1f} / {row['batch16']['cpu_ms']:.1f}"
                             if "batch16" in row else "")
                    print(f"  {name:<22} {t} thr {n:>4} tok: {row['one']['wall_ms']:6.1f} / {row['one']['cpu_ms']:6.1f}{extra}",
                          flush=True)
    base = report["speed"]
    for n in lengths:
        for t in threads:
            d = base[f"onnxruntime defaults | {t} thread(s) | {n} tokens"]["one"]["cpu_ms"]
            e = base[f"exact int8 (shipped) | {t} thread(s) | {n} tokens"]["one"]["cpu_ms"]
            w = base[f"weight-only fp32 | {t} thread(s) | {n} tokens"]["one"]["cpu_ms"]
            b = base[f"basic optimisation | {t} thread(s) | {n} tokens"]["one"]["cpu_ms"]
            print(f"  CPU ratios at {n} tokens, {t} thread(s): exact/defaults ×{e / d:.2f}, "
                  f"basic/exact ×{b / e:.2f}, weight-only/exact ×{w / e:.2f}")
    print(machine().line())
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
