"""Other heads beside the shipped one, on the same features and draws as `bench/heads.py`.

    python bench/head_variants.py --model-dir seams/models/seams-minilm --cache DIR [--n 200] [--repeats 3]
                                  [--variants one-vs-rest,per-option,rbf-svm,encoder] [--json OUT]

Why it exists: heads fall short of the issue's accuracy goals on some calibration sets (three-way
NLI, evidence), and the question is whether a different head would reach them or whether the
model's features are the limit. Each variant is fitted on N labels drawn from `fit.jsonl` exactly
as `bench/heads.py` draws them (seed 1000·N + draw) and measured on `heldout.jsonl`; the model's
passes come from `bench/heads.py`'s `--cache` (run that first with the same DIR, or this runs them).

* **linear** — the shipped head (`HeadFitter`: a Noul's logistic regression, a Choice's or
  Score's conditional logit with a bias per option);
* **one-vs-rest** — Choices and Scores only: the head before stop 16, a binary logistic regression
  over the option rows (scikit-learn, C cross-validated by item);
* **per-option** — Choices and Scores only: the conditional logit with every column copied once
  per option, so the head may weigh a feature differently for each option;
* **rbf-svm** — Nouls only: scikit-learn's RBF SVM over the same columns, C and γ cross-validated;
* **encoder** — the linear head with 384 more columns, the elementwise product of the base
  encoder's unit embeddings of the state (the question's view of it) and of the hypothesis.

Noul: AUROC; Choice and Score: top-1 (a Score's exact level). Mean over the draws.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from heads import _limit, passed  # noqa: E402  (bench/heads.py: the draws' data and cached passes)

from seams.calibration.dataset import load_jsonl  # noqa: E402
from seams.calibration.head_fitting import DEFAULT_CS, HeadFitter, head_rows  # noqa: E402
from seams.judges.local import LocalJudge  # noqa: E402
from seams.judges.local.hypotheses import focus, option_texts, state_text  # noqa: E402
from seams.judges.local.runtime import machine  # noqa: E402
from seams.rubric import Rubric  # noqa: E402
from seams.rubric.alone import AskedAlone  # noqa: E402

SEAMS = ("confirm-before-act", "escalation", "memory-admission", "output-check", "passage-gate", "model-routing")


def _score(kind: str, z: np.ndarray, y: np.ndarray, k: int) -> float:
    from sklearn.metrics import roc_auc_score

    if kind == "noul":
        return float(roc_auc_score(y, z))
    return float(np.mean(z.reshape(-1, k).argmax(1) == y.reshape(-1, k).argmax(1)))


def _standard(l_fit: np.ndarray, f_fit: np.ndarray) -> Any:
    """The shipped head's column scaling (standardised; the logit ×10), fitted on the draw."""
    mu, sd = f_fit.mean(0), f_fit.std(0) + 1e-12
    ml, sl = l_fit.mean(), l_fit.std() + 1e-12
    return lambda lg, ft: np.column_stack([(lg - ml) / sl * 10, (ft - mu) / sd])


def linear(kind: str, fit: tuple, held: tuple, k: int) -> float:
    h = HeadFitter().fit(*fit)
    z = h.logit_weight_ * held[0] + held[1] @ h.weights_ + h.bias_
    if h.option_bias_ is not None:
        z = (z.reshape(-1, k) + np.asarray(h.option_bias_)).ravel()
    return _score(kind, z, held[2], k)


def one_vs_rest(kind: str, fit: tuple, held: tuple, k: int) -> float:
    from sklearn.linear_model import LogisticRegressionCV
    from sklearn.model_selection import GroupKFold

    x = _standard(fit[0], fit[1])
    est = LogisticRegressionCV(Cs=list(DEFAULT_CS), cv=list(GroupKFold(5).split(x(fit[0], fit[1]), fit[2], fit[3])),
                               scoring="neg_log_loss", max_iter=2000).fit(x(fit[0], fit[1]), fit[2])
    return _score(kind, est.decision_function(x(held[0], held[1])), held[2], k)


def per_option(kind: str, fit: tuple, held: tuple, k: int) -> float:
    x = _standard(fit[0], fit[1])

    def widen(lg: np.ndarray, ft: np.ndarray) -> np.ndarray:
        x3 = x(lg, ft).reshape(-1, k, ft.shape[1] + 1)
        copies = np.einsum("nkd,kj->nkjd", x3[:, :, 1:], np.eye(k)).reshape(len(x3), k, -1)
        return np.concatenate([x3, copies], axis=2)

    # the shipped head's own conditional-logit fit (C cross-validated by item), on the widened columns
    w, bias = HeadFitter()._fit_softmax(widen(fit[0], fit[1]), fit[2].reshape(-1, k).argmax(1))
    return _score(kind, (widen(held[0], held[1]) @ w + np.asarray(bias)).ravel(), held[2], k)


def rbf_svm(kind: str, fit: tuple, held: tuple, k: int) -> float:
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    x, xh = np.column_stack(fit[:2]), np.column_stack(held[:2])
    grid = {"svc__C": [0.3, 1, 3, 10], "svc__gamma": ["scale", 0.3 / x.shape[1], 3 / x.shape[1]]}
    svc = GridSearchCV(make_pipeline(StandardScaler(), SVC(kernel="rbf")), grid, cv=5, scoring="roc_auc").fit(x, fit[2])
    return _score(kind, svc.decision_function(xh), held[2], k)


VARIANTS = {"one-vs-rest": (one_vs_rest, {"choice", "score"}), "per-option": (per_option, {"choice", "score"}),
            "rbf-svm": (rbf_svm, {"noul"}), "encoder": (linear, {"noul", "choice", "score"})}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model-dir", type=Path, required=True)
    ap.add_argument("--cache", type=Path, default=None)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    print(machine().line(), flush=True)  # every figure names its machine
    variants = [v for v in args.variants.split(",") if v]
    judge = LocalJudge(args.model_dir, intra_op_threads=args.threads)
    encoder = judge._encoder
    if "encoder" in variants and encoder is None:
        sys.exit(f"{args.model_dir}: no sentence encoder beside the model; leave out the encoder variant")
    print(f"# model {judge.model_id}; N {args.n}, {args.repeats} draws; command: python {' '.join(sys.argv)}", flush=True)
    report: dict[str, Any] = {"model": judge.model_id, "argv": sys.argv, "n": args.n, "questions": {}}
    warnings.simplefilter("ignore")
    for seam in SEAMS:
        rubric = Rubric.builtin(seam)
        cap = 500 if seam == "memory-admission" else None  # as bench/heads.py --set-limit memory-admission=500
        fit_set, held_set = [_limit(load_jsonl(ROOT / f"calibration/{seam}/{f}.jsonl", rubric.questions), cap)
                             for f in ("fit", "heldout")]
        fp = passed(rubric, judge, fit_set, args.cache, f"{seam}/fit")["items"]
        hp = passed(rubric, judge, held_set, args.cache, f"{seam}/heldout")["items"]
        for qid, q in rubric.questions.items():
            pool = [it for it in fit_set.items if qid in it.labels]
            held = [it for it in held_set.items if qid in it.labels]
            if len(held) < 50 or len(pool) < args.n:
                continue
            kind, k = q.type, len(option_texts(q))
            hv = encoder.embed(option_texts(q)) if encoder is not None else None

            def rows(items: list[Any], pas: dict[str, Any], with_encoder: bool, q: Any = q, qid: str = qid,
                     rubric: Any = rubric, hv: Any = hv, k: int = k) -> tuple:
                lg, ft, y, g = head_rows(q, [pas[it.id][1][qid] for it in items], [it.labels[qid] for it in items])
                if with_encoder:
                    view = [AskedAlone._project(it.state, rubric.spec.asked_alone.get(qid)) for it in items]
                    st = encoder.embed([state_text(focus(q, v)) for v in view])
                    ft = np.concatenate([ft, (st[:, None, :] * hv[None]).reshape(len(items) * k, -1)], axis=1)
                return lg, ft, y, g

            scores: dict[str, list[float]] = {"linear": []}
            for r in range(args.repeats):
                rng = np.random.default_rng(1000 * args.n + r)
                sample = [pool[j] for j in rng.choice(len(pool), size=args.n, replace=False)]
                fit_rows, held_rows = rows(sample, fp, False), rows(held, hp, False)
                scores["linear"].append(linear(kind, fit_rows, held_rows, k))
                for v in variants:
                    fn, kinds = VARIANTS[v]
                    if kind not in kinds:
                        continue
                    if v == "encoder":
                        scores.setdefault(v, []).append(fn(kind, rows(sample, fp, True), rows(held, hp, True), k))
                    else:
                        scores.setdefault(v, []).append(fn(kind, fit_rows, held_rows, k))
            means = {v: round(float(np.mean(s)), 4) for v, s in scores.items()}
            report["questions"][f"{seam}/{qid}"] = {"kind": kind, "held_out": len(held), **means}
            metric = "AUROC" if kind == "noul" else "top-1"
            print(f"{seam}/{qid} [{kind}, {metric}, held out {len(held)}]  "
                  + "  ".join(f"{v} {m:.3f}" for v, m in means.items()), flush=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
