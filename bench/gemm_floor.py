"""How fast can a MiniLM-L6-sized cross-encoder be on this CPU? The int8 matrix-product floor.

    python bench/gemm_floor.py [--threads 2] [--tokens 32,128]

A transformer layer's time is mostly its six matrix products (Q, K, V, output, FFN up, FFN
down). This builds a graph of *only* those products for all-MiniLM-L6-v2's shapes (6 layers,
hidden 384, FFN 1536) — no attention scores, softmax, norms, GELU or embeddings — quantises it the
way the shipped model is quantised (`quantize_dynamic`, int8, per channel), and times it with
onnxruntime beside the shipped model itself, one pair and batches of 16, at the same lengths.

The products are a lower bound on the real model's time: if they alone miss a latency goal,
no runtime setting meets it with this architecture, and the goal needs fewer or narrower layers.
The last lines say how many layers of this width would fit the local-judge goals (p50 ≤ 3 ms per
pair, ≥ 400 pairs/s batched) if the rest of the model cost nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper, save
from onnxruntime.quantization import QuantType, quantize_dynamic

from seams.judges.local.runtime import load_session, machine

ROOT = Path(__file__).resolve().parent.parent
HIDDEN, FFN, LAYERS = 384, 1536, 6
GOAL_P50_MS, GOAL_PAIRS_S = 3.0, 400.0


def gemm_graph(path: Path) -> None:
    """The six products of each layer, chained so nothing is folded away."""
    rng = np.random.default_rng(0)
    nodes, inits, x = [], [], "x"
    for layer in range(LAYERS):
        outs = []
        for name in "qkvo":
            w = f"w{layer}{name}"
            inits.append(numpy_helper.from_array((rng.standard_normal((HIDDEN, HIDDEN)) * 0.05).astype(np.float32), w))
            nodes.append(helper.make_node("MatMul", [x, w], [f"y{layer}{name}"]))
            outs.append(f"y{layer}{name}")
        nodes.append(helper.make_node("Sum", outs, [f"s{layer}"]))
        up, down = f"w{layer}up", f"w{layer}down"
        inits += [numpy_helper.from_array((rng.standard_normal((HIDDEN, FFN)) * 0.05).astype(np.float32), up),
                  numpy_helper.from_array((rng.standard_normal((FFN, HIDDEN)) * 0.05).astype(np.float32), down)]
        nodes += [helper.make_node("MatMul", [f"s{layer}", up], [f"h{layer}"]),
                  helper.make_node("MatMul", [f"h{layer}", down], [f"x{layer + 1}"])]
        x = f"x{layer + 1}"
    graph = helper.make_graph(nodes, "gemms", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", HIDDEN])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["n", HIDDEN])], inits)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def session(path: Path, threads: int) -> ort.InferenceSession:
    """The session `LocalJudge` makes (exact int8 on every CPU), so the floor is the shipped path's."""
    return load_session(path, threads)


def per_pair_ms(run, batch: int, reps: int) -> float:
    for _ in range(10):
        run()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000 / batch


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tokens", default="32,128")
    ap.add_argument("--reps", type=int, default=60)
    ap.add_argument("--model", type=Path, default=ROOT / "seams" / "models" / "seams-minilm")
    args = ap.parse_args(argv)
    print(machine().line(), flush=True)  # every figure names its machine

    tmp = Path(tempfile.mkdtemp())
    gemm_graph(tmp / "fp32.onnx")
    quantize_dynamic(str(tmp / "fp32.onnx"), str(tmp / "int8.onnx"), weight_type=QuantType.QInt8, per_channel=True)
    gemm = {"int8": session(tmp / "int8.onnx", args.threads), "fp32": session(tmp / "fp32.onnx", args.threads)}
    cfg = json.loads((args.model / "config.json").read_text())
    model = session(args.model / cfg["onnx"], args.threads)
    rng = np.random.default_rng(0)
    print(f"onnxruntime {ort.__version__}, {args.threads} threads; per-pair p50 in ms (median of {args.reps} runs)")
    print(f"{'tokens':>6} {'batch':>5} {'products fp32':>14} {'products int8':>14} {'model int8':>11} "
          f"{'products/model':>15} {'GMAC/s int8':>12}")
    for tokens in (int(t) for t in args.tokens.split(",")):
        macs = LAYERS * tokens * (4 * HIDDEN * HIDDEN + 2 * HIDDEN * FFN)
        for batch in (1, 16):
            x = rng.standard_normal((tokens * batch, HIDDEN)).astype(np.float32)
            ids = rng.integers(1000, 29000, size=(batch, tokens), dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
            feed = {i.name: feed[i.name] for i in model.get_inputs()}
            f32 = per_pair_ms(lambda x=x: gemm["fp32"].run(None, {"x": x}), batch, args.reps)
            i8 = per_pair_ms(lambda x=x: gemm["int8"].run(None, {"x": x}), batch, args.reps)
            full = per_pair_ms(lambda feed=feed: model.run(None, feed), batch, args.reps)
            print(f"{tokens:>6} {batch:>5} {f32:>14.2f} {i8:>14.2f} {full:>11.2f} {i8 / full:>15.2f} "
                  f"{macs / (i8 / 1000) / 1e9:>12.0f}")
            if tokens == 128:
                goal = GOAL_P50_MS if batch == 1 else 1000 / GOAL_PAIRS_S
                layers = LAYERS * goal / i8
                print(f"{'':>6} {'':>5} goal {goal:.1f} ms/pair: at most {layers:.1f} layers of this width, "
                      f"even if attention, norms and embeddings were free")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
