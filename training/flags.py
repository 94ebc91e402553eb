"""Issue 30: the memory gate's red flags read by a classifier fine-tuned on the memory sets.

    python -m training flags oof    [--root ../train_runs/flags] [--fold SET]   # one fine-tune per labelled set left out
    python -m training flags train  [--root ../train_runs/flags]    # one on every labelled text
    python -m training flags export [--root ../train_runs/flags] [--out seams/models/seams-minilm]

Why: the heads over the cross-encoder's pair features and the base encoder's embedding
(`bench/fit_memory_heads.py`) read the red flags from representations trained for other
questions, and on sets written by other hands they missed half the poisonings at the benign
budget. all-MiniLM-L6-v2 with its top layers fine-tuned on the labelled memory texts, two
logistic outputs (`poison`, `secret`) over the mean-pooled tokens, missed fewer of both on a
whole set left out (`bench/memory_finetune_probe.py`, docs/seams.md, "The red-flag classifier").

Data: every labelled text of `bench/memory_head_data.all_items` (the training sets, never the
test set `bench/data/blind9/`), each shown as the question reads it in the gate
(`shown`: the candidate asked alone, redacted as the gate redacts it). `oof` trains one model per
labelled set left out and writes that set's logits (`oof-<set>.npz`, resumable a fold at a time;
a set that joined after `final.pt` was trained is scored by it, as it never saw that set):
what the heads over the classifier and their cut-points are fitted on, so no cut is chosen on a
logit the classifier saw the label of. `train` trains on everything (`final.pt`); `export` writes
`flags.onnx` (int8, as every shipped graph) and names it in the model's config (`flags`), after
checking the int8 graph against torch on the left-out logits' texts.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import REPO

DEFAULT_ROOT = REPO.parent / "train_runs" / "flags"
FLAGS_FILE = "flags.onnx"
OUTPUT = "logits"
#: The flags, in the graph's output order (the memory rubric's question ids).
NAMES = ("poison", "secret")
#: Tokens a text is cut at, special tokens included: in training (short memories, the speed of a
#: CPU run) and in the shipped config (a long candidate's tail still read).
TRAIN_MAX, RUN_MAX = 128, 256


def _bench() -> Any:
    sys.path[:0] = [str(REPO / "bench"), str(REPO)]
    import memory_head_data

    return memory_head_data


def shown(text: str) -> str:
    """What a flag reads of a candidate: the text the memory rubric's question reads of the gate's
    state (`focus` of the candidate asked alone), as `HeadedJudge` gives it to a `flag` head."""
    from seams.builtin.memory import NOTHING_STORED
    from seams.judges.local.hypotheses import focus, state_text

    return state_text(focus(_question(), {"memory": NOTHING_STORED, "candidate": text}))


@functools.cache
def _question() -> Any:
    from seams.rubric import Rubric

    return Rubric.builtin("memory-admission").questions[NAMES[0]]


def in_set(item: Any, name: str) -> bool:
    """Whether a labelled item (`memory_head_data.Item`) is a case of the labelled set `name`."""
    return item.case is not None and bool(item.case["id"].startswith(name + "/"))


def labelled(left_out: str | None = None, items: Sequence[Any] | None = None) -> list[tuple[str, dict[str, bool]]]:
    """(text as shown, labels) of every labelled text (`items`, default all of them), less the
    cases of set `left_out`; a text labelled twice keeps both labels."""
    by_text: dict[str, dict[str, bool]] = {}
    for it in _bench().all_items() if items is None else items:
        if left_out is not None and in_set(it, left_out):
            continue
        by_text.setdefault(shown(it.text), {}).update(it.labels)
    return sorted(by_text.items())


def finetune(train: Sequence[tuple[str, dict[str, bool]]], *, epochs: int = 3, layers: int = 2, lr: float = 1e-4,
             seed: int = 30, log: Callable[[str], None] = print) -> Any:
    """The classifier: all-MiniLM-L6-v2 (its top `layers` learning, 0: all of it) and a linear
    layer over the mean-pooled tokens, one logistic output a flag, a text's loss over the flags
    it is labelled for. One torch thread; returns the module in eval mode (`forward(ids, mask,
    types)` → [n, flags] logits)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from .train import base_model_dir

    torch.manual_seed(seed)
    torch.set_num_threads(1)
    base = base_model_dir()
    tok = AutoTokenizer.from_pretrained(base)
    model = Classifier.build(torch, AutoModel.from_pretrained(base, add_pooling_layer=False, attn_implementation="eager"))
    if layers:
        for p in model.bert.parameters():
            p.requires_grad_(False)
        for block in model.bert.encoder.layer[-layers:]:
            for p in block.parameters():
                p.requires_grad_(True)
    learn = [p for p in model.bert.parameters() if p.requires_grad]
    opt = torch.optim.AdamW([{"params": learn, "lr": lr}, {"params": model.head.parameters(), "lr": 1e-3}])
    rng = random.Random(seed)
    order = list(range(len(train)))
    t0 = time.time()
    model.train()
    for epoch in range(epochs):
        rng.shuffle(order)
        for s in range(0, len(order), 16):
            batch = [train[i] for i in order[s:s + 16]]
            enc = tok([t for t, _ in batch], truncation=True, max_length=TRAIN_MAX, padding=True, return_tensors="pt")
            z = model(enc["input_ids"], enc["attention_mask"], torch.zeros_like(enc["input_ids"]))
            y = torch.tensor([[float(lab.get(q, 0)) for q in NAMES] for _, lab in batch])
            w = torch.tensor([[float(q in lab) for q in NAMES] for _, lab in batch])
            loss = (torch.nn.functional.binary_cross_entropy_with_logits(z, y, reduction="none") * w).sum() / w.sum()
            loss.backward()
            opt.step()
            opt.zero_grad()
        log(f"  epoch {epoch + 1}/{epochs} ({time.time() - t0:.0f} s)")
    return model.eval()


class Classifier:
    """The torch module (built by `build`, so torch loads only when a stage runs)."""

    @staticmethod
    def build(torch: Any, bert: Any) -> Any:
        class _Flags(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.bert = bert
                self.head = torch.nn.Linear(bert.config.hidden_size, len(NAMES))

            def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
                h = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state
                m = attention_mask.unsqueeze(-1).to(h.dtype)
                return self.head((h * m).sum(1) / m.sum(1).clamp(min=1e-9))

        return _Flags()


def torch_logits(model: Any, texts: Sequence[str], max_length: int = TRAIN_MAX) -> np.ndarray:
    """[len(texts), flags] logits of the torch module, 64 texts a batch."""
    import torch
    from transformers import AutoTokenizer

    from .train import base_model_dir

    tok = AutoTokenizer.from_pretrained(base_model_dir())
    out = []
    with torch.no_grad():
        for s in range(0, len(texts), 64):
            enc = tok(list(texts[s:s + 64]), truncation=True, max_length=max_length, padding=True, return_tensors="pt")
            out.append(model(enc["input_ids"], enc["attention_mask"], torch.zeros_like(enc["input_ids"])).numpy())
    return np.concatenate(out) if out else np.zeros((0, len(NAMES)), np.float32)


# ------------------------------------------------------------------------------ stages


def oof(root: Path, folds: Sequence[str] = (), **kw: Any) -> None:
    """For each labelled set (or those in `folds`: one process a core, each its own folds), a model
    trained without it scores its texts (`oof-<set>.npz`); a fold already written is kept, so a
    stopped run continues."""
    data = _bench()
    unknown = set(folds) - set(data.TRAINING_SETS)
    if unknown:
        raise SystemExit(f"unknown fold(s) {sorted(unknown)}: the labelled sets are {list(data.TRAINING_SETS)}")
    items = data.all_items()
    for name in folds or data.TRAINING_SETS:
        path = root / f"oof-{name}.npz"
        if path.exists():
            print(f"{name}: {path} kept", flush=True)
            continue
        texts = sorted({shown(it.text) for it in items if in_set(it, name)})
        model = _final_without(root, name)
        if model is not None:
            print(f"{name}: scored by {root / 'final.pt'}, which was trained without it", flush=True)
        else:
            print(f"{name}: training without it", flush=True)
            model = finetune(labelled(left_out=name, items=items), **kw)
        np.savez(path.with_suffix(".tmp.npz"), texts=np.array(texts, dtype=object), logits=torch_logits(model, texts))
        path.with_suffix(".tmp.npz").replace(path)


def out_of_fold(root: Path = DEFAULT_ROOT) -> dict[str, np.ndarray]:
    """Text as shown → its out-of-fold logits [flags], from every fold `oof` wrote."""
    data = _bench()
    got: dict[str, np.ndarray] = {}
    for name in data.TRAINING_SETS:
        path = root / f"oof-{name}.npz"
        if not path.exists():
            raise SystemExit(f"{path} is missing: run `python -m training flags oof` first")
        z = np.load(path, allow_pickle=True)
        got.update(zip(z["texts"].tolist(), z["logits"], strict=True))
    return got


def _final_without(root: Path, name: str) -> Any:
    """`root/final.pt`'s model when the sets it was trained on (`sets`, recorded since a set joined
    the labelled sets after it was trained) leave out `name`: its logits on that set are already
    out of fold, so the fold costs no training. None otherwise."""
    import torch
    from transformers import AutoModel

    from .train import base_model_dir

    path = root / "final.pt"
    if not path.exists():
        return None
    st = torch.load(path, map_location="cpu", weights_only=False)
    if "sets" not in st or name in st["sets"]:
        return None
    model = Classifier.build(torch, AutoModel.from_pretrained(base_model_dir(), add_pooling_layer=False,
                                                              attn_implementation="eager"))
    model.load_state_dict(st["model"])
    return model.eval()


def train_final(root: Path, **kw: Any) -> None:
    import torch

    model = finetune(labelled(), **kw)
    tmp = root / "final.tmp.pt"
    torch.save({"model": model.state_dict(), "names": NAMES, "config": kw, "sets": list(_bench().TRAINING_SETS)}, tmp)
    tmp.replace(root / "final.pt")


def export(root: Path, out: Path) -> dict[str, Any]:
    """`out/flags.onnx` from `root/final.pt`, int8; parity against torch; the config's `flags`."""
    import onnxruntime as ort
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModel

    from .encoder import export_text_graph
    from .export import quantise
    from .train import base_model_dir

    st = torch.load(root / "final.pt", map_location="cpu", weights_only=False)
    model = Classifier.build(torch, AutoModel.from_pretrained(base_model_dir(), add_pooling_layer=False,
                                                              attn_implementation="eager"))
    model.load_state_dict(st["model"])
    model.eval()
    fp32, int8 = root / "flags.fp32.onnx", root / "flags.int8.onnx"
    export_text_graph(model, fp32, OUTPUT)
    quantise(fp32, int8)
    # parity, one text a run as the judge runs it, on the texts the left-out folds scored
    texts = sorted(out_of_fold(root))[::10]
    want = torch_logits(model, texts, max_length=RUN_MAX)
    tok = Tokenizer.from_file(str(base_model_dir() / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(RUN_MAX)
    sess = ort.InferenceSession(str(int8), providers=["CPUExecutionProvider"])
    got = []
    for t in texts:
        e = tok.encode(t)
        got.append(sess.run([OUTPUT], {"input_ids": np.array([e.ids]), "attention_mask": np.ones((1, len(e.ids)), np.int64),
                                       "token_type_ids": np.zeros((1, len(e.ids)), np.int64)})[0][0])
    q = np.stack(got)
    diff = np.abs(q - want)
    parity = {"texts": len(texts), "max_abs_logit_torch_vs_int8": float(diff.max()),
              "mean_abs_logit_torch_vs_int8": float(diff.mean()), "logit_std_torch": float(want.std()),
              "sides_flipped": float(np.mean(np.sign(q) != np.sign(want)))}
    # the flags' logits span about ±11 (std ~6): measured against that spread, not in absolute
    # logits (the frozen lower layers' int8 drift, not the fine-tuned top's: keeping layers 4-5 in
    # fp32 moved the mean 0.205 -> 0.198 for 10 MB more)
    if parity["mean_abs_logit_torch_vs_int8"] > 0.05 * parity["logit_std_torch"] or parity["sides_flipped"] > 0.01:
        raise RuntimeError(f"int8 flags drift from torch: {parity}")
    (out / FLAGS_FILE).write_bytes(int8.read_bytes())
    sha = hashlib.sha256((out / FLAGS_FILE).read_bytes()).hexdigest()
    path = out / "config.json"
    cfg = json.loads(path.read_text())
    cfg["flags"] = {"onnx": FLAGS_FILE, "output": OUTPUT, "max_length": RUN_MAX, "names": list(NAMES),
                    "sha256": sha, "trained": {**st["config"], "texts": len(labelled()),
                                               "command": "python -m training flags train"}, "parity": parity}
    path.write_text(json.dumps(cfg, indent=2, ensure_ascii=False) + "\n")
    return {"sha256": sha, "bytes": (out / FLAGS_FILE).stat().st_size, **parity}


def add_parser(sub: Any) -> None:
    p = sub.add_parser("flags", help="issue 30: the memory red-flag classifier (training/flags.py)")
    p.add_argument("stage", choices=["oof", "train", "export"])
    p.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    p.add_argument("--out", type=Path, default=REPO / "seams" / "models" / "seams-minilm")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--layers", type=int, default=2, help="the encoder's top layers that learn (0: all)")
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--seed", type=int, default=30)
    p.add_argument("--fold", action="append", default=[], help="oof: only this labelled set's fold (repeatable)")


def cmd(args: argparse.Namespace) -> int:
    args.root.mkdir(parents=True, exist_ok=True)
    kw = {"epochs": args.epochs, "layers": args.layers, "lr": args.lr, "seed": args.seed}
    if args.stage == "oof":
        oof(args.root, args.fold, **kw)
    elif args.stage == "train":
        train_final(args.root, **kw)
    else:
        print(json.dumps(export(args.root, args.out), indent=2))
    return 0
