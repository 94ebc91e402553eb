"""Recalibration estimators, fitted with scikit-learn and scipy, applied without them.

Each follows scikit-learn's estimator contract: `fit` learns (fitted state ends in ``_``),
`predict` applies, and `to_block()` returns the dependency-free `Calibrator` that a rubric
stores and the policy applies at decision time (`seams.rubric.calibration`).

* `PlattCalibrator` — logistic regression on logit(p): p' = σ(a·logit(p) + b). Two parameters,
  so it needs little data and cannot overfit much; it fixes over/under-confidence and a bias.
* `IsotonicCalibrator` — the best monotone step function mapping p to the observed frequency
  (pool-adjacent-violators), interpolated linearly between breakpoints. Fixes any monotone
  distortion but needs more data (hundreds of labels per class).
* `TemperatureCalibrator` — one temperature T for a Choice or Score distribution,
  p_i ∝ p_i^(1/T), chosen to minimise the negative log-likelihood of the labels. T > 1 softens
  an overconfident judge, T < 1 sharpens an underconfident one; the ranking never changes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import minimize_scalar
from sklearn.base import BaseEstimator
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.utils.validation import check_is_fitted

from ..rubric.calibration import Calibrator

_CLIP = 1e-7


def _logit(p: np.ndarray) -> np.ndarray:
    q = np.clip(np.asarray(p, float), _CLIP, 1 - _CLIP)
    return np.log(q / (1 - q))


def _check_binary(p: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(p, float).ravel()
    y = np.asarray(y).ravel().astype(int)
    if p.shape != y.shape:
        raise ValueError(f"p and y must have the same length, got {p.size} and {y.size}")
    if p.size and (np.nanmin(p) < 0 or np.nanmax(p) > 1 or not np.all(np.isfinite(p))):
        raise ValueError("probabilities must be finite and within [0, 1]")
    if len(np.unique(y)) < 2:
        raise ValueError("recalibrating a yes/no question needs labels of both classes")
    return p, y


class PlattCalibrator(BaseEstimator):
    """Platt scaling on the logit of the judge's probability.

    The slope is kept non-negative: a judge whose answers run against the labels on the fit
    split is more likely noise than a judge to be read backwards, so a negative fit falls back
    to the base rate (slope 0), like isotonic regression, which is increasing by construction.

    Parameters
    ----------
    C:
        Inverse L2 strength of scikit-learn's `LogisticRegression`. Large by default (1e4):
        with two parameters the fit needs almost no regularisation, only protection against
        separable data, where the unregularised slope would run to infinity.
    """

    def __init__(self, C: float = 1e4) -> None:
        self.C = C

    def fit(self, p: ArrayLike, y: ArrayLike) -> PlattCalibrator:
        p, y = _check_binary(p, y)
        lr = LogisticRegression(C=self.C, solver="lbfgs", max_iter=1000)
        lr.fit(_logit(p)[:, None], y)
        self.a_ = float(lr.coef_[0, 0])
        self.b_ = float(lr.intercept_[0])
        if self.a_ < 0:  # never invert the judge: without signal, fall back to the base rate
            rate = float(np.clip(y.mean(), _CLIP, 1 - _CLIP))
            self.a_, self.b_ = 0.0, float(np.log(rate / (1 - rate)))
        return self

    def predict(self, p: ArrayLike) -> np.ndarray:
        check_is_fitted(self, ["a_", "b_"], msg="PlattCalibrator is not fitted yet; call fit(p, y)")
        z = self.a_ * _logit(np.asarray(p, float)) + self.b_
        return 1 / (1 + np.exp(-z))

    def to_block(self) -> Calibrator:
        check_is_fitted(self, ["a_", "b_"], msg="PlattCalibrator is not fitted yet; call fit(p, y)")
        return Calibrator(method="platt", a=round(self.a_, 6), b=round(self.b_, 6))


class IsotonicCalibrator(BaseEstimator):
    """Isotonic regression of the label on the judge's probability (monotone, non-parametric).

    Parameters
    ----------
    max_points:
        The stored breakpoints are thinned to at most this many (keeping the first and last), so
        a rubric file stays readable; interpolation between them changes predictions by little.
    """

    def __init__(self, max_points: int = 64) -> None:
        self.max_points = max_points

    def fit(self, p: ArrayLike, y: ArrayLike) -> IsotonicCalibrator:
        p, y = _check_binary(p, y)
        iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip", increasing=True)
        iso.fit(p, y)
        x, v = np.asarray(iso.X_thresholds_, float), np.asarray(iso.y_thresholds_, float)
        if x.size > self.max_points:
            keep = np.unique(np.linspace(0, x.size - 1, self.max_points).round().astype(int))
            x, v = x[keep], v[keep]
        self.x_, self.y_ = x, v
        return self

    def predict(self, p: ArrayLike) -> np.ndarray:
        check_is_fitted(self, ["x_", "y_"], msg="IsotonicCalibrator is not fitted yet; call fit(p, y)")
        return np.interp(np.asarray(p, float), self.x_, self.y_)

    def to_block(self) -> Calibrator:
        check_is_fitted(self, ["x_", "y_"], msg="IsotonicCalibrator is not fitted yet; call fit(p, y)")
        return Calibrator(method="isotonic", x=[round(float(v), 9) for v in self.x_],
                          y=[round(float(v), 9) for v in self.y_])


def _ragged(dists: Sequence[Sequence[float]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flattened log-probabilities, the start offset of each item and its length."""
    lens = np.array([len(d) for d in dists])
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    flat = np.log(np.clip(np.concatenate([np.asarray(d, float) for d in dists]), 1e-12, None))
    return flat, starts, lens


class TemperatureCalibrator(BaseEstimator):
    """One temperature for a Choice's or Score's distributions, by maximum likelihood.

    `fit(dists, labels)` takes each item's distribution (lengths may differ: tool selection
    with per-item options) and the index of its true option; T is searched on log T ∈
    [log `t_min`, log `t_max`] with scipy's bounded scalar minimiser.
    """

    def __init__(self, t_min: float = 0.05, t_max: float = 20.0) -> None:
        self.t_min = t_min
        self.t_max = t_max

    def _nll(self, flat: np.ndarray, starts: np.ndarray, idx: np.ndarray, t: float) -> float:
        z = flat / t
        top = np.maximum.reduceat(z, starts)
        lse = np.log(np.add.reduceat(np.exp(z - np.repeat(top, np.diff(np.append(starts, z.size)))), starts)) + top
        return float(np.mean(lse - z[idx]))

    def fit(self, dists: Sequence[Sequence[float]], labels: ArrayLike) -> TemperatureCalibrator:
        labels = np.asarray(labels, int)
        if len(dists) != labels.size or not len(dists):
            raise ValueError("temperature scaling needs one label per distribution, and at least one")
        flat, starts, lens = _ragged(dists)
        if np.any(labels < 0) or np.any(labels >= lens):
            raise ValueError("a label index is outside its distribution")
        idx = starts + labels
        res = minimize_scalar(lambda lt: self._nll(flat, starts, idx, float(np.exp(lt))),
                              bounds=(np.log(self.t_min), np.log(self.t_max)), method="bounded",
                              options={"xatol": 1e-4})
        self.temperature_ = float(np.exp(res.x))
        return self

    def predict(self, dists: Sequence[Sequence[float]]) -> list[np.ndarray]:
        check_is_fitted(self, "temperature_", msg="TemperatureCalibrator is not fitted yet; call fit(dists, labels)")
        out = []
        for d in dists:
            z = np.log(np.clip(np.asarray(d, float), 1e-12, None)) / self.temperature_
            e = np.exp(z - z.max())
            out.append(e / e.sum())
        return out

    def to_block(self) -> Calibrator:
        check_is_fitted(self, "temperature_", msg="TemperatureCalibrator is not fitted yet; call fit(dists, labels)")
        return Calibrator(method="temperature", temperature=round(self.temperature_, 6))


def _cv_log_loss(est: BaseEstimator, p: np.ndarray, y: np.ndarray, folds: int, seed: int) -> float:
    skf = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    losses = []
    for tr, te in skf.split(p, y):
        q = np.clip(est.__class__(**est.get_params()).fit(p[tr], y[tr]).predict(p[te]), 1e-6, 1 - 1e-6)
        losses.append(-np.mean(y[te] * np.log(q) + (1 - y[te]) * np.log1p(-q)))
    return float(np.mean(losses))


#: The calibrator methods a fit can be asked for (`FitOptions.calibrator`, `seams calibrate --calibrator`).
CALIBRATOR_METHODS = ("auto", "platt", "isotonic", "none")


def fit_noul_calibrator(p: ArrayLike, y: ArrayLike, method: str = "auto", *, seed: int = 0
                        ) -> PlattCalibrator | IsotonicCalibrator | None:
    """Fit the calibrator named by `method` (`platt`, `isotonic`, `none`), or for `auto` the one of
    Platt and isotonic with the lower 5-fold cross-validated log loss (isotonic only from 200
    labels on: below that its steps follow the noise)."""
    if method == "none":
        return None
    if method == "platt":
        return PlattCalibrator().fit(p, y)
    if method == "isotonic":
        return IsotonicCalibrator().fit(p, y)
    if method != "auto":
        raise ValueError(f"calibrator method must be auto, platt, isotonic or none; got {method!r}")
    pa, ya = _check_binary(p, y)
    minority = int(min(ya.sum(), ya.size - ya.sum()))
    if ya.size < 200 or minority < 5:
        return PlattCalibrator().fit(pa, ya)
    folds = min(5, minority)
    platt = _cv_log_loss(PlattCalibrator(), pa, ya, folds, seed)
    iso = _cv_log_loss(IsotonicCalibrator(), pa, ya, folds, seed)
    return (IsotonicCalibrator() if iso < platt else PlattCalibrator()).fit(pa, ya)


__all__ = ["CALIBRATOR_METHODS", "IsotonicCalibrator", "PlattCalibrator", "TemperatureCalibrator", "fit_noul_calibrator"]
