"""Give an exported graph a `features` output: the vector its logit is read from.

    python -m training.add_features MODEL_DIR --tensor /m/bert/pooler/activation/Tanh_output_0

Heads (docs/heads.md) are fitted over a model's logit and the pooled pair representation its
classifier reads. `training/export.py` outputs it for a mean-pooled head; models exported before
that (0.5, a [CLS]-pooler head) get it here without re-exporting: an `Identity` node exposes the
named tensor, so every existing output, and so every logit and the model id, stays as it was bit
for bit. The config then declares it (`"features": "features"`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

FEATURES = "features"


def add_features(model_dir: Path, tensor: str) -> int:
    import onnx
    from onnx import TensorProto, helper, shape_inference

    cfg_path = model_dir / "config.json"
    cfg = json.loads(cfg_path.read_text())
    path = model_dir / cfg["onnx"]
    model = onnx.load(str(path))
    graph = model.graph
    if FEATURES in {o.name for o in graph.output}:
        raise SystemExit(f"{path}: already has a {FEATURES!r} output")
    inferred = {v.name: v for v in shape_inference.infer_shapes(model).graph.value_info}
    if tensor not in inferred:
        raise SystemExit(f"{path}: no tensor {tensor!r} in the graph")
    dims = inferred[tensor].type.tensor_type.shape.dim
    width = dims[-1].dim_value
    graph.node.append(helper.make_node("Identity", [tensor], [FEATURES], name="features_identity"))
    graph.output.append(helper.make_tensor_value_info(FEATURES, TensorProto.FLOAT, ["batch", width]))
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    cfg[FEATURES] = FEATURES
    cfg_path.write_text(json.dumps(cfg, indent=2) + "\n")
    return width


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model_dir", type=Path)
    ap.add_argument("--tensor", required=True, help="the graph tensor the classifier reads")
    args = ap.parse_args()
    print(f"{args.model_dir}: features output of width {add_features(args.model_dir, args.tensor)}")


if __name__ == "__main__":
    main()
