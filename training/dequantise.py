"""Recover fp32 torch weights from an int8 export, to start a training phase from a shipped model.

    python -m training.dequantise seams/models/seams-minilm --out ../train_runs/from05/final

The shipped graphs are `quantize_dynamic` exports: every weight matrix is int8 with per-channel
scales and zero points, every bias and LayerNorm kept in fp32. scale × (q − zero point) gives the
weights back to within the quantisation step, which is how a later session can continue from a
model whose torch weights were not kept (0.5's). Matrix weights are anonymous in the graph
(`onnx::MatMul_720`), so each is named by the bias its product is added to.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

#: The prefix the export's wrapper modules add to every named weight, once per wrapper: 0.5's graph
#: has one (`m.bert.…`), 0.6's two (`m.m.bert.…`, features wrapped around the pooler export).
_WRAPPER = "m."


def _torch_name(name: str) -> str:
    """`m.m.bert.encoder…` → `bert.encoder…`: every wrapper prefix off, however many there are."""
    while name.startswith(_WRAPPER):
        name = name[len(_WRAPPER):]
    return name


def _dequantised(inits: dict[str, Any], base: str) -> np.ndarray:
    from onnx import numpy_helper

    q = numpy_helper.to_array(inits[f"{base}_quantized"]).astype(np.float32)
    scale = numpy_helper.to_array(inits[f"{base}_scale"]).astype(np.float32)
    zero = numpy_helper.to_array(inits[f"{base}_zero_point"]).astype(np.float32)
    return (q - zero) * scale


def state_dict_from_onnx(onnx_path: Path) -> dict[str, np.ndarray]:
    """torch-style names (`bert.…`, `classifier.…`) → fp32 arrays, for a [CLS]-pooler export."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(onnx_path)).graph
    inits = {i.name: i for i in graph.initializer}
    consumers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    out: dict[str, np.ndarray] = {}
    for name, init in inits.items():
        if name.endswith(("_quantized", "_scale", "_zero_point")):
            continue
        out[_torch_name(name)] = numpy_helper.to_array(init).astype(np.float32)
    for name in inits:
        if not name.endswith("_quantized"):
            continue
        base = name[: -len("_quantized")]
        w = _dequantised(inits, base)
        if base.endswith("_Transposed"):  # a named product stored as x @ Wᵀ: torch keeps W
            out[_torch_name(base).removesuffix("_Transposed")] = np.ascontiguousarray(w.T)
            continue
        if base.startswith(_WRAPPER):  # embeddings keep their names (a Gather, not a product)
            out[_torch_name(base)] = w
            continue
        bias = _bias_after(consumers, name, inits)
        if bias is None:
            raise ValueError(f"{onnx_path}: cannot tell which layer {base} belongs to")
        layer = _torch_name(bias).removesuffix(".bias")
        matrix = w.T  # the graph multiplies x @ W; torch's Linear stores W transposed
        out[f"{layer}.weight"] = np.ascontiguousarray(matrix)
    return out


def _bias_after(consumers: dict[str, list[Any]], start: str, inits: dict[str, Any]) -> str | None:
    """The fp32 bias initializer added to the product that reads `start` (a short walk forward)."""
    frontier, seen = [start], set()
    for _ in range(6):
        nxt = []
        for tensor in frontier:
            for node in consumers.get(tensor, []):
                if node.op_type == "Add":
                    for i in node.input:
                        if i in inits and i.endswith(".bias"):
                            return i
                for o in node.output:
                    if o not in seen:
                        seen.add(o)
                        nxt.append(o)
        frontier = nxt
    return None


def dequantise(model_dir: Path, out: Path) -> int:
    """Write the int8 model in `model_dir` back as an fp32 Hugging Face classifier in `out` (a run's
    `final/`, `--init-from`-able); returns how many tensors it read. Fails if any name is unmatched."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoConfig, AutoModelForSequenceClassification

    from .train import base_model_dir

    cfg = json.loads((model_dir / "config.json").read_text())
    weights = state_dict_from_onnx(model_dir / cfg["onnx"])
    hf_cfg = AutoConfig.from_pretrained(base_model_dir(), num_labels=1)
    model = AutoModelForSequenceClassification.from_config(hf_cfg)
    own = model.state_dict()
    missing = sorted(set(own) - set(weights) - {"bert.embeddings.position_ids"})
    extra = sorted(set(weights) - set(own))
    if missing or extra:
        raise SystemExit(f"names do not match: missing {missing[:5]}, extra {extra[:5]}")
    model.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()}, strict=False)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    (out / "seams_head.json").write_text(json.dumps({"head": "cls", "dequantised_from": cfg["model_id"]}))
    print(f"wrote {out} ({len(weights)} tensors from {cfg['model_id']})")
    return len(weights)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model_dir", type=Path)
    ap.add_argument("--out", type=Path, required=True, help="a run's final/ directory to write")
    args = ap.parse_args()
    dequantise(args.model_dir, args.out)


if __name__ == "__main__":
    main()
