"""Calibration fitting: time on 100k labels, and agreement with scikit-learn's threshold tuner.

    python bench/calibration_fit.py [--n 100000] [--repeat 5]

1. Fit time of the three-zone threshold fitters (cost, cost with a review cap, target error with
   its guarantee) and of the recalibrators on `n` labels, best of `repeat`, with scikit-learn's
   `TunedThresholdClassifierCV` (100-point grid, cv="prefit") on the same data as the in-process
   baseline. The issue's bar: fitting thresholds on 100k labels takes ≤ 2 s.
2. Same objective, single threshold: a cost matrix (wrong act = false positive, wrong refusal =
   false negative, no review) on the same data. `CostThresholds` scans every cut exactly;
   `TunedThresholdClassifierCV` picks the best of its 100-point grid. They should agree to
   within one grid step, and our exact cut should cost no more than the grid's.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.metrics import confusion_matrix, make_scorer
from sklearn.model_selection import TunedThresholdClassifierCV

from seams.calibration.calibrators import IsotonicCalibrator, PlattCalibrator
from seams.calibration.metrics import Costs
from seams.calibration.thresholds import CostThresholds, TargetErrorThresholds
from seams.judges.local.runtime import machine


class Scores(ClassifierMixin, BaseEstimator):
    """A 'classifier' whose probability is its single input column: the judge's p."""

    def fit(self, X, y):
        self.classes_ = np.array([False, True])
        return self

    def predict_proba(self, X):
        p = np.asarray(X, float)[:, 0]
        return np.column_stack([1 - p, p])

    def predict(self, X):
        return np.asarray(X, float)[:, 0] >= 0.5


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A judge that is informative but miscalibrated: p = σ(2·logit(q) + 0.3), label ~ Bernoulli(q)."""
    rng = np.random.default_rng(seed)
    q = rng.beta(0.8, 0.8, size=n)
    y = rng.uniform(size=n) < q
    z = 2 * np.log(np.clip(q, 1e-9, 1) / np.clip(1 - q, 1e-9, 1)) + 0.3
    return 1 / (1 + np.exp(-z)), y


def cost_of(p: np.ndarray, y: np.ndarray, t: float, c_fp: float, c_fn: float) -> float:
    act = p >= t
    return float((c_fp * np.sum(act & ~y) + c_fn * np.sum(~act & y)) / p.size)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(machine().line(), flush=True)  # every figure names its machine
    p, y = data(args.n)
    print(f"{args.n:,} labels, positives {y.mean():.1%}; best of {args.repeat} runs\n")

    c_fp, c_fn = 5.0, 1.0
    single = {"costs": Costs(act=c_fp, refuse=c_fn, review=0.0), "capacity": 0.0}  # no band: one cut

    def neg_cost(y_true, y_pred):
        _, fp, fn, _ = confusion_matrix(y_true, y_pred, labels=[False, True]).ravel()
        return -(c_fp * fp + c_fn * fn) / len(y_true)

    scorer = make_scorer(neg_cost, response_method="predict")
    X = p[:, None]
    frozen = Scores().fit(X, y)

    def sklearn_tuned():
        return TunedThresholdClassifierCV(frozen, scoring=scorer, cv="prefit", refit=False, thresholds=100).fit(X, y)

    rows = [
        ("CostThresholds (act=5, refuse=1, review=0.5)", lambda: CostThresholds(Costs(5, 1, 0.5)).fit(p, y)),
        ("CostThresholds + capacity 10 %", lambda: CostThresholds(Costs(5, 1, 0.5), capacity=0.1).fit(p, y)),
        ("TargetErrorThresholds (α=0.05, δ=0.05)", lambda: TargetErrorThresholds(0.05, 0.05).fit(p, y)),
        ("CostThresholds, single cut (no review)", lambda: CostThresholds(**single).fit(p, y)),
        ("PlattCalibrator", lambda: PlattCalibrator().fit(p, y)),
        ("IsotonicCalibrator", lambda: IsotonicCalibrator().fit(p, y)),
    ]
    base = best_of(sklearn_tuned, args.repeat)
    print(f"{'fit':48} {'seconds':>9} {'vs sklearn tuner':>17}")
    print(f"{'TunedThresholdClassifierCV (baseline, 100-pt grid)':48} {base:9.4f} {1.0:16.2f}x")
    for name, fn in rows:
        t = best_of(fn, args.repeat)
        print(f"{name:48} {t:9.4f} {t / base:16.2f}x")

    ours = CostThresholds(**single).fit(p, y)
    tuned = sklearn_tuned()
    grid = np.linspace(p.min(), p.max(), 100)
    step = float(grid[1] - grid[0])
    t_ours, t_sk = ours.high_, float(tuned.best_threshold_)
    print("\nsame objective, single threshold (cost = 5·wrong act + 1·wrong refusal per item)")
    print(f"  ours (exact scan)          t = {t_ours:.5f}   cost/item = {cost_of(p, y, t_ours, c_fp, c_fn):.5f}")
    print(f"  TunedThresholdClassifierCV t = {t_sk:.5f}   cost/item = {cost_of(p, y, t_sk, c_fp, c_fn):.5f}")
    print(f"  |difference| = {abs(t_ours - t_sk):.5f}   grid step = {step:.5f}   "
          f"{'AGREE within one grid step' if abs(t_ours - t_sk) <= step else 'DISAGREE'}")
    print(f"  closed form for a calibrated judge: c_act/(c_act+c_ref) = {c_fp / (c_fp + c_fn):.5f} "
          f"(this judge is miscalibrated, so the fitted cut differs)")


if __name__ == "__main__":
    main()
