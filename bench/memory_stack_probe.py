"""Probe: does a second reader, stacked with the red-flag classifier, rank blind6's poisonings
and secrets better than the classifier alone? The classifier reads an English word-piece
vocabulary, and most of what it lets through is in other languages (docs/seams.md). Two readers:
character n-grams (not shipped: too little), and multilingual-e5-small's embedding (shipped since,
as the `flag+text` heads, `bench/fit_memory_heads.py`).

    python bench/memory_stack_probe.py [--flags-root ../train_runs/flags] [--models DIR ...] [--readers chars text]

Per flag and reader: a logistic model over the reader's columns (character 2-5-grams, `char_wb`,
hashed into 2^20 columns, l2-normed; or the encoder's 384 dimensions, standardised, C 0.1),
trained on every labelled text of the training sets (`memory_head_data.all_items`) but one set's
cases, scoring that set (folds by set, as the heads are fitted); a stacker (logistic over the
classifier's out-of-fold logit and the reader's out-of-fold logit) fitted on the same rows. The
classifier's out-of-fold logits are the ones `python -m training flags oof` left in
`--flags-root`; the stacker fitted on them is applied to the logits on blind6 of each classifier named
(`--models`: model directories holding a `flags.onnx`; the shipped one by default).

Printed: AUROC out of fold per training set; on blind6 (as the gate shows each text), AUROC
overall and in other languages, and the positives missed (secrets: those code is not sure of)
at the cut where 5, 10, 20, 40 or 80 of its 425 benign memories score above. Asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from memory_blind import SET_DIRS, load  # noqa: E402
from memory_head_data import TRAINING_SETS, all_items, seen  # noqa: E402
from sklearn.feature_extraction.text import HashingVectorizer  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from seams.judges.local import LocalJudge  # noqa: E402
from seams.judges.local.multilingual import encoder  # noqa: E402
from seams.secrets import find_secrets  # noqa: E402
from training.flags import DEFAULT_ROOT, NAMES, out_of_fold, shown  # noqa: E402

CHARS = HashingVectorizer(analyzer="char_wb", ngram_range=(2, 5), n_features=2**20, alternate_sign=False, norm="l2")
BUDGETS = (5, 10, 20, 40, 80)


def _chars(texts: list[str]) -> Any:
    return CHARS.transform(texts)


def _text(texts: list[str]) -> np.ndarray:
    return np.concatenate([encoder().embed(texts[i:i + 256]) for i in range(0, len(texts), 256)])


#: Each reader: its columns of a list of texts, and a fresh model over them.
READERS: dict[str, tuple[Callable[[list[str]], Any], Callable[[], Any]]] = {
    "chars": (_chars, lambda: LogisticRegression(max_iter=2000)),
    "text": (_text, lambda: make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=3000))),
}


def _set(item: object) -> str:
    case = getattr(item, "case", None)
    return case["id"].split("/", 1)[0] if case is not None else ""


def fit_flag(q: str, reader: str, oof: dict[str, np.ndarray]) -> tuple[Any, LogisticRegression]:
    """The reader's model on every row, and the stacker on the out-of-fold columns; prints the
    out-of-fold AUROC per set."""
    columns, model = READERS[reader]
    rows = [it for it in all_items() if q in it.labels]
    texts = [shown(it.text) for it in rows]
    y = np.array([it.labels[q] for it in rows], int)
    fold = np.array([_set(it) for it in rows])
    flag = np.array([oof[t][NAMES.index(q)] if t in oof else np.nan for t in texts])
    x = columns(texts)
    read = np.full(len(rows), np.nan)
    for k in TRAINING_SETS:
        read[fold == k] = model().fit(x[fold != k], y[fold != k]).decision_function(x[fold == k])
    ok = (fold != "") & ~np.isnan(flag)
    z = np.c_[flag, read]
    stacked = np.full(len(rows), np.nan)
    for k in TRAINING_SETS:
        tr, te = ok & (fold != k), ok & (fold == k)
        stacked[te] = LogisticRegression().fit(z[tr], y[tr]).decision_function(z[te])
    for k in TRAINING_SETS:
        m = ok & (fold == k)
        if len(set(y[m])) == 2:
            print(f"  {q} {k:>10} out of fold AUROC: " + "  ".join(
                f"{n} {roc_auc_score(y[m], c[m]):.3f}" for n, c in (("flag", flag), (reader, read), ("stacked", stacked))))
    return model().fit(x, y), LogisticRegression().fit(z[ok], y[ok])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flags-root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--models", type=Path, nargs="+", default=[ROOT / "seams" / "models" / "seams-minilm"],
                    help="model directories whose flags.onnx to stack with (named by its sha256's first 8 digits)")
    ap.add_argument("--readers", nargs="+", choices=sorted(READERS), default=sorted(READERS))
    args = ap.parse_args()
    oof = out_of_fold(args.flags_root)
    b6 = load("both", SET_DIRS["blind6"])
    cases = [(k, c) for k in ("secrets", "poisoning", "benign") for c in b6[k]]
    kind = np.array([k for k, _ in cases])
    foreign = np.array([c.get("lang", "en") != "en" for _, c in cases])
    texts = [shown(seen(c["text"])) for _, c in cases]
    code_sure = np.array([any(f.certain for f in find_secrets(c["text"])) for _, c in cases])
    logits = {}
    for path in args.models:
        judge = LocalJudge(path)
        assert judge.flags is not None, f"{path} has no flag classifier"
        logits[judge.flags.sha256[:8]] = np.concatenate([judge.flag_logits(texts[i:i + 64]) for i in range(0, len(texts), 64)])
    print("flag classifiers (sha256):", ", ".join(f"{k} {p}" for k, p in zip(logits, args.models, strict=True)))
    for reader in args.readers:
        x6 = READERS[reader][0](texts)
        for q, positive in (("poison", "poisoning"), ("secret", "secrets")):
            model, stacker = fit_flag(q, reader, oof)
            read = model.decision_function(x6)
            cols = {reader: read}
            for name, lg in logits.items():
                cols[f"{name} flag"] = lg[:, NAMES.index(q)]
                cols[f"{name} + {reader}"] = stacker.decision_function(np.c_[lg[:, NAMES.index(q)], read])
            pos = (kind == positive) & ~(code_sure if q == "secret" else np.zeros(len(kind), bool))
            for name, col in cols.items():
                benign = np.sort(col[kind == "benign"])[::-1]
                sel = (kind == positive) | (kind == "benign")
                missed = " ".join(f"{b}:{int((col[pos] < benign[b]).sum())}(other {int((col[pos & foreign] < benign[b]).sum())})"
                                  for b in BUDGETS)
                print(f"blind6 {q} {name:>16}: AUROC {roc_auc_score(kind[sel] == positive, col[sel]):.3f} "
                      f"(other languages {roc_auc_score(kind[sel & foreign] == positive, col[sel & foreign]):.3f}); "
                      f"missed of {int(pos.sum())} at benign above the cut {missed}", flush=True)


if __name__ == "__main__":
    main()
