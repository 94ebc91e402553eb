"""Probe: the cross-encoder's logit blended with the base encoder's cosine, per question type.

    python -m training.blend --model DIR [--fit 1500] [--limit 500] [--per-task 300] [--json OUT]

Why: on questions it never saw, the base encoder's cosine (a Noul's hypothesis, or each option's
own text, against the state) beats the fine-tuned cross-encoder on several families
(bench/heldout.py), while the cross-encoder wins where reading matters (contradiction,
injection). A blend `z = a·logit + b·cos + c` per question type keeps both. This probe fits
(a, b, c) on written-corpus items the model never trained on (`--fit-split`, held-out groups
by default: fitted on training items, the blend trusts the memorised logit) and reports, on the held-out splits and the
public held-out sets, the cross-encoder alone, cosine alone and the blend, side by side.

Choices and Scores are fitted as a conditional logit (softmax over the options' z); Nouls as a
logistic regression. Cosine is read for each pair from the option's own text ("name:
description", a level's description) for Choices and Scores, and from the hypothesis for Nouls.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from . import REPO, SHARED_DATA

sys.path[:0] = [str(REPO / "bench"), str(REPO)]


def _kind(q: Any) -> str:
    return str(q.type)


def _label_index(q: Any, label: Any) -> int:
    if q.type == "choice":
        return list(q.criteria).index(label)
    return int(label)


def collect(judge: Any, cos: Any, rows: list[tuple[Any, Any, Any]]) -> list[dict[str, Any]]:
    """Per (question, state, label): the cross-encoder's logit and the cosine of every hypothesis."""
    from seams.judges.local.hypotheses import focus, option_texts, state_text

    out = []
    by_state: dict[str, list[int]] = defaultdict(list)
    for i, (q, state, _) in enumerate(rows):
        by_state[json.dumps(state, sort_keys=True, default=str)].append(i)
    logits: dict[int, np.ndarray] = {}
    for idx in by_state.values():
        qs = {f"q{i}": rows[i][0] for i in idx}
        got = judge.answers_and_features([rows[idx[0]][1]], qs)[0][1]
        for i in idx:
            # the cross-encoder's own logits: `.logits` are read after the config's blend, and a
            # blend fitted on those would be a blend of a blend
            logits[i] = np.asarray(got[f"q{i}"].model_logits, dtype=float)
    for i, (q, state, label) in enumerate(rows):
        text = state_text(focus(q, state))
        opts = option_texts(q)  # a Noul's: its hypothesis
        out.append({"kind": _kind(q), "logit": logits[i], "cos": np.asarray(cos.sim(opts, [text] * len(opts))),
                    "y": bool(label) if q.type == "noul" else _label_index(q, label)})
    return out


def _z(r: dict[str, Any], w: np.ndarray) -> np.ndarray:
    return w[0] * r["logit"] + w[1] * r["cos"] + w[2]


def fit(rows: list[dict[str, Any]], kind: str) -> np.ndarray:
    """(a, b, c) minimising log-loss of the blend on `rows` of one kind (c is 0 for softmaxes)."""
    from scipy.optimize import minimize

    part = [r for r in rows if r["kind"] == kind]

    def loss(w: np.ndarray) -> float:
        total = 0.0
        for r in part:
            z = _z(r, w)
            if kind == "noul":
                zz = float(z[0])
                total += np.logaddexp(0, -zz) if r["y"] else np.logaddexp(0, zz)
            else:
                total += float(np.logaddexp.reduce(z) - z[r["y"]])
        return total / len(part) + 1e-4 * float(w[0] ** 2 + w[1] ** 2)

    # L-BFGS on the smooth log-loss: Nelder-Mead's first simplex step from a zero weight is tiny,
    # and on one of five folds (training/two_tower.py's) it stopped at cosine 0.0007 where the
    # others found 1.4-1.7
    w0 = np.array([1.0, 0.0, 0.0])
    return np.asarray(minimize(loss, w0, method="L-BFGS-B").x)


class ShippedCosine:
    """The cosine the judge will read: the int8 `encoder.onnx` through the runtime's own
    `SentenceEncoder` (not torch), so the weights are fitted on the numbers they will meet."""

    def __init__(self, judge: Any, path: Path) -> None:
        from seams.judges.local.config import EncoderConfig
        from seams.judges.local.encoder import SentenceEncoder
        from seams.judges.local.runtime import load_session

        self.enc = SentenceEncoder(path, EncoderConfig(), judge._tokenizer, load_session(path, judge.intra_op_threads),
                                   judge._pad_id, batch_size=1)

    def sim(self, options: list[str], texts: list[str]) -> list[float]:
        return self.enc.cosines(options, texts[0]).tolist()


def fit_rows(judge: Any, cos: Any, split: str, n: int, data: Path) -> list[dict[str, Any]]:
    """`collect` over `n` written items of `split` (seeded): what the blend's weights are fitted on."""
    from .written import items

    pool = items(split, data / "written")
    chosen = random.Random(11).sample(pool, min(n, len(pool)))
    return collect(judge, cos, [(it.question, it.state, it.label) for it in chosen])


def fit_blend(model_dir: Path, *, split: str = "groups", n: int = 1500, threads: int = 2,
              noul_cosine: bool = False, data: Path = SHARED_DATA) -> dict[str, list[float]]:
    """Blend weights per type for the model in `model_dir`, fitted on `n` written items of
    `split`. A Noul keeps its logit as it is (`[1, 0, 0]`) unless `noul_cosine`."""
    from seams.judges.local import LocalJudge

    judge = LocalJudge(model_dir, intra_op_threads=threads)
    rows = fit_rows(judge, ShippedCosine(judge, model_dir / "encoder.onnx"), split, n, data)
    out = {k: fit(rows, k).tolist() for k in (("noul", "choice", "score") if noul_cosine else ("choice", "score"))}
    out.setdefault("noul", [1.0, 0.0, 0.0])
    return out


def measure(rows: list[dict[str, Any]], w: np.ndarray | None, which: str) -> dict[str, float]:
    """Noul AUROC, Choice top-1, Score exact/within-1 of one system: xenc, cosine or blend."""
    from model_quality import auroc

    def score(r: dict[str, Any]) -> np.ndarray:
        if which == "xenc":
            return np.asarray(r["logit"])
        if which == "cosine":
            return np.asarray(r["cos"])
        assert w is not None
        return _z(r, w[r["kind"]] if isinstance(w, dict) else w)

    res: dict[str, float] = {}
    nouls = [r for r in rows if r["kind"] == "noul"]
    if nouls:
        res["noul_auroc"] = auroc([r["y"] for r in nouls], [float(score(r)[0]) for r in nouls])
    for kind in ("choice", "score"):
        part = [r for r in rows if r["kind"] == kind]
        if not part:
            continue
        pred = [int(np.argmax(score(r))) for r in part]
        res[f"{kind}_top1" if kind == "choice" else "score_exact"] = float(
            np.mean([p == r["y"] for p, r in zip(pred, part, strict=True)]))
        if kind == "score":
            res["score_within1"] = float(np.mean([abs(p - r["y"]) <= 1 for p, r in zip(pred, part, strict=True)]))
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--data", type=Path, default=SHARED_DATA)
    ap.add_argument("--fit", type=int, default=1500, help="written items to fit the blend on")
    ap.add_argument("--fit-split", default="groups", choices=("train", "groups", "wordings", "domains"),
                    help="where they come from: `groups` (held-out groups of seen files) by default, "
                         "items the model never trained on, so its logit is not trusted for memorising "
                         "them; the report's row of that split is then in-sample")
    ap.add_argument("--limit", type=int, default=500, help="items per held-out split (bench/heldout.py's sample)")
    ap.add_argument("--per-task", type=int, default=300)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)

    from model_quality import Cosine

    from seams.judges.local import LocalJudge

    from .mixture import build_eval
    from .written import items

    judge = LocalJudge(args.model, intra_op_threads=args.threads)
    cos = Cosine(args.threads)
    root = args.data / "written"
    rows_fit = fit_rows(judge, cos, args.fit_split, args.fit, args.data)
    weights = {k: fit(rows_fit, k) for k in ("noul", "choice", "score")}
    print("model", judge.model_id, "| blend (a·logit + b·cos + c):",
          {k: [round(float(x), 3) for x in v] for k, v in weights.items()}, flush=True)

    rng = random.Random(7)  # bench/heldout.py's sample
    evals: dict[str, list[tuple[Any, Any, Any]]] = {}
    for split in ("domains", "groups", "wordings"):
        its = items(split, root)
        its = rng.sample(its, args.limit) if len(its) > args.limit else its
        evals[split] = [(it.question, it.state, it.label) for it in its]
    for task, eis in build_eval(args.data, per_task=args.per_task).items():
        evals[task] = [(e.question, e.state, e.label) for e in eis]
    table: dict[str, dict[str, dict[str, float]]] = {}
    print("| set | system | measures |\n|---|---|---|")
    for name, rows in evals.items():
        got = collect(judge, cos, rows)
        table[name] = {s: measure(got, weights, s) for s in ("xenc", "cosine", "blend")}
        for s, m in table[name].items():
            print(f"| {name} | {s} | " + ", ".join(f"{k} {v:.3f}" for k, v in m.items()) + " |", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"model": judge.model_id, "weights": {k: v.tolist() for k, v in weights.items()},
                                         "table": table}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
