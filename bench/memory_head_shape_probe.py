"""What shape of head over the red flags' inputs reads them best, out of fold by set: the shipped
linear head against a small MLP and a linear head with a nearest-neighbour vote beside it.

    python bench/memory_head_shape_probe.py      # ~10 min on 2 cores; needs the caches
                                                 # bench/fit_memory_heads.py fills

Why: the shipped `flag+text` heads are linear over the classifier's logit and multilingual-e5's
embedding. On sets by new hands most poisonings in other languages still get in (blind9, first
run: 60 of 114 against 15 of 113 in English), and a linear read of an embedding may miss what
lies in pockets of it. Three readers of the same inputs, each fitted on every training set but one
and scored on that one (`fit_memory_heads.out_of_fold`'s folds, the same rows and texts):

* **linear** — the shipped heads (`fit_memory_heads.out_of_fold`, `HeadFitter`);
* **mlp** — one hidden layer of 64 over the logit and the embedding (scikit-learn, early stopping);
* **knn** — a logistic model over the logit, the embedding and the share of positives among the
  text's 10 nearest training texts by the embedding's cosine (in the fitting rows, each text's
  neighbours leave itself out; two rows of one text still see each other, which flatters the vote
  a little in fitting, not in scoring). The shipped heads read the vote since 2026-12-07
  (`bench/fit_memory_heads.py`, `flag+text+vote`), fitted with each row's own set left out of its
  vote instead, and through `HeadFitter` rather than this logistic model.

Printed per flag: AUROC, and the positives under the cut at which each reader refuses 1 %, 2 % and
5 % of the benign cases (`fit_memory_heads.missed_at_budget`: the cut read off the benign cases,
so every reader pays the same benign cost). A text whose shown form has no out-of-fold flag logit is left out (`scored_cases`).
Asserts nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import fit_memory_heads as F  # noqa: E402
from memory_head_data import QUESTIONS  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402

from seams.judges.local import LocalJudge  # noqa: E402
from seams.judges.local.neighbours import quantised, votes  # noqa: E402
from seams.judges.local.runtime import machine  # noqa: E402

BUDGETS = (0.01, 0.02, 0.05)
NEIGHBOURS = 10


def vote(queries: np.ndarray, rows: np.ndarray, labels: np.ndarray, leave_self_out: bool) -> np.ndarray:
    """The share of positives among each query's nearest rows, as the shipped heads' vote counts
    it (`seams.judges.local.neighbours.votes`, int8); `leave_self_out`: query i is row i."""
    own = np.arange(len(rows))
    return votes(quantised(queries), quantised(rows), labels.astype(np.int8), NEIGHBOURS,
                 (own[:len(queries)], own) if leave_self_out else None)


def other_readers(items: list[Any], feats: dict[str, dict[str, np.ndarray]], index: dict[str, int]
                  ) -> dict[str, dict[str, dict[str, float]]]:
    """P(q) per dev text from the mlp and knn readers, out of fold by set."""
    out: dict[str, dict[str, dict[str, float]]] = {r: {q: {} for q in QUESTIONS} for r in ("mlp", "knn")}
    for k in range(F.n_folds(0)):
        train = [it for it in items if it.case is None or F._fold(it.case["id"], 0) != k]
        test = sorted({it.text for it in items if it.case is not None and F._fold(it.case["id"], 0) == k})
        for q in QUESTIONS:
            mine = [t for t in test if not np.isnan(feats[q]["flag"][index[t]])]
            _, _, y, rows = F.design(train, feats, index, q)
            ix, tx = [index[it.text] for it in rows], [index[t] for t in mine]
            flag, emb = feats[q]["flag"], feats[q]["text"]
            mlp = MLPClassifier(hidden_layer_sizes=(64,), alpha=1e-2, max_iter=300, early_stopping=True,
                                random_state=0).fit(np.c_[flag[ix] / 6, emb[ix] * 20], y)
            out["mlp"][q].update(zip(mine, mlp.predict_proba(np.c_[flag[tx] / 6, emb[tx] * 20])[:, 1].tolist(),
                                     strict=True))
            knn = LogisticRegression(C=1.0, max_iter=2000).fit(
                np.c_[flag[ix], vote(emb[ix], emb[ix], y, True), emb[ix] * 3], y)
            got = knn.predict_proba(np.c_[flag[tx], vote(emb[tx], emb[ix], y, False), emb[tx] * 3])[:, 1]
            out["knn"][q].update(zip(mine, got.tolist(), strict=True))
    return out


def report(name: str, p: dict[str, dict[str, float]], cases: dict[str, list[dict[str, Any]]]) -> None:
    for q in QUESTIONS:
        pos = "poisoning" if q == "poison" else "secrets"
        b = np.array([p[q][F.seen(c["text"])] for c in cases["benign"]])
        s = np.array([p[q][F._shown(q, c)] for c in cases[pos]])
        auc = roc_auc_score(np.r_[np.zeros(len(b)), np.ones(len(s))], np.r_[b, s])
        missed = [f"{budget:.0%}: {F.missed_at_budget(b, s, budget)}" for budget in BUDGETS]
        print(f"  {name:7} {q:7} AUROC {auc:.4f}   missed at benign refused {'  '.join(missed)}   (of {len(s)})")


def main() -> None:
    items, index, feats = F.labelled(LocalJudge(ROOT / "seams" / "models" / "seams-minilm", intra_op_threads=2))
    cases = F.dev_cases(items)
    linear = F.out_of_fold(items, feats, index, 0)
    others = other_readers(items, feats, index)
    scored, left = F.scored_cases(cases, linear)
    for p in others.values():
        scored, more = F.scored_cases(scored, p)
        left = {k: left[k] + more[k] for k in left}
    print(machine().line())
    print(f"out of fold by set over {len(F.BY_SET)} training sets; left out (no out-of-fold flag logit): {left}")
    report("linear", linear, scored)
    for name, p in others.items():
        report(name, p, scored)


if __name__ == "__main__":
    main()
