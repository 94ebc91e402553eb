"""Metrics of a judge against labels, each with a bootstrap confidence interval.

Every metric is a vectorised function over a trailing item axis, so one call scores the observed
data (shape ``(n,)``) or ``B`` bootstrap resamples at once (shape ``(B, n)``). Intervals are
percentile bootstrap intervals (resample items with replacement, recompute, take the 2.5 % and
97.5 % quantiles); proportions of automated decisions use exact Clopper–Pearson intervals.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from ..errors import OptionError

EPS = 1e-12
DEFAULT_BINS = 15
DEFAULT_BOOTSTRAP = 1000
CONFIDENCE = 0.95

Array = np.ndarray


# --------------------------------------------------------------------------- binary (Nouls)


def accuracy(pred: Array, y: Array) -> Array:
    """Share of items whose yes/no (or winner) matches the label."""
    return np.mean(pred == y, axis=-1)


def brier(p: Array, y: Array) -> Array:
    """Mean squared distance between the probability and the 0/1 label (0 is perfect)."""
    return np.mean((p - y) ** 2, axis=-1)


def log_loss(p: Array, y: Array) -> Array:
    """Mean negative log-likelihood of the labels (nats); punishes confident mistakes hard."""
    q = np.clip(p, EPS, 1 - EPS)
    return -np.mean(y * np.log(q) + (1 - y) * np.log1p(-q), axis=-1)


def _binned_gap(conf: Array, hit: Array, bins: Array) -> Array:
    """Σ_b (n_b / n)·|mean hit_b − mean conf_b| for bin ids `bins` (same shape as conf)."""
    conf, hit, bins = np.atleast_2d(conf), np.atleast_2d(hit), np.atleast_2d(bins)
    rows, n = conf.shape
    nb = int(bins.max()) + 1 if bins.size else 1
    flat = (np.arange(rows)[:, None] * nb + bins).ravel()
    size = rows * nb
    sc = np.bincount(flat, weights=conf.ravel().astype(float), minlength=size).reshape(rows, nb)
    sh = np.bincount(flat, weights=hit.ravel().astype(float), minlength=size).reshape(rows, nb)
    return np.abs(sh - sc).sum(axis=1) / n


def ece(conf: Array, hit: Array, n_bins: int = DEFAULT_BINS) -> Array:
    """Expected calibration error with equal-width bins.

    Items are grouped by their stated probability into `n_bins` bins of equal width; ECE is the
    item-weighted mean gap between the stated probability and the observed frequency per bin.
    """
    bins = np.minimum((np.asarray(conf) * n_bins).astype(int), n_bins - 1)
    out = _binned_gap(conf, hit, bins)
    return out if np.ndim(conf) > 1 else out[0]


def ece_adaptive(conf: Array, hit: Array, n_bins: int = DEFAULT_BINS) -> Array:
    """ECE with equal-mass bins (each holds ~n/n_bins items), which is less sensitive to the
    empty bins that equal-width ECE gets when probabilities crowd near 0 and 1. Tied
    probabilities always share a bin."""
    conf = np.asarray(conf)
    n = conf.shape[-1]
    ranks = stats.rankdata(conf, method="min", axis=-1).astype(int) - 1
    bins = np.minimum(ranks * n_bins // max(n, 1), n_bins - 1)
    out = _binned_gap(conf, hit, bins)
    return out if conf.ndim > 1 else out[0]


def auroc(p: Array, y: Array) -> Array:
    """Area under the ROC curve: the probability that a random positive scores above a random
    negative (ties count half), from the Mann–Whitney rank sum. NaN when a class is absent."""
    p = np.atleast_2d(p)
    y = np.atleast_2d(y).astype(bool)
    ranks = stats.rankdata(p, axis=-1)
    npos = y.sum(axis=-1)
    nneg = y.shape[-1] - npos
    with np.errstate(invalid="ignore", divide="ignore"):
        out = ((ranks * y).sum(axis=-1) - npos * (npos + 1) / 2) / (npos * nneg)
    out = np.where((npos == 0) | (nneg == 0), np.nan, out)
    return out if out.shape[0] > 1 else out[0]


def cohen_kappa(pred: Array, y: Array, n_classes: int, weights: str | None = None) -> Array:
    """Cohen's κ: agreement beyond chance, (p_o − p_e)/(1 − p_e), p_e from the two marginals.

    `weights="quadratic"` weighs disagreements by the squared distance between classes (for
    Score levels, where 1 level off is better than 3).
    """
    pred, y = np.atleast_2d(pred).astype(int), np.atleast_2d(y).astype(int)
    rows, n = pred.shape
    k = n_classes
    if weights is None:
        po = np.mean(pred == y, axis=-1)
        off = (np.arange(rows) * k)[:, None]
        mp = np.bincount((off + pred).ravel(), minlength=rows * k).reshape(rows, k) / n
        my = np.bincount((off + y).ravel(), minlength=rows * k).reshape(rows, k) / n
        pe = (mp * my).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.where(pe >= 1 - 1e-12, np.where(po >= 1 - 1e-12, 1.0, 0.0), (po - pe) / (1 - pe))
    else:
        off = (np.arange(rows) * k * k)[:, None]
        cm = np.bincount((off + pred * k + y).ravel(), minlength=rows * k * k).reshape(rows, k, k) / n
        i, j = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
        w = ((i - j) / max(k - 1, 1)) ** 2
        expected = cm.sum(axis=2)[:, :, None] * cm.sum(axis=1)[:, None, :]
        num = (w * cm).sum(axis=(1, 2))
        den = (w * expected).sum(axis=(1, 2))
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.where(den <= 1e-12, 1.0, 1 - num / den)
    return out if rows > 1 else out[0]


def _ratio(num: Array, den: Array) -> Array:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.maximum(den, 1), np.nan)


def prf(pred: Array, y: Array) -> tuple[float, float, float]:
    """Precision, recall and F1 of the positive class (NaN where undefined)."""
    pred, y = np.asarray(pred, bool), np.asarray(y, bool)
    tp = float(np.sum(pred & y))
    pp, ap = float(pred.sum()), float(y.sum())
    precision = tp / pp if pp else float("nan")
    recall = tp / ap if ap else float("nan")
    f1 = 2 * tp / (pp + ap) if pp + ap else float("nan")
    return precision, recall, f1


# --------------------------------------------------------------------------- intervals


def clopper_pearson(k: int | Array, n: int | Array, confidence: float = CONFIDENCE) -> tuple[Any, Any]:
    """Exact two-sided interval for a binomial proportion k/n (the beta-quantile form)."""
    k, n = np.asarray(k, float), np.asarray(n, float)
    a = (1 - confidence) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(k <= 0, 0.0, stats.beta.ppf(a, k, n - k + 1))
        hi = np.where(k >= n, 1.0, stats.beta.ppf(1 - a, k + 1, n - k))
    lo, hi = np.where(n > 0, lo, np.nan), np.where(n > 0, hi, np.nan)
    return (float(lo), float(hi)) if lo.ndim == 0 else (lo, hi)


def cp_upper(k: int | Array, n: int | Array, delta: float) -> Array:
    """One-sided Clopper–Pearson upper bound at confidence 1 − δ (1 when n = 0)."""
    k, n = np.asarray(k, float), np.asarray(n, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        hi = np.where(k >= n, 1.0, stats.beta.ppf(1 - delta, k + 1, np.maximum(n - k, 1e-300)))
    return np.where(n > 0, hi, 1.0)


def bootstrap(stat: Callable[[Array], Array], n: int, *, n_boot: int = DEFAULT_BOOTSTRAP, seed: int = 0,
              confidence: float = CONFIDENCE, point: float | None = None,
              bounds: tuple[float, float] = (-np.inf, np.inf)) -> tuple[float, float]:
    """Percentile interval of `stat(idx)` over `n_boot` resamples; `stat` takes a (B, n) index array.

    With `point` (the estimate on the data) the interval is shifted by the bootstrap's bias,
    point − mean(resampled): ECE in particular reads higher on every resample (duplicated items
    make bins noisier), and an uncorrected interval can miss the estimate it belongs to.
    """
    if n == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    chunk = max(1, min(n_boot, 4_000_000 // max(n, 1)))
    vals = []
    done = 0
    while done < n_boot:
        b = min(chunk, n_boot - done)
        idx = rng.integers(0, n, size=(b, n))
        vals.append(np.atleast_1d(stat(idx)))
        done += b
    v = np.concatenate(vals)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return (float("nan"), float("nan"))
    a = (1 - confidence) / 2
    shift = 0.0 if point is None else point - float(v.mean())
    lo = float(np.clip(np.quantile(v, a) + shift, *bounds))
    hi = float(np.clip(np.quantile(v, 1 - a) + shift, *bounds))
    return lo, hi


def _with_ci(out: dict[str, Any], name: str, fn: Callable[[Array], Array], n: int, n_boot: int, seed: int) -> None:
    value = fn(np.arange(n)[None, :])
    value = float(np.atleast_1d(value)[0])
    out[name] = value if np.isfinite(value) else None
    if n_boot > 0 and np.isfinite(value):
        bounds = (-1.0, 1.0) if name.startswith("kappa") else (0.0, np.inf)
        lo, hi = bootstrap(fn, n, n_boot=n_boot, seed=seed, point=value, bounds=bounds)
        out[f"{name}_ci"] = [lo, hi]


def _clean(v: Any) -> Any:
    if isinstance(v, (np.floating, float)):
        f = float(v)
        return round(f, 6) if np.isfinite(f) else None
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, list):
        return [_clean(x) for x in v]
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    return v


# --------------------------------------------------------------------------- per question type


def noul_metrics(p: ArrayLike, y: ArrayLike, *, threshold: float = 0.5, n_bins: int = DEFAULT_BINS,
                 n_boot: int = DEFAULT_BOOTSTRAP, seed: int = 0) -> dict[str, Any]:
    """Metrics of yes/no probabilities `p` against labels `y`.

    Accuracy and κ read the most likely answer (yes when p ≥ 0.5), so they compare before and
    after recalibration; precision, recall and F1 read yes as p ≥ `threshold`, the cut in force
    (a rule's `high`).
    """
    p = np.asarray(p, float)
    yb = np.asarray(y, bool)
    yf = yb.astype(float)
    n = p.size
    pred = p >= 0.5
    out: dict[str, Any] = {"n": n, "positives": int(yb.sum()), "threshold": threshold}
    _with_ci(out, "accuracy", lambda i: accuracy(pred[i], yb[i]), n, n_boot, seed)
    cut = p >= threshold
    _with_ci(out, "precision", lambda i: _ratio((cut[i] & yb[i]).sum(-1), cut[i].sum(-1)), n, n_boot, seed)
    _with_ci(out, "recall", lambda i: _ratio((cut[i] & yb[i]).sum(-1), yb[i].sum(-1)), n, n_boot, seed)
    _with_ci(out, "f1", lambda i: _ratio(2 * (cut[i] & yb[i]).sum(-1), cut[i].sum(-1) + yb[i].sum(-1)), n, n_boot,
             seed)
    _with_ci(out, "brier", lambda i: brier(p[i], yf[i]), n, n_boot, seed)
    _with_ci(out, "log_loss", lambda i: log_loss(p[i], yf[i]), n, n_boot, seed)
    _with_ci(out, "ece", lambda i: ece(p[i], yf[i], n_bins), n, n_boot, seed)
    _with_ci(out, "ece_adaptive", lambda i: ece_adaptive(p[i], yf[i], n_bins), n, n_boot, seed)
    _with_ci(out, "auroc", lambda i: auroc(p[i], yb[i]), n, n_boot, seed)
    _with_ci(out, "kappa", lambda i: cohen_kappa(pred[i], yb[i], 2), n, n_boot, seed)
    return _clean(out)


def _dist_matrix(dists: Sequence[Sequence[float]]) -> Array:
    k = max(len(d) for d in dists)
    m = np.zeros((len(dists), k))
    for i, d in enumerate(dists):
        m[i, : len(d)] = d
    return m


def choice_metrics(dists: Sequence[Sequence[float]], names: Sequence[Sequence[str]], labels: Sequence[str], *,
                   n_bins: int = DEFAULT_BINS, n_boot: int = DEFAULT_BOOTSTRAP, seed: int = 0) -> dict[str, Any]:
    """Metrics of Choice answers: `dists[i]` over `names[i]` (options may vary by item), labels by name.

    ECE reads the winner's probability as a confidence that the winner is right.
    """
    P = _dist_matrix(dists)
    n = P.shape[0]
    lab = np.array([list(nm).index(lb) for nm, lb in zip(names, labels)])
    win = np.argmax(P, axis=1)
    correct = (win == lab).astype(float)
    conf = P[np.arange(n), win]
    p_label = P[np.arange(n), lab]
    onehot = np.zeros_like(P)
    onehot[np.arange(n), lab] = 1
    brier_i = ((P - onehot) ** 2).sum(axis=1)
    classes = sorted({c for nm in names for c in nm})
    cidx = {c: i for i, c in enumerate(classes)}
    pred_c = np.array([cidx[names[i][win[i]]] for i in range(n)])
    lab_c = np.array([cidx[lb] for lb in labels])
    out: dict[str, Any] = {"n": n, "classes": len(classes)}
    _with_ci(out, "top1", lambda i: correct[i].mean(axis=-1), n, n_boot, seed)
    out["accuracy"], out["accuracy_ci"] = out["top1"], out.get("top1_ci")
    _with_ci(out, "brier", lambda i: brier_i[i].mean(axis=-1), n, n_boot, seed)
    _with_ci(out, "log_loss", lambda i: -np.log(np.clip(p_label[i], EPS, 1)).mean(axis=-1), n, n_boot, seed)
    _with_ci(out, "ece", lambda i: ece(conf[i], correct[i], n_bins), n, n_boot, seed)
    _with_ci(out, "ece_adaptive", lambda i: ece_adaptive(conf[i], correct[i], n_bins), n, n_boot, seed)
    _with_ci(out, "kappa", lambda i: cohen_kappa(pred_c[i], lab_c[i], len(classes)), n, n_boot, seed)
    per: dict[str, Any] = {}
    for c, ci in cidx.items():
        pr, rc, f1 = prf(pred_c == ci, lab_c == ci)
        tp, pp, ap = int(np.sum((pred_c == ci) & (lab_c == ci))), int(np.sum(pred_c == ci)), int(np.sum(lab_c == ci))
        per[c] = {"support": ap, "precision": pr, "precision_ci": list(clopper_pearson(tp, pp)) if pp else None,
                  "recall": rc, "recall_ci": list(clopper_pearson(tp, ap)) if ap else None, "f1": f1}
    out["per_class"] = per
    f1s = [v["f1"] for v in per.values() if v["support"] and v["f1"] == v["f1"]]
    out["macro_f1"] = float(np.mean(f1s)) if f1s else None
    return _clean(out)


def score_metrics(dists: Sequence[Sequence[float]], labels: ArrayLike, *, n_bins: int = DEFAULT_BINS,
                  n_boot: int = DEFAULT_BOOTSTRAP, seed: int = 0) -> dict[str, Any]:
    """Metrics of Score answers (distributions over levels) against level labels.

    MAE is the mean distance between the expected level and the labelled one; κ is reported
    plain and quadratic-weighted (near misses count as partial agreement).
    """
    P = _dist_matrix(dists)
    n, k = P.shape
    lab = np.asarray(labels, int)
    expect = P @ np.arange(k)
    win = np.argmax(P, axis=1)
    correct = (win == lab).astype(float)
    conf = P[np.arange(n), win]
    onehot = np.zeros_like(P)
    onehot[np.arange(n), lab] = 1
    brier_i = ((P - onehot) ** 2).sum(axis=1)
    p_label = P[np.arange(n), lab]
    out: dict[str, Any] = {"n": n, "levels": k}
    _with_ci(out, "mae", lambda i: np.abs(expect[i] - lab[i]).mean(axis=-1), n, n_boot, seed)
    _with_ci(out, "accuracy", lambda i: correct[i].mean(axis=-1), n, n_boot, seed)
    _with_ci(out, "brier", lambda i: brier_i[i].mean(axis=-1), n, n_boot, seed)
    _with_ci(out, "log_loss", lambda i: -np.log(np.clip(p_label[i], EPS, 1)).mean(axis=-1), n, n_boot, seed)
    _with_ci(out, "ece", lambda i: ece(conf[i], correct[i], n_bins), n, n_boot, seed)
    _with_ci(out, "ece_adaptive", lambda i: ece_adaptive(conf[i], correct[i], n_bins), n, n_boot, seed)
    _with_ci(out, "kappa", lambda i: cohen_kappa(win[i], lab[i], k), n, n_boot, seed)
    _with_ci(out, "kappa_quadratic", lambda i: cohen_kappa(win[i], lab[i], k, "quadratic"), n, n_boot, seed)
    return _clean(out)


# --------------------------------------------------------------------------- automated decisions


@dataclass(frozen=True)
class Costs:
    """What each kind of decision costs: a wrong automatic act, a wrong automatic refusal, a human look."""

    act: float = 1.0
    refuse: float = 1.0
    review: float = 0.1

    def __post_init__(self) -> None:
        for name in ("act", "refuse", "review"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value) or value < 0:
                raise OptionError("Costs", name, f"must be a non-negative number, got {value!r}")

    @classmethod
    def parse(cls, text: str) -> Costs:
        """`"act=10,refuse=1,review=0.5"` (any subset; the others keep their defaults)."""
        kw: dict[str, float] = {}
        for part in filter(None, (s.strip() for s in text.split(","))):
            key, sep, val = part.partition("=")
            key = key.strip()
            if not sep or key not in ("act", "refuse", "review"):
                raise ValueError(f"costs are act=…,refuse=…,review=…; got {part!r}")
            try:
                kw[key] = float(val)
            except ValueError:
                raise ValueError(f"cost {key}={val!r} is not a number") from None
            if kw[key] < 0:
                raise ValueError(f"cost {key} must not be negative, got {kw[key]}")
        return cls(**kw)


def zone_metrics(p: ArrayLike, y: ArrayLike, high: float, low: float, *, costs: Costs | None = None,
                 confidence: float = CONFIDENCE) -> dict[str, Any]:
    """What a three-zone threshold does on labelled items: shares per zone, the error rate on the
    automated ones (act or refuse) with its exact interval, and the cost per item if costs are given."""
    p = np.asarray(p, float)
    y = np.asarray(y, bool)
    n = p.size
    act = p >= high
    ref = (~act) & (p <= low)
    band = ~(act | ref)
    wrong_act = int(np.sum(act & ~y))
    wrong_ref = int(np.sum(ref & y))
    m = int(act.sum() + ref.sum())
    k = wrong_act + wrong_ref
    out: dict[str, Any] = {
        "n": n, "high": high, "low": low,
        "act": int(act.sum()), "refuse": int(ref.sum()), "review": int(band.sum()),
        "automated": m, "errors": k, "wrong_act": wrong_act, "wrong_refuse": wrong_ref,
        "automation_rate": m / n if n else None,
        "automation_rate_ci": list(clopper_pearson(m, n, confidence)) if n else None,
        "review_rate": float(band.mean()) if n else None,
        "review_rate_ci": list(clopper_pearson(int(band.sum()), n, confidence)) if n else None,
        "error_rate": k / m if m else None,
        "error_rate_ci": list(clopper_pearson(k, m, confidence)) if m else None,
    }
    if costs is not None and n:
        per = (costs.act * (act & ~y) + costs.refuse * (ref & y) + costs.review * band).astype(float)
        out["cost_per_item"] = float(per.mean())
        sd = float(per.std(ddof=1)) if n > 1 else 0.0
        half = stats.norm.ppf(0.5 + confidence / 2) * sd / np.sqrt(n)
        out["cost_per_item_ci"] = [out["cost_per_item"] - half, out["cost_per_item"] + half]
    return _clean(out)


def mcnemar(before: ArrayLike, after: ArrayLike) -> dict[str, Any]:
    """Exact McNemar test for paired outcomes: b items went True→False, c went False→True;
    under "no systematic change" b ~ Binomial(b + c, 1/2). Returns b, c and the two-sided p-value."""
    a, z = np.asarray(before, bool), np.asarray(after, bool)
    b, c = int(np.sum(a & ~z)), int(np.sum(~a & z))
    pval = float(stats.binomtest(b, b + c, 0.5).pvalue) if b + c else 1.0
    return {"b": b, "c": c, "flips": b + c, "p_value": pval}


__all__ = ["Costs", "accuracy", "auroc", "bootstrap", "brier", "choice_metrics", "clopper_pearson", "cohen_kappa",
           "cp_upper", "ece", "ece_adaptive", "log_loss", "mcnemar", "noul_metrics", "prf", "score_metrics",
           "zone_metrics"]
