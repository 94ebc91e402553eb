"""Turn a dynamically quantised int8 graph into a weight-only one: int8 on disk, fp32 arithmetic.

    python -m training.weight_only seams/models/seams-minilm/model.onnx OUT.onnx

`quantize_dynamic` graphs quantise every activation at run time (`DynamicQuantizeLinear`), and
that step is ill-conditioned: a float rounding difference of one unit in the last place between
two CPUs' kernels can change a uint8 code or a tensor's scale, and the change grows through the
layers. With the non-saturating kernels (`seams/judges/local/runtime.py`) the shipped graph is
within mean |Δlogit| 0.014 of exact int8 on the 60 reference pairs, but up to 0.31 on one of them
(`bench/cpu_parity.py`).

This rewrite keeps each weight matrix exactly as quantised (the same int8 values, per-channel
scales and zero points) behind a `DequantizeLinear`, and multiplies fp32 activations by it:
`MatMul(x, DequantizeLinear(W_q))` in place of `DynamicQuantizeLinear(x)` → `MatMulInteger` →
`Cast` → `Mul(scale)`. With `session.disable_quant_qdq` onnxruntime folds each `DequantizeLinear`
into an fp32 weight at load, so the file stays int8-sized and the arithmetic is fp32 everywhere:
equal to onnx's reference evaluator to 1e-5 on every CPU, and no longer dependent on batch mates.
It costs time (×1.2–1.8 CPU per pair on an AVX2-only EPYC; docs/local-judge.md) and it is a
different function from the dynamic graph (mean |Δlogit| about 0.19), so a model shipped this way
is a new model id and every calibration is refitted against it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def weight_only(src: Path, dst: Path) -> dict[str, int]:
    """Write `dst`: `src` with every `MatMulInteger` on an int8 weight made an fp32 `MatMul` on
    `DequantizeLinear(weight)`; returns the counts of the ops rewritten and left."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(src))
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    consumers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)

    replaced: dict[int, list[Any]] = {}
    dropped: set[int] = set()
    for node in graph.node:
        if node.op_type != "MatMulInteger" or node.input[1] not in inits:
            continue
        xq, wq, _, wzp = node.input
        quantise = producer[xq]
        (cast,) = consumers[node.output[0]]
        (rescale,) = consumers[cast.output[0]]
        if quantise.op_type != "DynamicQuantizeLinear" or cast.op_type != "Cast" or rescale.op_type != "Mul":
            raise ValueError(f"{src}: {node.name} is not a quantize_dynamic product")
        scales = producer[next(i for i in rescale.input if i != cast.output[0])]
        wscale = next(i for i in scales.input if i in inits)
        per_channel = numpy_helper.to_array(inits[wscale]).size > 1
        base = wq.removesuffix("_quantized")
        dq = helper.make_node("DequantizeLinear", [wq, wscale, wzp], [f"{base}_weight"], name=f"{base}_dequantize",
                              **({"axis": 1} if per_channel else {}))
        mm = helper.make_node("MatMul", [quantise.input[0], f"{base}_weight"], [rescale.output[0]],
                              name=f"{base}_matmul")
        replaced[id(node)] = [dq, mm]
        dropped |= {id(cast), id(rescale), id(scales)}

    nodes: list[Any] = []
    for node in graph.node:
        if id(node) in dropped:
            continue
        nodes.extend(replaced.get(id(node), [node]))
    outputs = {o.name for o in graph.output}
    while True:  # drop what fed only the removed nodes (activation quantisers, their scale products)
        used = {i for n in nodes for i in n.input} | outputs
        kept = [n for n in nodes if any(o in used for o in n.output)]
        if len(kept) == len(nodes):
            break
        nodes = kept
    del graph.node[:]
    graph.node.extend(nodes)
    used = {i for n in nodes for i in n.input}
    live = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(live)
    onnx.checker.check_model(model)
    onnx.save(model, str(dst))
    return {"rewritten": len(replaced), "MatMulInteger left": sum(n.op_type == "MatMulInteger" for n in nodes),
            "DynamicQuantizeLinear left": sum(n.op_type == "DynamicQuantizeLinear" for n in nodes)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", type=Path)
    ap.add_argument("dst", type=Path)
    args = ap.parse_args()
    print(f"wrote {args.dst}: {weight_only(args.src, args.dst)}")


if __name__ == "__main__":
    main()
