"""Issue 28, points 1 and 2 as an experiment: read the state once, answer each question from it.

    python -m training two-tower embed            # every state / part / hypothesis / option text, embedded
    python -m training two-tower xenc [--train-sample 3000]   # the shipped judge's logits and answers
    python -m training two-tower search --quick   # the head's variant per type, by whole-file folds
    python -m training two-tower run --quick [--json bench/results/two_tower.json]

(all take `--cache DIR`, default ../train_runs/two_tower, and `--threads`, default 1.) Results and
what they mean: docs/notes/two_tower.md.

Every text of the written corpus (`training/written.py`: each item's state as the judge reads it,
the state's parts (`segments`), its hypotheses and its options' own texts) is embedded once by the
*shipped* `encoder.onnx` through the runtime's own `SentenceEncoder` (int8, batch 1, the judge's
tokenizer) and cached on disk by text hash under a directory named for the encoder file's hash,
so a stopped run resumes where it stopped. A small **interaction head** (`Head`: linear or one
hidden layer, numpy, Adam) is fitted on those frozen embeddings, on the training split only, over
feature blocks of the state u against each hypothesis h and option text o (`FEATURES`: cosines,
centred cosines, late interaction over the state's parts, u⊙h, |u−h|); Nouls with a logistic
loss, Choices and Scores listwise (a softmax over the options) or per option. The variant is
chosen per type by whole-file folds of the training files (`domain_folds`), never on a held-out
split.

`run` reports, on the held-out splits (domains, groups, wordings; `bench/heldout.py`'s `metrics`,
on the full splits and on that bench's own 500-item sample) per type, for: the head; the shipped
encoder's cosine (`bench/heldout.py`'s baseline, on the shipped int8 encoder); BM25; the shipped
LocalJudge (every option read) and its raw logit; blends of head + logit + cosine fitted on
training items (the head's out-of-fold scores) or on the held-out groups; and the floor (point
1): a Noul blend of logit and cosine fitted by whole training-file folds. The cross-encoder's
outputs are cached too (`xenc`, per item and model id): one ONNX run per hypothesis is the slow
part. Paired bootstrap intervals (whole states resampled) say whether a design is above cosine.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from seams.judges.local.towers import FEATURES, TowerHead, Towers, pair_features, segments

from . import REPO, SHARED_DATA

DEFAULT_CACHE = REPO.parent / "train_runs" / "two_tower"
SPLITS = ("domains", "groups", "wordings")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def log(msg: str) -> None:
    print(time.strftime("%H:%M:%S"), msg, flush=True)


# ------------------------------------------------------------------------------ embeddings


class EmbeddingCache:
    """Unit embeddings of texts by the shipped encoder, on disk in shards of `flush_every` texts.

    Keyed by sha256 of the text, under a directory named for the encoder graph's own hash, so a
    different encoder never reads another's vectors and a stopped run keeps what it computed."""

    def __init__(self, root: Path, encoder: Any, encoder_path: Path, flush_every: int = 500) -> None:
        self.encoder = encoder
        self.encoder_path = encoder_path
        self.sha256 = hashlib.sha256(encoder_path.read_bytes()).hexdigest()
        self.model_id = "encoder-" + self.sha256[:12]
        self.dir = root / self.model_id
        self.dir.mkdir(parents=True, exist_ok=True)
        self.flush_every = flush_every
        self.vecs: dict[str, np.ndarray] = {}
        for shard in sorted(self.dir.glob("emb-*.npz")):
            with np.load(shard) as z:
                self.vecs.update(zip(z["keys"].tolist(), z["vecs"], strict=True))
        self._fresh: dict[str, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self.vecs)

    def fill(self, texts: Sequence[str], progress: int = 1000) -> None:
        todo = sorted({t for t in texts if _sha(t) not in self.vecs}, key=len)
        t0 = time.time()
        for n, t in enumerate(todo, 1):
            v = self.encoder.embed([t])[0]
            self.vecs[_sha(t)] = self._fresh[_sha(t)] = v
            if len(self._fresh) >= self.flush_every:
                self.flush()
            if n % progress == 0:
                log(f"embedded {n}/{len(todo)} ({(time.time() - t0) / n * 1000:.1f} ms a text)")
        self.flush()

    def flush(self) -> None:
        if not self._fresh:
            return
        n = len(list(self.dir.glob("emb-*.npz")))
        keys = list(self._fresh)
        tmp = self.dir / f"tmp-{n:05d}.npz"
        np.savez(tmp, keys=np.array(keys), vecs=np.stack([self._fresh[k] for k in keys]))
        tmp.rename(self.dir / f"emb-{n:05d}.npz")
        self._fresh = {}

    def get(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.vecs[_sha(t)] for t in texts])


def texts_of(it: Any) -> tuple[str, list[str], list[str]]:
    """An item's state text (its `focus`, as the judge reads it), hypotheses and option texts."""
    from seams.judges.local.hypotheses import focus, hypotheses, option_texts, state_text

    q = it.question
    return state_text(focus(q, it.state)), hypotheses(q), option_texts(q)


# ------------------------------------------------------------------------------ cross-encoder


def item_key(model_id: str, it: Any) -> str:
    return _sha(json.dumps([model_id, it.file, it.line_id, it.qid, it.question.wire(), it.state],
                           sort_keys=True, default=str))[:24]


class XencCache:
    """The shipped judge's raw logits (every hypothesis) and its answer, per item, in a JSONL file
    per model id that a stopped run appends to."""

    def __init__(self, root: Path, judge: Any) -> None:
        self.judge = judge
        self.model_id = judge.model_id
        self.path = root / ("xenc-" + _sha(self.model_id)[:12] + ".jsonl")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.rows: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            for line in self.path.read_text().splitlines():
                if line.strip():
                    r = json.loads(line)
                    self.rows[r["k"]] = r

    def raw(self, kind: str, logits: np.ndarray, cos: np.ndarray) -> np.ndarray:
        """The cross-encoder's own logits from `PairFeatures.logits`, which are read after the
        config's blend (`LocalJudge._grid`: a·logit + b·cos + c for a blended type): the blend is
        undone with the same encoder's cosines of the same option texts."""
        blend = self.judge.config.blend
        w = None if blend is None else getattr(blend, kind)
        if w is None or (w.logit == 1.0 and w.cosine == 0.0 and w.bias == 0.0):
            return logits
        return (logits - w.bias - w.cosine * cos) / w.logit

    def fill(self, its: Sequence[Any], progress: int = 200) -> None:
        """Each state's questions in one `answers_and_features` call, as a rubric asks them."""
        by_state: dict[str, list[Any]] = defaultdict(list)
        for it in its:
            if item_key(self.model_id, it) not in self.rows:
                by_state[json.dumps(it.state, sort_keys=True, default=str)].append(it)
        t0, done = time.time(), 0
        with open(self.path, "a") as f:
            for group in by_state.values():
                qs = {f"q{n}": it.question for n, it in enumerate(group)}
                ans, feats = self.judge.answers_and_features([group[0].state], qs)[0]
                for n, it in enumerate(group):
                    a = ans.answers[f"q{n}"]
                    shipped = [a.noul] if it.kind == "noul" else [
                        a.probabilities[str(x)] for x in (list(it.question.criteria) if it.kind == "choice"
                                                          else range(len(it.question.criteria)))]
                    r = {"k": item_key(self.model_id, it), "logits": [float(x) for x in feats[f"q{n}"].logits],
                         "shipped": [float(x) for x in shipped]}
                    self.rows[r["k"]] = r
                    f.write(json.dumps(r) + "\n")
                f.flush()
                done += len(group)
                if done // progress != (done - len(group)) // progress:
                    log(f"xenc {done}/{sum(len(g) for g in by_state.values())} items "
                        f"({(time.time() - t0) / done * 1000:.0f} ms an item)")


# ------------------------------------------------------------------------------ rows


@dataclass
class Row:
    """One item as the heads read it: the state vector, each option's vectors, its label."""

    kind: str
    file: str
    line_id: str
    y: Any  # bool (Noul) or the gold index
    u: np.ndarray  # [d] the state
    h: np.ndarray  # [n, d] hypotheses (instructions + option)
    o: np.ndarray  # [n, d] options' own texts (a Noul: its hypothesis)
    cos: np.ndarray = field(init=False)  # [n] cosine of the option's own text with the state
    item: Any = None  # the `written.Item`
    seg: np.ndarray | None = None  # [m, d] the state's segments (`segments`), for late interaction
    logit: np.ndarray | None = None  # [n] the cross-encoder's raw logits
    shipped: np.ndarray | None = None  # [n] the shipped judge's answer

    def __post_init__(self) -> None:
        self.cos = (self.o @ self.u).astype(np.float64)


def rows_of(its: Sequence[Any], emb: EmbeddingCache, xenc: XencCache | None = None) -> list[Row]:
    out = []
    for it in its:
        text, hyps, opts = texts_of(it)
        q = it.question
        y = bool(it.label) if it.kind == "noul" else (
            list(q.criteria).index(it.label) if it.kind == "choice" else int(it.label))
        r = Row(it.kind, it.file, it.line_id, y, emb.get([text])[0], emb.get(hyps), emb.get(opts), item=it,
                seg=emb.get(segments(text)))
        if xenc is not None:
            got = xenc.rows.get(item_key(xenc.model_id, it))
            if got is not None:
                r.logit, r.shipped = xenc.raw(it.kind, np.asarray(got["logits"]), r.cos), np.asarray(got["shipped"])
        out.append(r)
    return out


# ------------------------------------------------------------------------------ features


#: Reference means (`set_reference`): of training states and of training hypotheses, for the
#: centred cosines ("ctr").
REFERENCE: dict[str, np.ndarray] = {}


def set_reference(rows: Sequence[Row], n: int = 512, seed: int = 0) -> None:
    """Fix what the "ctr" block centres cosines on: the mean embedding of `n` training states and
    of `n` training hypotheses (texts only, no labels), so a question's cosine is read against how
    near it sits to states in general and a state's against how near it sits to questions in
    general. A mean of cosines with unit vectors is the cosine with their mean, so at run time each
    is one dot product (`seams.judges.local.towers`)."""
    rng = random.Random(seed)
    us = list({r.line_id: r.u for r in rows}.values())
    hs = [h for r in rows for h in r.h]
    REFERENCE["u"] = np.stack(rng.sample(us, min(n, len(us)))).mean(0)
    REFERENCE["h"] = np.stack(rng.sample(hs, min(n, len(hs)))).mean(0)


def features(r: Row, spec: Sequence[str]) -> np.ndarray:
    """[options, features] for one row: the runtime's own `pair_features`, so what the heads are
    fitted on is what `LocalJudge(reading="once")` computes."""
    if "ctr" in spec and not REFERENCE:
        raise ValueError("the ctr block needs set_reference(training rows) first")
    return pair_features(r.kind, r.u, r.h, r.o, tuple(spec), REFERENCE.get("u"), REFERENCE.get("h"), r.seg)


# ------------------------------------------------------------------------------ the head


class Head:
    """s(x) = w·relu(W x + b) + w0·x + c (hidden 0: linear), fitted with Adam on groups of rows.

    A group is one question: a Noul's single row with a 0/1 target (logistic loss), or a Choice's
    or Score's rows, one per option, with the gold index: `loss="listwise"` puts a softmax over
    the group, `"binary"` a logistic loss on each row (gold 1, others 0). Inputs are standardised
    on the training rows; L2 on the weights (`l2`)."""

    def __init__(self, hidden: int = 0, l2: float = 1e-3, loss: str = "listwise", epochs: int = 30,
                 lr: float = 3e-3, batch: int = 64, seed: int = 0) -> None:
        self.hidden, self.l2, self.loss, self.epochs, self.lr, self.batch, self.seed = (
            hidden, l2, loss, epochs, lr, batch, seed)

    def _params(self, d: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        p = {"w0": np.zeros(d), "c": np.zeros(1)}
        if self.hidden:
            p["W"] = rng.normal(0, 1 / np.sqrt(d), (d, self.hidden))
            p["b"] = np.zeros(self.hidden)
            p["w"] = rng.normal(0, 1 / np.sqrt(self.hidden), self.hidden)
        return {k: v.astype(np.float32) for k, v in p.items()}

    def _score(self, p: dict[str, np.ndarray], x: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        s = x @ p["w0"] + p["c"][0]
        if not self.hidden:
            return s, None
        a = np.maximum(x @ p["W"] + p["b"], 0)
        return s + a @ p["w"], a

    def fit(self, groups: Sequence[tuple[np.ndarray, Any]], kind: str) -> Head:
        rng = np.random.default_rng(self.seed)
        allx = np.concatenate([x for x, _ in groups])
        self.mu, self.sd = allx.mean(0), allx.std(0) + 1e-6
        xs = [((x - self.mu) / self.sd).astype(np.float32) for x, _ in groups]
        ys = [y for _, y in groups]
        p = self._params(allx.shape[1], rng)
        m = {k: np.zeros_like(v) for k, v in p.items()}
        v2 = {k: np.zeros_like(v) for k, v in p.items()}
        t = 0
        for _ in range(self.epochs):
            order = rng.permutation(len(xs))
            for s in range(0, len(order), self.batch):
                idx = order[s:s + self.batch]
                x = np.concatenate([xs[i] for i in idx])
                seg = np.repeat(np.arange(len(idx)), [len(xs[i]) for i in idx])
                z, a = self._score(p, x)
                dz = self._dz(z, seg, [ys[i] for i in idx], kind) / len(idx)
                g = {"w0": x.T @ dz + self.l2 * p["w0"], "c": np.array([dz.sum()])}
                if self.hidden:
                    assert a is not None
                    g["w"] = a.T @ dz + self.l2 * p["w"]
                    da = np.outer(dz, p["w"]) * (a > 0)
                    g["W"] = x.T @ da + self.l2 * p["W"]
                    g["b"] = da.sum(0)
                t += 1
                for k in p:
                    m[k] = 0.9 * m[k] + 0.1 * g[k]
                    v2[k] = 0.999 * v2[k] + 0.001 * g[k] ** 2
                    p[k] -= self.lr * (m[k] / (1 - 0.9 ** t)) / (np.sqrt(v2[k] / (1 - 0.999 ** t)) + 1e-8)
        self.p = p
        return self

    def _dz(self, z: np.ndarray, seg: np.ndarray, ys: list[Any], kind: str) -> np.ndarray:
        """d loss / d score of each row (summed over the batch's groups)."""
        starts = np.r_[0, np.cumsum(np.bincount(seg))[:-1]]
        gold = starts + (np.zeros(len(ys), dtype=int) if kind == "noul" else np.asarray(ys, dtype=int))
        if kind == "noul" or self.loss == "binary":
            target = np.zeros_like(z)
            target[gold] = np.asarray(ys, dtype=z.dtype) if kind == "noul" else 1.0
            return 1 / (1 + np.exp(-z)) - target
        e = np.exp(z - np.maximum.reduceat(z, starts)[seg])
        out = e / np.add.reduceat(e, starts)[seg]
        out[gold] -= 1.0
        return out

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self._score(self.p, ((x - self.mu) / self.sd).astype(np.float32))[0].astype(np.float64)

    def to_tower(self, feats: str) -> TowerHead:
        """This head as the runtime reads it (`seams.judges.local.towers.TowerHead`)."""
        p = self.p
        hidden = {"W": p["W"], "b": p["b"], "w": p["w"]} if self.hidden else {}
        return TowerHead(feats, self.mu.astype(np.float32), self.sd.astype(np.float32), p["w0"], float(p["c"][0]),
                         **hidden)


# ------------------------------------------------------------------------------ protocol


def domain_folds(rows: Sequence[Row], k: int = 5, seed: int = 3) -> list[tuple[list[int], list[int]]]:
    """k folds of whole training files: fit on the others, validate on the fold's files."""
    files = sorted({r.file for r in rows})
    random.Random(seed).shuffle(files)
    out = []
    for f in range(k):
        held = set(files[f::k])
        out.append(([i for i, r in enumerate(rows) if r.file not in held],
                    [i for i, r in enumerate(rows) if r.file in held]))
    return out


@dataclass(frozen=True)
class Variant:
    feats: str = "prod"
    hidden: int = 0
    l2: float = 1e-2
    loss: str = "listwise"
    epochs: int = 20

    def head(self) -> Head:
        return Head(hidden=self.hidden, l2=self.l2, loss=self.loss, epochs=self.epochs)

    def name(self) -> str:
        return f"{self.feats}/h{self.hidden}/l2={self.l2:g}/{self.loss}/e{self.epochs}"


def fit_head(rows: Sequence[Row], kind: str, v: Variant) -> Head:
    spec = FEATURES[v.feats]
    return v.head().fit([(memo_features(r, spec), r.y) for r in rows if r.kind == kind], kind)


def head_scores(head: Head, rows: Sequence[Row], v: Variant) -> list[np.ndarray]:
    spec = FEATURES[v.feats]
    return [head.predict(memo_features(r, spec)) for r in rows]


_MEMO: dict[tuple[int, tuple[str, ...]], np.ndarray] = {}


def memo_features(r: Row, spec: Sequence[str]) -> np.ndarray:
    """`features`, kept for the last feature set asked for (a search refits each many times)."""
    key = (id(r), tuple(spec))
    if key not in _MEMO:
        if _MEMO and next(iter(_MEMO))[1] != key[1]:
            _MEMO.clear()
        _MEMO[key] = features(r, spec)
    return _MEMO[key]


def main_metric(kind: str) -> str:
    return {"noul": "noul_auroc", "choice": "choice_top1", "score": "score_exact"}[kind]


def cross_validate(rows: Sequence[Row], kind: str, v: Variant, k: int = 5) -> float:
    """The variant's mean main measure over whole-file folds of the training rows of one kind."""
    part = [r for r in rows if r.kind == kind]
    got = []
    for tr, va in domain_folds(part, k):
        h = fit_head([part[i] for i in tr], kind, v)
        vr = [part[i] for i in va]
        got.append(evaluate(vr, head_scores(h, vr, v))[main_metric(kind)])
    return float(np.nanmean(got))


# ------------------------------------------------------------------------------ blends


def blend_fit(rows: Sequence[Row], kind: str, cols: Sequence[np.ndarray | None] | None = None,
              signals: Sequence[str] = ("logit", "cos")) -> np.ndarray:
    """Weights of z = Σ w_j·signal_j + c minimising log-loss (logistic for Nouls, a softmax over
    options otherwise); signals are `Row` fields or "head" (given as `cols`, one vector per row)."""
    from scipy.optimize import minimize

    def sig(r: Row, i: int) -> np.ndarray:
        vs = []
        for s in signals:
            vs.append(np.asarray(cols[i]) if s == "head" and cols is not None else np.asarray(getattr(r, s)))
        return np.stack(vs, 1)

    part = [(sig(r, i), r.y) for i, r in enumerate(rows) if r.kind == kind]
    m = len(signals)
    x = np.concatenate([p for p, _ in part])
    starts = np.r_[0, np.cumsum([len(p) for p, _ in part])[:-1]]
    gold = starts + (0 if kind == "noul" else np.asarray([y for _, y in part], dtype=int))
    yes = np.asarray([bool(y) for _, y in part]) if kind == "noul" else None

    def loss(w: np.ndarray) -> float:
        z = x @ w[:m] + w[m]
        if yes is not None:
            total = np.where(yes, np.logaddexp(0, -z), np.logaddexp(0, z)).sum()
        else:  # log-sum-exp over each question's options, less the gold option's score
            top = np.maximum.reduceat(z, starts)
            seg = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(z)]))
            total = (np.log(np.add.reduceat(np.exp(z - top[seg]), starts)) + top - z[gold]).sum()
        return float(total) / len(part) + 1e-4 * float(w[:m] @ w[:m])

    # L-BFGS from (1, 0, ..., 0): Nelder-Mead's first simplex steps a zero weight by 0.00025 only,
    # and on one fold it stopped there (cosine weight 0.0007) where the others found 1.4-1.7
    w0 = np.r_[np.ones(1), np.zeros(m)]
    return np.asarray(minimize(loss, w0, method="L-BFGS-B").x)


def blend_scores(rows: Sequence[Row], w: np.ndarray, signals: Sequence[str],
                 cols: Sequence[np.ndarray] | None = None) -> list[np.ndarray]:
    out = []
    m = len(signals)
    for i, r in enumerate(rows):
        z = np.full(len(r.cos), w[m])
        for j, s in enumerate(signals):
            z = z + w[j] * (np.asarray(cols[i]) if s == "head" and cols is not None else np.asarray(getattr(r, s)))
        out.append(z)
    return out


# ------------------------------------------------------------------------------ commands


def _judge(threads: int, model: Path | None = None) -> Any:
    from seams.judges.local import LocalJudge

    return LocalJudge(model, intra_op_threads=threads)


def _embeddings(cache: Path, threads: int, model: Path | None = None, towers: bool = False
                ) -> tuple[Any, EmbeddingCache]:
    """The judge of `model`, and a cache of its encoder's embeddings; with `towers`, of the
    encoder the model's towers read (`towers.encoder`, when the config names its own)."""
    judge = _judge(threads, model)
    assert judge.encoder is not None, "the shipped config has an encoder"
    from seams.judges.local import read_model_dir

    md = read_model_dir(judge.model_dir)
    tower = md.towers_encoder_path if towers else None
    if tower is not None and tower != md.encoder_path:
        from .towers import sentence_encoder

        return judge, EmbeddingCache(cache, sentence_encoder(tower), tower)
    return judge, EmbeddingCache(cache, judge.encoder, judge.model_dir / "encoder.onnx")


def all_items(data: Path) -> dict[str, list[Any]]:
    from .written import items

    return {s: items(s, data / "written") for s in ("train", *SPLITS)}


def embedded_texts(items: Sequence[Any]) -> list[str]:
    """Every text the towers read of these items: each state, its hypotheses, its options' texts
    and the state's parts (`segments`)."""
    texts: list[str] = []
    for it in items:
        s, hs, os_ = texts_of(it)
        texts += [s, *hs, *os_, *segments(s)]
    return texts


def cmd_embed(args: argparse.Namespace) -> int:
    from seams.judges.local.runtime import machine

    log(machine().line())
    _, emb = _embeddings(args.cache, args.threads, args.model)
    texts = embedded_texts([it for its in all_items(args.data).values() for it in its])
    log(f"{len(set(texts))} texts, {len(emb)} cached ({emb.model_id})")
    emb.fill(texts)
    log(f"done: {len(emb)} cached")
    return 0


def train_sample(train: list[Any], n: int) -> list[Any]:
    """`n` training items, whole states at a time (seeded), for fitting blends on logits."""
    by_line: dict[str, list[Any]] = defaultdict(list)
    for it in train:
        by_line[it.line_id].append(it)
    lines = sorted(by_line)
    random.Random(5).shuffle(lines)
    out: list[Any] = []
    for ln in lines:
        if len(out) >= n:
            break
        out += by_line[ln]
    return out


def cmd_xenc(args: argparse.Namespace) -> int:
    from seams.judges.local.runtime import machine

    log(machine().line())
    judge = _judge(args.threads)
    xc = XencCache(args.cache, judge)
    its = all_items(args.data)
    its["train"] = train_sample(its["train"], args.train_sample)
    for name in args.splits:
        part = its[name]
        log(f"{name}: {len(part)} items, {sum(item_key(xc.model_id, it) in xc.rows for it in part)} cached")
        xc.fill(part)
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("two-tower", help="issue 28's experiment: a head on frozen encoder embeddings (training/two_tower.py)")
    p.add_argument("stage", choices=["embed", "xenc", "search", "run", "export"])
    p.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    p.add_argument("--data", type=Path, default=SHARED_DATA)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--train-sample", type=int, default=3000, help="xenc: training items (whole states) for blends")
    p.add_argument("--splits", nargs="*", default=["domains", "train", "wordings", "groups"],
                   help="xenc: the splits to run, in this order (train: the --train-sample)")
    p.add_argument("--json", type=Path, default=REPO / "bench" / "results" / "two_tower.json")
    p.add_argument("--quick", action="store_true", help="run: a small variant grid")
    p.add_argument("--model", type=Path, default=None,
                   help="a model directory whose encoder.onnx is embedded (default: the shipped model)")
    p.add_argument("--out", type=Path, default=REPO / "seams" / "models" / "seams-minilm" / "towers.npz",
                   help="export: where the runtime's heads go")
    p.add_argument("--research", action="store_true", help="search again even when a search is on disk")
    p.add_argument("--kinds", nargs="*", default=["noul", "choice", "score"], help="--research: of these types")


def cmd(args: argparse.Namespace) -> int:
    from threadpoolctl import threadpool_limits  # numpy's BLAS at the ORT thread count: the machine is shared

    with threadpool_limits(args.threads):
        return {"embed": cmd_embed, "xenc": cmd_xenc, "search": cmd_search, "run": cmd_run,
                "export": cmd_export}[args.stage](args)


def _grid(kind: str, quick: bool) -> list[list[Variant]]:
    """Stages of the search: the feature set (linear heads), then capacity and L2 on the best
    set, then (Choices, Scores) the loss. Each stage keeps the best of the previous one."""
    feats = ["cos", "ctr", "seg", "prod", "prodctr", "sbert"] if quick else [
        "cos", "ctr", "seg", "prod", "prodctr", "prod2", "sbert", "sbert2"]
    stages: list[list[Variant]] = [[Variant(feats=f) for f in feats]]
    stages.append([Variant(hidden=h, l2=l2) for h, l2 in ((0, 1.0), (0, 1e-3), (32, 1e-2), (32, 1.0))])
    if kind != "noul":
        stages.append([Variant(loss="binary")])
    return stages


def search(train: Sequence[Row], kind: str, quick: bool) -> tuple[Variant, list[dict[str, Any]]]:
    """The variant with the best whole-file cross-validated measure on the training rows."""
    from dataclasses import replace

    tried: list[dict[str, Any]] = []
    best, best_score = Variant(), -1.0
    for n, stage in enumerate(_grid(kind, quick)):
        for cand in stage:
            if n == 1:
                cand = replace(cand, feats=best.feats)
            elif n == 2:
                cand = replace(best, loss=cand.loss)
            t0 = time.time()
            sc = cross_validate(train, kind, cand)
            tried.append({"variant": cand.name(), "cv": sc, "seconds": round(time.time() - t0, 1)})
            log(f"{kind} {cand.name()}: cv {sc:.3f} ({time.time() - t0:.0f} s)")
            if sc > best_score:
                best, best_score = cand, sc
    return best, tried


def out_of_fold(train: Sequence[Row], kind: str, v: Variant) -> dict[int, np.ndarray]:
    """The head's scores on each training row of `kind` from the fold that left its file out."""
    idx = [i for i, r in enumerate(train) if r.kind == kind]
    part = [train[i] for i in idx]
    out: dict[int, np.ndarray] = {}
    for tr, va in domain_folds(part):
        h = fit_head([part[i] for i in tr], kind, v)
        for i, sc in zip(va, head_scores(h, [part[i] for i in va], v), strict=True):
            out[idx[i]] = sc
    return out


def evaluate(rows: Sequence[Row], scores: Sequence[np.ndarray]) -> dict[str, Any]:
    """`bench/heldout.py`'s metrics (pooled and per-file Noul AUROC, Choice top-1, Score exact and
    within-one) of one system's score vectors."""
    sys.path[:0] = [str(REPO / "bench"), str(REPO)]
    from heldout import metrics

    return metrics([r.item for r in rows], list(scores))


def floor_cv(rows: Sequence[Row]) -> dict[str, Any]:
    """The Noul floor blend (logit + cosine) by whole-file folds of `rows`: each fold's weights
    fitted on the other files, its AUROC on the fold's, beside cosine and the logit alone."""
    from sklearn.metrics import roc_auc_score

    nouls = [r for r in rows if r.kind == "noul"]
    ws, got = [], defaultdict(list)
    for tr, va in domain_folds(nouls):
        w = blend_fit([nouls[i] for i in tr], "noul")
        ws.append(w)
        vr = [nouls[i] for i in va]
        y = [r.y for r in vr]
        if len(set(y)) < 2:
            continue
        got["blend"].append(roc_auc_score(y, [float(w[0] * r.logit[0] + w[1] * r.cos[0]) for r in vr]))
        got["cosine"].append(roc_auc_score(y, [float(r.cos[0]) for r in vr]))
        got["logit"].append(roc_auc_score(y, [float(r.logit[0]) for r in vr]))
    return {"fold_weights": [w.tolist() for w in ws], "mean_weights": np.mean(ws, 0).tolist(),
            "cv_auroc": {k: float(np.mean(v)) for k, v in got.items()}}


def searched(train: Sequence[Row], args: argparse.Namespace, out: dict[str, Any]) -> dict[str, Variant]:
    """Each type's chosen variant: searched, or read from the cache where a search is on disk."""
    out.setdefault("search", {})
    out.setdefault("chosen", {})
    chosen: dict[str, Variant] = {}
    for kind in ("noul", "choice", "score"):
        # the search is the slow part of `run`: kept on disk per kind and grid, so a rerun reuses it
        done = args.cache / f"search-{kind}-{'quick' if args.quick else 'full'}-{len(train)}.json"
        if done.exists() and not (args.research and kind in args.kinds):
            got = json.loads(done.read_text())
            v, tried = Variant(**got["chosen"]), got["tried"]
            log(f"{kind}: search read from {done}: {v.name()}")
        else:
            v, tried = search(train, kind, args.quick)
            done.write_text(json.dumps({"chosen": asdict(v), "tried": tried}, indent=1))
        chosen[kind] = v
        out["search"][kind] = tried
        out["chosen"][kind] = v.name()
    return chosen


def cmd_search(args: argparse.Namespace) -> int:
    from seams.judges.local.runtime import machine

    log(machine().line())
    _, emb = _embeddings(args.cache, args.threads, args.model)
    train = rows_of(all_items(args.data)["train"], emb)
    set_reference(train)
    out: dict[str, Any] = {}
    chosen = searched(train, args, out)
    log(f"chosen: {json.dumps({k: v.name() for k, v in chosen.items()})}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """Fit each type's chosen head on the whole training split and write the runtime's
    `towers.npz` (`seams.judges.local.towers.Towers`), for `LocalJudge(reading="once")`."""
    from seams.judges.local.runtime import machine
    from seams.version import __version__

    log(machine().line())
    _, emb = _embeddings(args.cache, args.threads, args.model, towers=True)
    items = all_items(args.data)["train"]
    # the training texts as the towers' encoder embeds them (a fresh tower's are not cached yet)
    emb.fill(embedded_texts(items))
    train = rows_of(items, emb)
    set_reference(train)
    chosen = searched(train, args, {})
    heads = {}
    for kind, v in chosen.items():
        t0 = time.time()
        heads[kind] = fit_head(train, kind, v).to_tower(v.feats)
        log(f"{kind}: {v.name()} fitted on {sum(r.kind == kind for r in train)} items ({time.time() - t0:.0f} s)")
    meta = {"fitted_on": {"split": "train", "items": {k: sum(r.kind == k for r in train) for k in chosen},
                          "variants": {k: v.name() for k, v in chosen.items()},
                          "search": "quick" if args.quick else "full", "by": "5 whole-file folds of the training files",
                          "command": "python -m training two-tower export" + (" --quick" if args.quick else ""),
                          "seams": __version__}}
    Towers(heads, REFERENCE["u"], REFERENCE["h"], emb.sha256, meta).save(args.out)
    log(f"wrote {args.out} ({args.out.stat().st_size} bytes)")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from seams.judges.local.runtime import machine

    t_start = time.time()
    log(machine().line())
    judge, emb = _embeddings(args.cache, args.threads, args.model)
    xc = XencCache(args.cache, judge)
    its = all_items(args.data)
    rows = {s: rows_of(v, emb, xc) for s, v in its.items()}
    for s, rs in rows.items():
        log(f"{s}: {len(rs)} rows, {sum(r.logit is not None for r in rs)} with cross-encoder logits")
    train = rows["train"]
    set_reference(train)

    out: dict[str, Any] = {"machine": machine().to_dict(), "encoder": emb.model_id, "judge": judge.model_id,
                           "items": {s: len(v) for s, v in rows.items()}, "search": {}, "chosen": {}}
    chosen = searched(train, args, out)
    heads = {k: fit_head(train, k, v) for k, v in chosen.items()}
    log("heads fitted on the whole training split")

    # blends fitted on training items the cross-encoder has logits for (the --train-sample), with
    # the head's out-of-fold scores (a head's in-sample scores would be over-trusted)
    tx = [r for r in train if r.logit is not None]
    oof: dict[int, np.ndarray] = {}
    for kind, v in chosen.items():
        oof.update(out_of_fold(train, kind, v))
    pos = {id(r): i for i, r in enumerate(train)}
    tx_head = [oof[pos[id(r)]] for r in tx]
    blends: dict[str, dict[str, list[float]]] = {"head+logit+cos": {}, "floor": {}}
    for kind in ("noul", "choice", "score"):
        blends["head+logit+cos"][kind] = blend_fit(tx, kind, tx_head, ("head", "logit", "cos")).tolist()
    fl = floor_cv(tx)
    blends["floor"]["noul"] = fl["mean_weights"]
    out["floor_cv_on_training_files"] = fl
    # the same floor fitted on the held-out groups instead (as the shipped blend is, training/blend.py):
    # the training logits are partly memorised, so training items may over-trust them
    fit_groups = [r for r in rows["groups"] if r.logit is not None]
    blends["floor_fit_on_groups"] = {"noul": blend_fit(fit_groups, "noul").tolist() if fit_groups else [1.0, 0.0, 0.0]}
    # and head + logit + cosine fitted there too: items neither the head nor the cross-encoder trained on
    if fit_groups:
        g_head = [heads[r.kind].predict(features(r, FEATURES[chosen[r.kind].feats])) for r in fit_groups]
        blends["head+logit+cos_fit_on_groups"] = {
            k: blend_fit(fit_groups, k, g_head, ("head", "logit", "cos")).tolist() for k in ("noul", "choice", "score")}
    out["blends"] = blends
    log(f"blends: {json.dumps(blends)}")

    table: dict[str, dict[str, Any]] = {}
    sys.path[:0] = [str(REPO / "bench"), str(REPO)]
    from heldout import BM25System, majority_score

    rng = random.Random(7)  # bench/heldout.py's sample (--limit 500), drawn in its order of splits
    samples = {s: set(map(id, rng.sample(its[s], 500) if len(its[s]) > 500 else its[s])) for s in SPLITS}
    for split in SPLITS:
        rs = [r for r in rows[split] if r.logit is not None]
        if not rs:
            log(f"{split}: no cross-encoder logits yet (two-tower xenc); left out")
            continue
        if len(rs) < len(rows[split]):
            log(f"{split}: {len(rows[split]) - len(rs)} rows without cross-encoder logits left out")
        hs = [heads[r.kind].predict(features(r, FEATURES[chosen[r.kind].feats])) for r in rs]
        systems: dict[str, list[np.ndarray]] = {
            "head": hs,
            "cosine": [r.cos for r in rs],
            "bm25": BM25System().answer([r.item for r in rs]),
            "shipped": [np.asarray(r.shipped) for r in rs],
            "xenc_logit": [np.asarray(r.logit) for r in rs],
        }
        for name in ("head+logit+cos", "head+logit+cos_fit_on_groups"):
            if name in blends:
                w = blends[name]
                systems[name] = [np.asarray(w[r.kind][0] * h + w[r.kind][1] * r.logit + w[r.kind][2] * r.cos)
                                 for r, h in zip(rs, hs, strict=True)]
        for name in ("floor", "floor_fit_on_groups"):
            fw = blends[name]["noul"]
            systems[name] = [np.asarray(fw[0] * r.logit + fw[1] * r.cos) if r.kind == "noul" else np.asarray(r.shipped)
                             for r in rs]
        table[split] = {n: evaluate(rs, sc) for n, sc in systems.items()}
        if split == "domains":  # each held-out domain (file) on its own
            table["domains/files"] = {f: {n: evaluate([r for r in rs if r.file == f],
                                                      [x for r, x in zip(rs, sc, strict=True) if r.file == f])
                                          for n, sc in systems.items()} for f in sorted({r.file for r in rs})}
        if split != "groups":  # the groups are in-sample for the groups-fitted blends
            out.setdefault("ci_vs_cosine", {})[split] = {
                n: paired_ci(rs, systems[n], systems["cosine"]) for n in
                ("head", "shipped", "floor", "head+logit+cos", "head+logit+cos_fit_on_groups") if n in systems}
        # bench/heldout.py's own sample (seed 7, 500 a split), to set beside its published tables
        keep = [k for k, r in enumerate(rs) if id(r.item) in samples[split]]
        table[split + "@500"] = {n: evaluate([rs[k] for k in keep], [sc[k] for k in keep])
                                 for n, sc in systems.items()}
        for n, m in table[split].items():
            log(f"{split} | {n} | " + ", ".join(f"{k} {x:.3f}" for k, x in m.items()
                                                 if isinstance(x, float) and not k.endswith("_chance")))
    out["table"] = table
    out["most_common_level"] = {s: majority_score(its[s]) for s in SPLITS}  # always answering it (Scores)
    out["seconds"] = round(time.time() - t_start, 1)
    md = markdown(table)
    out["markdown"] = md
    print(md, flush=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=2, default=float) + "\n")
    save_heads(args.cache / "heads.npz", heads, chosen)
    return 0


def paired_ci(rows: Sequence[Row], a: Sequence[np.ndarray], b: Sequence[np.ndarray], n: int = 400,
              seed: int = 0) -> dict[str, list[float]]:
    """95 % intervals of (a − b) on each type's main measure, resampling whole states (an item's
    `line_id`) with replacement: is a design above cosine, or within the noise?"""
    by_state: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        by_state[r.line_id].append(i)
    states = list(by_state)
    rng = np.random.default_rng(seed)
    got: dict[str, list[float]] = defaultdict(list)
    for _ in range(n):
        idx = [i for s in rng.choice(len(states), len(states)) for i in by_state[states[s]]]
        rs = [rows[i] for i in idx]
        ma, mb = evaluate(rs, [a[i] for i in idx]), evaluate(rs, [b[i] for i in idx])
        for kind in ("noul", "choice", "score"):
            k = main_metric(kind)
            if k in ma and k in mb:
                got[k].append(ma[k] - mb[k])
    return {k: [float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))] for k, v in got.items()}


def save_heads(path: Path, heads: dict[str, Head], chosen: dict[str, Variant]) -> None:
    """The fitted heads, their variants and the reference sets, for bench/two_tower_cost.py."""
    arrays = {f"{k}.{n}": a for k, h in heads.items() for n, a in {**h.p, "mu": h.mu, "sd": h.sd}.items()}
    np.savez(path, variants=np.array(json.dumps({k: asdict(v) for k, v in chosen.items()})),
             ref_u=REFERENCE["u"], ref_h=REFERENCE["h"], **arrays)


def load_heads(path: Path) -> dict[str, tuple[Head, Variant]]:
    """`save_heads`'s heads (and the reference sets, into `REFERENCE`)."""
    with np.load(path) as z:
        variants = {k: Variant(**v) for k, v in json.loads(str(z["variants"])).items()}
        REFERENCE["u"], REFERENCE["h"] = z["ref_u"], z["ref_h"]
        out = {}
        for k, v in variants.items():
            h = v.head()
            h.p = {n.split(".", 1)[1]: z[n] for n in z.files if n.startswith(k + ".") and n.split(".", 1)[1] not in ("mu", "sd")}
            h.mu, h.sd = z[f"{k}.mu"], z[f"{k}.sd"]
            out[k] = (h, v)
    return out


COLS = (("noul_auroc", "Noul AUROC"), ("choice_top1", "Choice top-1"), ("score_exact", "Score exact"),
        ("score_within1", "Score ±1"))


def markdown(table: dict[str, dict[str, Any]]) -> str:
    """Rows: systems; columns: split × measure (the full splits, then bench/heldout.py's sample)."""
    lines = []
    for suffix, title in (("", "full held-out splits"), ("@500", "bench/heldout.py's sample (seed 7, 500 a split)")):
        splits = [s + suffix for s in SPLITS if s + suffix in table]
        names = list(table[splits[0]])
        lines += [f"**{title}**", "", "| system | " + " | ".join(
            f"{s.split('@')[0]} {c}" for s in splits for _, c in COLS) + " |", "|---|" + "---|" * (len(splits) * len(COLS))]
        for n in names:
            cells = []
            for s in splits:
                for k, _ in COLS:
                    x = table[s][n].get(k)
                    cells.append("–" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.3f}")
            lines.append(f"| {n} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m training.two_tower")
    add_parser(ap.add_subparsers(dest="cmd", required=True))
    return cmd(ap.parse_args(["two-tower", *(argv if argv is not None else sys.argv[1:])]))


if __name__ == "__main__":
    sys.exit(main())
