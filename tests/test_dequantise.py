"""`training.dequantise` on an int8 graph named as the shipped one is: wrapper prefixes twice over.

The shipped 0.6 graph's weights are called `m.m.bert.…` (the features wrapper around the pooler
export around the model); a walk that stripped one `m.` gave `m.bert.…` and stopped with "names do
not match". The graph here is tiny and built by hand, but it is quantised by the same
`quantize_dynamic` call the export uses, so its initializer names have the shipped shapes:
`m.m.<torch name>` for embeddings and biases, `onnx::MatMul_N_quantized` for products.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from training.dequantise import state_dict_from_onnx

quantization = pytest.importorskip("onnxruntime.quantization")

H, V = 8, 20
_W = "m.m."


def _fp32_graph(rng: np.random.Generator) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """Embeddings → LayerNorm → one product + bias → mean over tokens → classifier; the torch
    names and fp32 values of every weight, as the torch state dict holds them."""
    torch_weights = {
        "bert.embeddings.word_embeddings.weight": rng.normal(size=(V, H)).astype(np.float32),
        "bert.embeddings.LayerNorm.weight": rng.normal(1.0, 0.1, size=H).astype(np.float32),
        "bert.embeddings.LayerNorm.bias": rng.normal(0.0, 0.1, size=H).astype(np.float32),
        "bert.encoder.layer.0.attention.self.query.weight": rng.normal(size=(H, H)).astype(np.float32),
        "bert.encoder.layer.0.attention.self.query.bias": rng.normal(size=H).astype(np.float32),
        "classifier.weight": rng.normal(size=(1, H)).astype(np.float32),
        "classifier.bias": rng.normal(size=1).astype(np.float32),
    }
    t = torch_weights
    inits = [
        numpy_helper.from_array(t["bert.embeddings.word_embeddings.weight"], _W + "bert.embeddings.word_embeddings.weight"),
        numpy_helper.from_array(t["bert.embeddings.LayerNorm.weight"], _W + "bert.embeddings.LayerNorm.weight"),
        numpy_helper.from_array(t["bert.embeddings.LayerNorm.bias"], _W + "bert.embeddings.LayerNorm.bias"),
        # torch's exporter names a Linear's weight by the MatMul it feeds, stored as x @ W (transposed)
        numpy_helper.from_array(t["bert.encoder.layer.0.attention.self.query.weight"].T.copy(), "onnx::MatMul_11"),
        numpy_helper.from_array(t["bert.encoder.layer.0.attention.self.query.bias"],
                                _W + "bert.encoder.layer.0.attention.self.query.bias"),
        numpy_helper.from_array(t["classifier.weight"].T.copy(), "onnx::MatMul_12"),
        numpy_helper.from_array(t["classifier.bias"], _W + "classifier.bias"),
    ]
    nodes = [
        helper.make_node("Gather", [_W + "bert.embeddings.word_embeddings.weight", "input_ids"], ["emb"]),
        helper.make_node("LayerNormalization", ["emb", _W + "bert.embeddings.LayerNorm.weight",
                                                _W + "bert.embeddings.LayerNorm.bias"], ["ln"], axis=-1),
        helper.make_node("MatMul", ["ln", "onnx::MatMul_11"], ["q0"]),
        helper.make_node("Add", ["q0", _W + "bert.encoder.layer.0.attention.self.query.bias"], ["q"]),
        helper.make_node("ReduceMean", ["q"], ["pooled"], axes=[1], keepdims=0),
        helper.make_node("MatMul", ["pooled", "onnx::MatMul_12"], ["c0"]),
        helper.make_node("Add", ["c0", _W + "classifier.bias"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes, "tiny-bert",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])],
        initializer=inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), torch_weights


def test_dequantise_reads_a_twice_wrapped_int8_graph(tmp_path: Path) -> None:
    model, torch_weights = _fp32_graph(np.random.default_rng(3))
    fp32, int8 = tmp_path / "fp32.onnx", tmp_path / "int8.onnx"
    onnx.save(model, fp32)
    quantization.quantize_dynamic(str(fp32), str(int8), weight_type=quantization.QuantType.QInt8, per_channel=True)
    names = {i.name for i in onnx.load(str(int8)).graph.initializer}
    assert "onnx::MatMul_11_quantized" in names and _W + "bert.embeddings.word_embeddings.weight_quantized" in names

    got = state_dict_from_onnx(int8)

    assert set(got) == set(torch_weights)  # no `m.` left on any name, nothing missing or extra
    for name, want in torch_weights.items():
        assert got[name].shape == want.shape, name
        # int8 keeps each weight to within half a quantisation step of its column's range
        step = (np.abs(want).max() * 2 / 254) if want.ndim > 1 else 0.0
        assert np.max(np.abs(got[name] - want)) <= step + 1e-6, name


def test_weight_only_keeps_the_int8_weights_and_computes_in_fp32(tmp_path: Path) -> None:
    """`training.weight_only`: no activation is quantised any more, so through `load_session` a
    row's logit equals the reference evaluator's and no longer moves with its batch mates."""
    from onnx.reference import ReferenceEvaluator

    from seams.judges.local.runtime import load_session
    from training.weight_only import weight_only

    model, _ = _fp32_graph(np.random.default_rng(5))
    fp32, int8, wonly = tmp_path / "fp32.onnx", tmp_path / "int8.onnx", tmp_path / "wonly.onnx"
    onnx.save(model, fp32)
    quantization.quantize_dynamic(str(fp32), str(int8), weight_type=quantization.QuantType.QInt8, per_channel=True)
    counts = weight_only(int8, wonly)
    assert counts == {"rewritten": 2, "MatMulInteger left": 0, "DynamicQuantizeLinear left": 0}
    graph = onnx.load(str(wonly)).graph
    kinds = {i.name: i.data_type for i in graph.initializer}
    assert kinds["onnx::MatMul_11_quantized"] == TensorProto.INT8  # the weights stay int8 on disk

    rng = np.random.default_rng(0)
    ids = rng.integers(0, V, size=(4, 6), dtype=np.int64)
    got = load_session(wonly, 1).run(["logits"], {"input_ids": ids})[0]
    alone = np.concatenate([load_session(wonly, 1).run(["logits"], {"input_ids": ids[i:i + 1]})[0] for i in range(4)])
    ref_model = onnx.load(str(wonly))
    for op in ref_model.opset_import:
        op.version = max(op.version, 19)  # the reference evaluator has DequantizeLinear from opset 19
    ref = ReferenceEvaluator(ref_model).run(["logits"], {"input_ids": ids})[0]
    assert np.max(np.abs(got - ref)) < 1e-4
    assert np.max(np.abs(got - alone)) < 1e-5
    dynamic = load_session(int8, 1)
    batched = dynamic.run(["logits"], {"input_ids": ids})[0]
    single = np.concatenate([dynamic.run(["logits"], {"input_ids": ids[i:i + 1]})[0] for i in range(4)])
    assert np.max(np.abs(batched - single)) > 1e-4  # what the rewrite removes: batch mates move a logit
