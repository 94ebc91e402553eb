"""A tiny cross-encoder whose outputs the tests control, built with `onnx` and `tokenizers` only.

The graph has the real model's interface (`input_ids`, `attention_mask`, `token_type_ids` in,
`logits` [batch, 1] out) and computes a bag-of-words score:

    logit = bias + Σ_hypothesis w_hyp[t] + Σ_state w_state[t] + Σ_v match[v] · min(n_hyp[v], n_state[v])

With `features=True` the graph has a second output, `features` [batch, 3·V]: the hypothesis's
word counts, the state's, and the counts of words on both sides, the pair representation a head
reads. It holds what the logit ignores (a word with no weight still counts), so a head fitted on
labels can learn what the model does not know. So a test knows the answer before it asks: a word like "yes" in the state pushes P(yes) up, a
word in an option's name pushes that option up, and a word that appears in both the hypothesis
and the state (the `match` term) makes an option win exactly when the state mentions it. Padding
is masked out, so batching and sorting cannot change a logit. The files are a few KB.

With `encoder=True` the directory also holds `encoder.onnx`, a tiny sentence encoder: one text's
word counts (special tokens left out), normalised to unit length, so the cosine of an option's
text with the state is their word overlap; the config then names it, and a `blend` in
`config_overrides` mixes that cosine into the logits.

With `flags=True` it also holds `flags.onnx`, a tiny flag classifier: one text's word counts
times `FLAG_WEIGHTS`, plus `FLAG_BIAS`, one logit per flag ([batch, 2]: `poison`, `secret`), named
in the config's `flags` with its sha256, what a `flag` head reads.

Run as a script to write one: `python tests/tinymodel.py DIR [--max-length N]`.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]

#: Weights on the state side: these words make P(yes) high or low whatever the question.
STATE_WEIGHTS = {"yes": 6.0, "injection": 6.0, "no": -6.0, "calm": -1.0}
#: Weights on the hypothesis side: an option or level text containing these leans that way.
HYPOTHESIS_WEIGHTS = {"favoured": 2.0, "disfavoured": -2.0, "contradiction": 3.0}
#: Words whose presence on both sides adds this much (how a Choice follows the state).
MATCH_WEIGHTS = {
    "billing": 4.0, "technical": 4.0, "sales": 4.0,
    "red": 4.0, "green": 4.0, "blue": 4.0,
    "angry": 4.0, "frustrated": 4.0, "calm": 4.0,
}
#: Words in the vocabulary with no weight, so they tokenise to themselves rather than [UNK].
PLAIN_WORDS = [
    "the", "a", "is", "of", "and", "to", "this", "it", "was", "what", "which", "who", "how", "level",
    "answer", "means", "true", "false", "statement", "holds", "filler", "text", "word", "ticket", "team",
    "customer", "state", "question", "option", "invoice", "charged", "twice",
]
BIAS = -1.0
#: The tiny flag classifier's logit per word, per flag (in the output's order), and its bias.
FLAG_WEIGHTS = {"poison": {"injection": 5.0, "calm": -2.0}, "secret": {"invoice": 5.0}}
FLAG_BIAS = -3.0


def vocabulary() -> dict[str, int]:
    words = [*SPECIALS]
    for group in (STATE_WEIGHTS, HYPOTHESIS_WEIGHTS, MATCH_WEIGHTS, PLAIN_WORDS):
        for w in group:
            if w not in words:
                words.append(w)
    return {w: i for i, w in enumerate(words)}


def build_tokenizer(vocab: Mapping[str, int]) -> Tokenizer:
    """A WordLevel tokenizer: lowercased words and punctuation, BERT-style pair template."""
    tok = Tokenizer(models.WordLevel(dict(vocab), unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tok.add_special_tokens(SPECIALS)
    # A real tokenizer.json often ships with truncation and padding on; the runtime must switch
    # them off (it windows long states and pads per batch).
    tok.enable_truncation(max_length=512)
    tok.enable_padding(length=128, pad_id=vocab["[PAD]"], pad_token="[PAD]")
    return tok


def build_graph(vocab: Mapping[str, int], *, inputs: tuple[str, ...] = ("input_ids", "attention_mask", "token_type_ids"),
                output: str = "logits", features: bool = False) -> onnx.ModelProto:
    v = len(vocab)
    w_hyp, w_state, w_match = (np.zeros(v, dtype=np.float32) for _ in range(3))
    for table, weights in ((w_hyp, HYPOTHESIS_WEIGHTS), (w_state, STATE_WEIGHTS), (w_match, MATCH_WEIGHTS)):
        for word, w in weights.items():
            table[vocab[word]] = w

    init = [
        numpy_helper.from_array(w_hyp, "w_hyp"),
        numpy_helper.from_array(w_state, "w_state"),
        numpy_helper.from_array(w_match, "w_match"),
        numpy_helper.from_array(np.array([0.0, 1.0], dtype=np.float32), "onehot_values"),
        numpy_helper.from_array(np.array(v, dtype=np.int64), "depth"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        numpy_helper.from_array(np.array([BIAS], dtype=np.float32), "bias"),
        numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one"),
    ]
    nodes = [
        helper.make_node("Cast", ["attention_mask"], ["maskf"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["token_type_ids"], ["typef"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["maskf", "typef"], ["state_w"]),             # [B,T] 1 on state tokens
        helper.make_node("Sub", ["maskf", "state_w"], ["hyp_w"]),             # [B,T] 1 on hypothesis tokens
        helper.make_node("OneHot", ["input_ids", "depth", "onehot_values"], ["oh"], axis=-1),  # [B,T,V]
        helper.make_node("Unsqueeze", ["hyp_w", "minus1"], ["hyp_w3"]),
        helper.make_node("Unsqueeze", ["state_w", "minus1"], ["state_w3"]),
        helper.make_node("Mul", ["oh", "hyp_w3"], ["oh_hyp"]),
        helper.make_node("Mul", ["oh", "state_w3"], ["oh_state"]),
        helper.make_node("ReduceSum", ["oh_hyp", "axis1"], ["n_hyp"], keepdims=0),      # [B,V]
        helper.make_node("ReduceSum", ["oh_state", "axis1"], ["n_state"], keepdims=0),  # [B,V]
        helper.make_node("Min", ["n_hyp", "n_state"], ["n_both"]),
        helper.make_node("Mul", ["n_hyp", "w_hyp"], ["s_hyp"]),
        helper.make_node("Mul", ["n_state", "w_state"], ["s_state"]),
        helper.make_node("Mul", ["n_both", "w_match"], ["s_match"]),
        helper.make_node("Sum", ["s_hyp", "s_state", "s_match"], ["s_all"]),
        helper.make_node("ReduceSum", ["s_all", "axis1"], ["s"], keepdims=1),            # [B,1]
        helper.make_node("Add", ["s", "bias"], [output]),
    ]
    init.append(numpy_helper.from_array(np.array([-1], dtype=np.int64), "minus1"))
    outputs = [helper.make_tensor_value_info(output, TensorProto.FLOAT, ["batch", 1])]
    if features:
        nodes.append(helper.make_node("Concat", ["n_hyp", "n_state", "n_both"], ["features"], axis=1))  # [B,3V]
        outputs.append(helper.make_tensor_value_info("features", TensorProto.FLOAT, ["batch", 3 * v]))
    graph_inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "tokens"]) for n in inputs]
    if "token_type_ids" not in inputs:  # a graph without segment ids: every token counts as state
        nodes[1] = helper.make_node("Identity", ["maskf"], ["typef"])
    if "attention_mask" not in inputs:
        nodes[0] = helper.make_node("ConstantOfShape", ["ids_shape"], ["maskf"],
                                    value=helper.make_tensor("one_f", TensorProto.FLOAT, [1], [1.0]))
        nodes.insert(0, helper.make_node("Shape", ["input_ids"], ["ids_shape"]))
    graph = helper.make_graph(
        nodes,
        "seams-tiny-cross-encoder",
        graph_inputs,
        outputs,
        initializer=init,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="seams-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def _text_graph(vocab: Mapping[str, int], name: str, init: list[onnx.TensorProto], nodes: list[onnx.NodeProto],
                output: str, width: int) -> onnx.ModelProto:
    """A graph with the real graphs' three inputs (token ids of one text per row): its masked word
    counts `counts_all` [batch, V] first, then `nodes` from them to `output` [batch, width]."""
    counting = [
        numpy_helper.from_array(np.array([0.0, 1.0], dtype=np.float32), "onehot_values"),
        numpy_helper.from_array(np.array(len(vocab), dtype=np.int64), "depth"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        numpy_helper.from_array(np.array([-1], dtype=np.int64), "minus1"),
    ]
    counts = [
        helper.make_node("Cast", ["attention_mask"], ["maskf"], to=TensorProto.FLOAT),
        helper.make_node("OneHot", ["input_ids", "depth", "onehot_values"], ["oh"], axis=-1),  # [B,T,V]
        helper.make_node("Unsqueeze", ["maskf", "minus1"], ["mask3"]),
        helper.make_node("Mul", ["oh", "mask3"], ["oh_m"]),
        helper.make_node("ReduceSum", ["oh_m", "axis1"], ["counts_all"], keepdims=0),  # [B,V]
    ]
    graph_inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "tokens"])
                    for n in ("input_ids", "attention_mask", "token_type_ids")]
    graph = helper.make_graph(counts + nodes, name, graph_inputs,
                              [helper.make_tensor_value_info(output, TensorProto.FLOAT, ["batch", width])],
                              initializer=counting + init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="seams-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def build_encoder_graph(vocab: Mapping[str, int]) -> onnx.ModelProto:
    """Token ids of one text per row in, its unit-length bag of words [batch, V] out."""
    keep = np.ones(len(vocab), dtype=np.float32)
    for special in SPECIALS:
        keep[vocab[special]] = 0.0
    init = [numpy_helper.from_array(keep, "keep"), numpy_helper.from_array(np.array(1e-6, dtype=np.float32), "eps")]
    nodes = [
        helper.make_node("Mul", ["counts_all", "keep"], ["counts"]),
        helper.make_node("Mul", ["counts", "counts"], ["sq"]),
        helper.make_node("ReduceSum", ["sq", "axis1"], ["ss"], keepdims=1),
        helper.make_node("Add", ["ss", "eps"], ["ss_e"]),
        helper.make_node("Sqrt", ["ss_e"], ["norm"]),
        helper.make_node("Div", ["counts", "norm"], ["embeddings"]),
    ]
    return _text_graph(vocab, "seams-tiny-encoder", init, nodes, "embeddings", len(vocab))


def build_flags_graph(vocab: Mapping[str, int]) -> onnx.ModelProto:
    """Token ids of one text per row in, `FLAG_BIAS` + its word counts @ `FLAG_WEIGHTS` out ([batch, 2])."""
    w = np.zeros((len(vocab), len(FLAG_WEIGHTS)), dtype=np.float32)
    for j, weights in enumerate(FLAG_WEIGHTS.values()):
        for word, x in weights.items():
            w[vocab[word], j] = x
    init = [numpy_helper.from_array(w, "w"),
            numpy_helper.from_array(np.full(len(FLAG_WEIGHTS), FLAG_BIAS, dtype=np.float32), "b")]
    nodes = [helper.make_node("MatMul", ["counts_all", "w"], ["z"]), helper.make_node("Add", ["z", "b"], ["logits"])]
    return _text_graph(vocab, "seams-tiny-flags", init, nodes, "logits", len(FLAG_WEIGHTS))


def write_tiny_model(
    directory: str | Path,
    *,
    max_length: int = 64,
    model_id: str = "seams-tiny-test",
    inputs: tuple[str, ...] = ("input_ids", "attention_mask", "token_type_ids"),
    config_overrides: Mapping[str, object] | None = None,
    features: bool = False,
    encoder: bool = False,
    flags: bool = False,
) -> Path:
    """Write config.json, model.onnx and tokenizer.json into `directory`; return it. With
    `features` the graph also outputs pair features and the config names them; with `encoder`
    an `encoder.onnx` is written beside it and named; with `flags` a `flags.onnx`."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    vocab = vocabulary()
    build_tokenizer(vocab).save(str(root / "tokenizer.json"))
    onnx.save(build_graph(vocab, inputs=inputs, features=features), str(root / "model.onnx"))
    if encoder:
        onnx.save(build_encoder_graph(vocab), str(root / "encoder.onnx"))
    flags_config = {}
    if flags:
        onnx.save(build_flags_graph(vocab), str(root / "flags.onnx"))
        flags_config = {"flags": {"onnx": "flags.onnx", "names": list(FLAG_WEIGHTS),
                                  "sha256": hashlib.sha256((root / "flags.onnx").read_bytes()).hexdigest()}}
    config = {
        "format": "seams.cross-encoder/1",
        "model_id": model_id,
        "onnx": "model.onnx",
        "tokenizer": "tokenizer.json",
        "max_length": max_length,
        "inputs": list(inputs),
        "output": "logits",
        **({"features": "features"} if features else {}),
        **({"encoder": {"onnx": "encoder.onnx"}} if encoder else {}),
        **flags_config,
        "choice_temperature": 1.0,
        "score_temperature": 1.0,
        "templates": {},
        "description": "a tiny bag-of-words test model built by tests/tinymodel.py",
        "release_date": "2026-11-29",
        **(config_overrides or {}),
    }
    (root / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return root


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--max-length", type=int, default=64)
    parser.add_argument("--features", action="store_true", help="also output pair features")
    args = parser.parse_args()
    print(write_tiny_model(args.directory, max_length=args.max_length, features=args.features))
    sys.exit(0)
