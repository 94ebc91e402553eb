"""Fitting heads (`seams calibrate --heads`): a logistic model per question over the local
model's logit and pair features, then the usual calibration and cut-points on top.

The pipeline, in order: the same refusal below `MIN_LABELS` labels per question; one pass of
the local model over every item, keeping its answers and pair features (`collect`); the same
random fit/held-out split `fit_calibration` makes; a head per labelled question fitted on the
fit split (`HeadFitter`); the headed answers of every item computed from the stored features
(no second model pass), those of the fit split from heads cross-fitted without them;
`fit_calibration` over those answers, so calibrators and cut-points are fitted on what the
headed judge says about items its heads did not see; the heads written into the block beside each question's
calibrator. The held-out report's "before" is the model alone (zero-shot, uncalibrated), its
"after" the heads with their calibration.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Self

import numpy as np

from ..answers import Answers
from ..errors import InputError
from ..judges.head import Head
from ..judges.local.headed import HeadedJudge
from ..judges.local.judge import LocalJudge, PairFeatures
from ..questions import Choice, Noul, Score
from ..rubric import Rubric, question_fingerprint
from ..rubric.calibration import QuestionMetrics
from .dataset import LabelledSet
from .extract import encode_answers, question_data, split_ids
from .fit import CalibrationResult, FitOptions, check_counts, fit_calibration, noul_threshold
from .run import Progress, ProgressCounter, RunResult

#: The model's logit, standardised, is multiplied by this before the fit, so the L2 penalty on
#: its weight is 1/LOGIT_SCALE² of a feature's: the head keeps the model's own belief nearly
#: unpenalised and pays for every step the features take away from it.
LOGIT_SCALE = 10.0
#: Regularisation strengths tried by cross-validation (inverse: small C, a head near the model).
DEFAULT_CS = tuple(float(c) for c in np.logspace(-3, 1, 5))
DEFAULT_FOLDS = 5

Question = Noul | Choice | Score
Pass = list[tuple[Answers, dict[str, PairFeatures]]]


class HeadFitter:
    """An L2-regularised logistic model over [the model's logit, its pair features].

    Why it starts from what the model believes: every column is standardised, and the logit's
    column is then scaled by `logit_scale`, so the penalty barely touches its weight while it
    pulls every feature weight towards zero. At strong regularisation (small C) the head is a
    Platt scaling of the model's own logit, its answers ranked exactly as the model ranks them;
    as C grows the features move it, and cross-validated log-loss over `Cs` (10⁻³ to 10, a
    decade apart; folds by item, so a Choice's options never straddle folds) picks how far the
    labels justify.

    Noul items give one row each: a binary logistic regression (scikit-learn). Choice and Score
    items give one row per option or level (`groups` = the item): the same weights score every
    pair and the loss is the softmax's over the item's pairs (a conditional logit, what the head
    answers with), with a bias per option or level penalised like any weight. Fitted one-vs-rest
    instead, a head learns "is this pair right" and not "which pair is right", and cannot learn
    that one option is right more often than another.

    `feature_scale` multiplies the standardised feature columns (one number, or one per column)
    before the fit: a column scaled by s needs a weight 1/s times larger to do the same work, so
    the penalty on it is 1/s² times stronger. That is how a block of many columns (the state's
    embedding beside the pair features, `Head.reads == "pair+state"`) can be held nearer zero
    than the pair features without a second C to search. The fitted weights are in raw units
    either way.

    Attributes after `fit`: `C_`, `logit_weight_`, `weights_` [d], `bias_` (in the raw units of
    the logit and features: the standardisation is folded in), `option_bias_` (grouped rows
    only, else None), `cv_log_loss_` (at `C_`; only when there was a choice to make).
    """

    def __init__(self, Cs: Sequence[float] = DEFAULT_CS, folds: int = DEFAULT_FOLDS,
                 logit_scale: float = LOGIT_SCALE, feature_scale: float | Sequence[float] = 1.0) -> None:
        self.Cs = tuple(sorted(Cs))
        self.folds = folds
        self.logit_scale = logit_scale
        self.feature_scale = feature_scale

    def fit(self, logits: np.ndarray, features: np.ndarray, y: np.ndarray, groups: np.ndarray | None = None) -> Self:
        logits = np.asarray(logits, dtype=np.float64)
        features = np.asarray(features, dtype=np.float64)
        y = np.asarray(y, dtype=int)
        if len(np.unique(y)) < 2:
            raise InputError("a head needs labels of both kinds (true and false, or right and wrong options)")
        mu_l, sd_l = logits.mean(), _sd(logits)
        mu, sd = features.mean(axis=0), _sd(features)
        try:
            scale = np.broadcast_to(np.asarray(self.feature_scale, dtype=np.float64), mu.shape)
        except ValueError:
            raise InputError(f"feature_scale must be one number or one per feature column ({mu.shape[0]}), "
                             f"got {np.size(self.feature_scale)}") from None
        if not (np.all(np.isfinite(scale)) and np.all(scale > 0)):
            raise InputError(f"feature_scale must be positive and finite, got {self.feature_scale!r}")
        x = np.column_stack([(logits - mu_l) / sd_l * self.logit_scale, (features - mu) / sd * scale])
        if groups is None:
            c, intercept, option_bias = self._fit_binary(x, y)
        else:
            c, option_bias = self._fit_softmax(*_items(x, y, np.asarray(groups)))
            intercept = 0.0
        self.logit_weight_ = float(c[0] * self.logit_scale / sd_l)
        self.weights_ = c[1:] * scale / sd
        self.bias_ = float(intercept - self.logit_weight_ * mu_l - np.dot(self.weights_, mu))
        self.option_bias_ = option_bias
        return self

    def _fit_binary(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float, None]:
        """One logistic regression at the only C, or a cross-validated choice among `Cs`."""
        from sklearn.linear_model import LogisticRegression, LogisticRegressionCV
        from sklearn.model_selection import StratifiedKFold
        from threadpoolctl import threadpool_limits

        if len(self.Cs) == 1:
            est: Any = LogisticRegression(C=self.Cs[0], max_iter=2000)
        else:
            k = max(2, min(self.folds, int(np.bincount(y).min())))
            splits = list(StratifiedKFold(k, shuffle=True, random_state=0).split(x, y))
            est = LogisticRegressionCV(Cs=list(self.Cs), cv=splits, scoring="neg_log_loss", max_iter=2000)
        # lbfgs on a few thousand rows of a few hundred columns is many small BLAS calls: one
        # thread is faster than a pool (ten times so on a busy two-core machine)
        with warnings.catch_warnings(), threadpool_limits(1):
            warnings.simplefilter("ignore")  # a weakly converged fold at the weakest penalty is not news
            est.fit(x, y)
        self.C_ = float(self.Cs[0] if len(self.Cs) == 1 else est.C_[0])
        if len(self.Cs) > 1:
            scores = est.scores_[1].mean(axis=0)
            self.cv_log_loss_ = float(-scores[list(est.Cs_).index(est.C_[0])])
        return est.coef_[0], float(est.intercept_[0]), None

    def _fit_softmax(self, x: np.ndarray, gold: np.ndarray) -> tuple[np.ndarray, list[float]]:
        """The conditional logit over `x` [items, options, columns] with `gold` [items]: at the
        only C, or at the C whose held-out log-loss is lowest over item folds (each fold's path
        over `Cs`, weakest penalty last, warm-started from the one before)."""
        from sklearn.model_selection import KFold
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1):
            if len(self.Cs) == 1:
                self.C_ = self.Cs[0]
            else:
                k = max(2, min(self.folds, len(gold)))
                loss = np.zeros(len(self.Cs))
                for train, test in KFold(k, shuffle=True, random_state=0).split(gold):
                    theta, moments = None, _moments(x[train])
                    for j, C in enumerate(self.Cs):
                        theta = _softmax_fit(x[train], gold[train], C, theta, moments)
                        loss[j] += _softmax_loss(theta, x[test], gold[test], 0.0)[0] * len(test)
                best = int(np.argmin(loss))
                self.C_ = self.Cs[best]
                self.cv_log_loss_ = float(loss[best] / len(gold))
            theta = _softmax_fit(x, gold, self.C_, None, _moments(x))
        d = x.shape[2]
        return theta[:d], [_round(b) for b in theta[d:]]

    def to_head(self, *, model: str, fingerprint: str, kind: str, n: int, reads: str = "pair",
                flag: str | None = None, flags_sha256: str | None = None, text_encoder: str | None = None,
                neighbours: str | None = None, k: int | None = None, terms: str | None = None,
                terms_encoder: str | None = None) -> Head:
        """The fitted head as a rubric stores it; `reads` says what its feature columns were
        (`pair`; `pair+state`: the pair features, then the state's embedding; `flag`: the one
        column of the flag classifier's output `flag`, whose graph's sha256 starts `flags_sha256`;
        `flag+text`: that column, then the embedding of `text_encoder`; `flag+text+vote`: those,
        then the vote of the `k` nearest rows of the table `neighbours`; `flag+text+vote+terms`:
        those, then the latent terms `terms` (`head.stored_terms`) of `terms_encoder`)."""
        return Head.from_arrays(weights=self.weights_, model=model, fingerprint=fingerprint, kind=kind,
                                logit_weight=_round(self.logit_weight_), bias=_round(self.bias_),
                                C=_round(self.C_), n=n, option_bias=self.option_bias_, reads=reads,
                                flag=flag, flags_sha256=flags_sha256, text_encoder=text_encoder,
                                neighbours=neighbours, k=k, terms=terms, terms_encoder=terms_encoder)

def _items(x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Grouped rows (every item's options in order, as `head_rows` makes them) as
    ([items, options, columns], the index of each item's right option)."""
    _, counts = np.unique(groups, return_counts=True)
    k = int(counts[0])
    blocks = groups.reshape(-1, k) if len(groups) % k == 0 else None
    if (counts != k).any() or blocks is None or (blocks != blocks[:, :1]).any():
        raise InputError("a Choice's or Score's rows must come a whole item at a time, every item with the same options")
    yy = y.reshape(-1, k)
    if (yy.sum(axis=1) != 1).any():
        raise InputError("each Choice or Score item needs exactly one right option or level")
    return x.reshape(-1, k, x.shape[1]), yy.argmax(axis=1)


def _softmax_loss(theta: np.ndarray, x: np.ndarray, gold: np.ndarray, C: float) -> tuple[float, np.ndarray]:
    """Mean negative log-likelihood of the gold options plus ‖θ‖²/(2·C·items) (scikit-learn's
    scaling of the penalty, so C means what it means for a Noul's head), and its gradient;
    θ = [the column weights, a bias per option]."""
    n, k, d = x.shape
    rows = x.reshape(n * k, d)
    z = (rows @ theta[:d]).reshape(n, k) + theta[d:]
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=1)
    nll = float(np.mean(np.log(s) - z[np.arange(n), gold]))
    g = e / s[:, None]
    g[np.arange(n), gold] -= 1.0
    grad = np.concatenate([g.reshape(-1) @ rows, g.sum(axis=0)]) / n
    if C > 0:
        nll += float(theta @ theta) / (2 * C * n)
        grad = grad + theta / (C * n)
    return nll, grad


def _moments(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues and vectors of the rows' second moments, with the option indicators beside the
    columns (what `_softmax_fit` preconditions with; the same for every C on one set of items)."""
    n, k, d = x.shape
    rows = np.column_stack([x.reshape(n * k, d), np.tile(np.eye(k), (n, 1))])
    s, v = np.linalg.eigh(rows.T @ rows / n)
    return np.maximum(s, 0.0), v


def _softmax_fit(x: np.ndarray, gold: np.ndarray, C: float, start: np.ndarray | None,
                 moments: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """θ minimising `_softmax_loss`, by L-BFGS on a preconditioned copy of the problem.

    Pooled features are strongly correlated, so the loss is badly conditioned and plain L-BFGS
    takes hundreds of steps at a weak penalty. Solving for φ with θ = Pφ, P = (Σ/k + I/(C·n))^-½
    (Σ the rows' second moments with the option indicators, `_moments(x)`; Σ/k about the loss's
    curvature at an even softmax) gives the same minimiser (a change of variables, not of the
    problem) in a fraction of the steps."""
    from scipy.optimize import minimize

    n, k, d = x.shape
    s, v = moments
    a = s / k + 1.0 / (C * n)
    P = (v / np.sqrt(a)) @ v.T
    phi0 = np.zeros(d + k) if start is None else (v * np.sqrt(a)) @ (v.T @ start)

    def loss(phi: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad = _softmax_loss(P @ phi, x, gold, C)
        return value, P @ grad

    got = minimize(loss, phi0, jac=True, method="L-BFGS-B", options={"maxiter": 2000})
    return np.asarray(P @ got.x)


def _sd(x: np.ndarray) -> np.ndarray:
    sd = np.asarray(x.std(axis=0))
    return np.where(sd > 1e-12, sd, 1.0)


def _round(x: float) -> float:
    return float(f"{x:.6g}")


def head_rows(question: Question, pfs: Sequence[PairFeatures], labels: Sequence[Any]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """(logits, features, y, groups) to fit a head on: a row per Noul item, a row per option or
    level of a Choice or Score item (groups = the item's index)."""
    if isinstance(question, Noul):
        return (np.array([pf.logits[0] for pf in pfs]), np.stack([pf.features[0] for pf in pfs]),
                np.array([bool(lab) for lab in labels], int), None)
    names = list(question.options) if isinstance(question, Choice) else [str(i) for i in range(len(question.levels))]
    rows_l, rows_f, y, groups = [], [], [], []
    for i, (pf, lab) in enumerate(zip(pfs, labels)):
        gold = names.index(lab if isinstance(question, Choice) else str(lab))
        rows_l.append(pf.logits)
        rows_f.append(pf.features)
        y += [int(j == gold) for j in range(len(names))]
        groups += [i] * len(names)
    return np.concatenate(rows_l), np.concatenate(rows_f), np.array(y), np.array(groups)


def collect(rubric: Rubric, judge: LocalJudge, states: Sequence[Any], *, batch_size: int = 64,
            progress: Progress | None = None) -> Pass:
    """The local model's answers and pair features for every state, as the rubric asks them
    (questions `asked_alone` see their view of the state); `progress(done, total)` as chunks finish."""
    from ..rubric.alone import AskedAlone, merge_answers

    questions = rubric.questions
    alone = AskedAlone(judge, rubric.spec.asked_alone)
    out: Pass = []
    bar = ProgressCounter(progress, 0, len(states))
    for start in range(0, len(states), batch_size):
        chunk = states[start:start + batch_size]
        parts = [judge.answers_and_features([alone._project(s, repl) for s in chunk], qs)
                 for repl, qs in alone._groups(questions)]
        for i in range(len(chunk)):
            feats = {qid: f for p in parts for qid, f in p[i][1].items()}
            out.append((merge_answers([p[i][0] for p in parts], questions), feats))
        bar.advance(len(chunk))
    return out


def fit_heads(questions: Mapping[str, Question], dataset: LabelledSet, model: str,
              features: dict[str, dict[str, PairFeatures]], fit_ids: set[str], fitter: HeadFitter | None = None,
              notes: list[str] | None = None) -> dict[str, Head]:
    """A head per labelled question, fitted on the `fit_ids` items' `features` (by item id)."""
    fitter = fitter or HeadFitter()
    heads = {}
    for qid, question in questions.items():
        items = [it for it in dataset.items if it.id in fit_ids and qid in it.labels and it.id in features]
        if not items:
            continue
        rows = head_rows(question, [features[it.id][qid] for it in items], [it.labels[qid] for it in items])
        try:
            fitter.fit(*rows)
        except InputError as exc:
            (notes if notes is not None else []).append(f"question {qid!r}: no head: {exc}")
            continue
        heads[qid] = fitter.to_head(model=model, fingerprint=question_fingerprint(question),
                                    kind=_kind(question), n=len(items))
    return heads


def _cross_fitted(questions: Mapping[str, Question], dataset: LabelledSet, model: str, features: dict[str, dict[str, PairFeatures]],
                  fit_ids: set[str], heads: dict[str, Head], seed: int, fitter: HeadFitter | None,
                  folds: int = DEFAULT_FOLDS) -> list[tuple[list[str], dict[str, Head]]]:
    """(the ids of one fold, heads fitted without them) for each of `folds` folds of `fit_ids`."""
    ordered = sorted(fit_ids)
    perm = np.random.default_rng(seed).permutation(len(ordered))
    out = []
    for k in range(folds):
        held = [ordered[j] for j in perm[k::folds]]
        if not held:
            continue
        rest = fit_ids - set(held)
        fold_heads = {}
        for qid, head in heads.items():
            base = fitter or HeadFitter()
            one = HeadFitter(Cs=[head.C], folds=base.folds, logit_scale=base.logit_scale)
            fitted = fit_heads({qid: questions[qid]}, dataset, model, features, rest, one)
            fold_heads[qid] = fitted.get(qid, head)
        out.append((held, fold_heads))
    return out


def _kind(question: Question) -> str:
    return "noul" if isinstance(question, Noul) else "choice" if isinstance(question, Choice) else "score"


@dataclass
class HeadsResult:
    """A calibration fitted over heads, the heads, and the zero-shot run it started from."""

    calibration: CalibrationResult
    heads: dict[str, Head]
    zero_shot: RunResult
    headed: RunResult


def calibrate_with_heads(rubric: Rubric, dataset: LabelledSet, judge: LocalJudge, options: FitOptions, *,
                         fitter: HeadFitter | None = None, progress: Progress | None = None,
                         collected: Pass | None = None, without: Collection[str] = ()) -> HeadsResult:
    """Fit heads, then calibration and cut-points over the headed answers (see the module doc).

    `collected` is `collect`'s pass over `dataset`'s states when the caller already has it.
    `without` names questions left to the bare model: those whose labels are a proxy a head would
    learn better than the judgement itself (the memory rubric's `worth` is labelled statement
    against request, and a head on that refuses "remind me to call mum on Sundays").
    """
    if not isinstance(judge, LocalJudge):
        raise InputError("heads are fitted on the local model's features: use --judge local (or --model-dir)")
    judge._need_features()
    if any(it.questions is not None for it in dataset.items):
        raise InputError(f"{dataset.path or 'the labelled set'}: lines carry their own questions; heads are fitted "
                         "per rubric question, so every line must ask the rubric's questions")
    notes_counts = check_counts({q: sum(1 for it in dataset.items if q in it.labels) for q in rubric.questions},
                                rubric.questions)
    del notes_counts  # fit_calibration repeats them as notes
    unknown = sorted(set(without) - set(rubric.questions))
    if unknown:
        raise InputError(f"no head to leave out for {', '.join(map(repr, unknown))}: the rubric's questions are "
                         f"{', '.join(rubric.questions)}")
    if collected is None:
        collected = collect(rubric, judge, [it.state for it in dataset.items], progress=progress)
    ids = [it.id for it in dataset.items]
    zero = RunResult(model=judge.model_id, answers={i: a for i, (a, _) in zip(ids, collected)})
    features = {i: f for i, (_, f) in zip(ids, collected)}
    by_id = dict(zip(ids, collected))
    fit_ids, _ = split_ids(ids, options.split, options.seed)
    notes: list[str] = []
    questions = rubric.questions
    headed_questions = {q: v for q, v in questions.items() if q not in without}
    heads = fit_heads(headed_questions, dataset, judge.model_id, features, fit_ids, fitter, notes)
    full = HeadedJudge(judge, heads)
    headed = RunResult(model=full.model_id, answers={
        i: full.apply(a, f, questions, full.applicable(questions)) for i, (a, f) in zip(ids, collected)})
    # The calibrator and cut-points are fitted on the fit split, where the heads were fitted too:
    # in-sample, a head looks surer than it is. So the fit split's answers used there come from
    # heads cross-fitted on the other folds (at the C chosen for the full head); the held-out
    # split, and everything stored, uses the full heads.
    crossed = RunResult(model=full.model_id, answers=dict(headed.answers))
    for fold_ids, fold_heads in _cross_fitted(headed_questions, dataset, judge.model_id, features, fit_ids, heads,
                                              options.seed, fitter):
        fold = HeadedJudge(judge, fold_heads)
        for i in fold_ids:
            a, f = by_id[i]
            crossed.answers[i] = fold.apply(a, f, questions, fold.applicable(questions)).model_copy(
                update={"model": full.model_id})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = fit_calibration(rubric, dataset, crossed, options)
    result.notes[:0] = notes
    block = result.block
    # what `seams check` compares the judge's answers with: the full heads' answers
    stored = {qid: encode_answers(question_data(dataset, headed, qid)) for qid in block.metrics.answers or {}}
    qblocks = dict(block.questions)
    for qid, qc in block.questions.items():
        rep = question_data(dataset, zero, qid).take(result.report_ids)
        before = rep.metrics(None, threshold=noul_threshold(rubric.policy.rules, qid), n_boot=options.n_boot,
                             seed=options.seed)
        result.questions[qid] = replace(result.questions[qid], before=before)
        held = qc.metrics.heldout
        measured = qc.metrics if held is None else qc.metrics.model_copy(
            update={"heldout": held.model_copy(update={"before": QuestionMetrics.of(before)})})
        qblocks[qid] = qc.model_copy(update={"head": heads.get(qid), "metrics": measured})
    result.block = block.model_copy(update={"questions": qblocks,
                                            "metrics": block.metrics.model_copy(update={"answers": stored})})
    return HeadsResult(result, heads, zero, headed)


__all__ = ["DEFAULT_CS", "LOGIT_SCALE", "HeadFitter", "HeadsResult", "calibrate_with_heads", "collect", "fit_heads",
           "head_rows"]
