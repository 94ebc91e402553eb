"""Fitting the three-zone cut-points of a rule: act at p ≥ high, refuse at p ≤ low, review between.

Two estimators with scikit-learn's contract (`fit(p, y)` learns ``high_``/``low_``, `predict(p)`
returns the zone: +1 act, 0 review, −1 refuse):

* `CostThresholds` — minimise the empirical expected cost of a wrong automatic act, a wrong
  automatic refusal and a human look. With calibrated probabilities the Bayes rule is closed
  form (act when (1−p)·c_act ≤ min(p·c_ref, c_rev), …); fitting on labels instead does not
  trust the calibration. Optionally the review band is capped at a share of items.
* `TargetErrorThresholds` — the widest automation whose error rate on automated decisions is at
  most a target α with probability at least 1 − δ over the labelled sample (Learn-then-Test with
  fixed-sequence testing; each step is an exact binomial, i.e. Clopper–Pearson, test).

Both are vectorised: a fit sorts the probabilities once and scans every cut-point with cumulative
sums, so 100k labels fit in well under a second.
"""

from __future__ import annotations

import warnings
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .metrics import Costs, cp_upper


class ThresholdWarning(UserWarning):
    """A threshold fit met a limit: the target cannot be reached, or capacity overrides it."""


def _check(p: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(p, float).ravel()
    y = np.asarray(y).ravel().astype(bool)
    if p.shape != y.shape:
        raise ValueError(f"p and y must have the same length, got {p.size} and {y.size}")
    if p.size == 0:
        raise ValueError("no labelled items to fit thresholds on")
    if not np.all(np.isfinite(p)) or p.min() < 0 or p.max() > 1:
        raise ValueError("probabilities must be finite and within [0, 1]")
    return p, y


def zones(p: ArrayLike, high: float, low: float) -> np.ndarray:
    """+1 where p ≥ high (act), −1 where p ≤ low (refuse), 0 in the band (review); as the policy reads it."""
    p = np.asarray(p, float)
    return np.where(p >= high, 1, np.where(p <= low, -1, 0))


class _ZoneEstimator(BaseEstimator):
    def predict(self, p: ArrayLike) -> np.ndarray:
        check_is_fitted(self, ["high_", "low_"], msg=f"{type(self).__name__} is not fitted yet; call fit(p, y)")
        return zones(p, self.high_, self.low_)


def _sliding_min(g: np.ndarray, k: int) -> np.ndarray:
    """out[i] = min(g[max(0, i−k) .. i]) in O(n) (van Herk / Gil-Werman blocks)."""
    n = g.size
    if k >= n:
        return np.minimum.accumulate(g)
    w = k + 1
    h = np.concatenate([np.full(k, np.inf), g])
    pad = (-h.size) % w
    h = np.concatenate([h, np.full(pad, np.inf)]).reshape(-1, w)
    prefix = np.minimum.accumulate(h, axis=1).ravel()
    suffix = np.minimum.accumulate(h[:, ::-1], axis=1)[:, ::-1].ravel()
    i = np.arange(n)
    return np.minimum(suffix[i], prefix[i + k])


class CostThresholds(_ZoneEstimator):
    """Cut-points minimising the expected cost per item on labelled data.

    The cost of a cut is c_act·#(acted, label false) + c_ref·#(refused, label true) +
    c_rev·#(reviewed). It separates into a term of `high` and a term of `low`, so every pair of
    cut-points with low ≤ high (and a band no wider than `capacity`·n items) is scanned exactly
    in linear time after one sort. Cut-points sit halfway between neighbouring distinct
    probabilities, so ties never straddle a zone boundary.

    Parameters
    ----------
    costs:
        A wrong automatic act, a wrong automatic refusal, a human look (None: `Costs()`, 1, 1 and
        0.1). Only ratios matter; with `capacity=0` the review cost plays no part (one cut). When a
        look costs at least c_act·c_ref/(c_act + c_ref) the band vanishes: one cut, no review.
    capacity:
        The largest share of items the band may send to review (None: no cap).
    signal_level:
        Cut-points are fitted only where the scores separate the labels: when a one-sided
        Mann–Whitney test of "true items score higher" has p above this level, the fit is the
        cheapest constant decision (act on all, refuse all, or review all if `capacity` allows)
        and a `ThresholdWarning` says so. Cut-points scanned over scores with no signal find the
        sample's noise: on 131 items a memory rule at chance fitted cuts with a 0.39 error on its
        fit half that rose to 0.58 on the held-out half. None skips the test.
    """

    def __init__(self, costs: Costs | None = None, capacity: float | None = None,
                 signal_level: float | None = 0.05) -> None:
        self.costs = costs
        self.capacity = capacity
        self.signal_level = signal_level

    def fit(self, p: ArrayLike, y: ArrayLike) -> CostThresholds:
        p, y = _check(p, y)
        c = self.costs if self.costs is not None else Costs()
        if self.capacity is not None and not 0 <= self.capacity <= 1:
            raise ValueError(f"capacity is a share of items within [0, 1], got {self.capacity}")
        n = p.size
        k = n if self.capacity is None else int(np.floor(self.capacity * n + 1e-9))
        self.signal_p_ = signal_p(p, y)
        if self.signal_level is not None and self.signal_p_ > self.signal_level:
            return self._constant(c, y, k)  # before the scan: its cut-points would fit noise
        order = np.argsort(p, kind="stable")
        ps, ys = p[order], y[order]
        neg_suffix = np.concatenate([np.cumsum((~ys)[::-1])[::-1], [0]])  # label false among ps[i:]
        pos_prefix = np.concatenate([[0], np.cumsum(ys)])  # label true among ps[:j]
        cut = np.arange(n + 1)
        f = c.act * neg_suffix - c.review * (n - cut)  # acting on ps[i:]
        g = c.refuse * pos_prefix - c.review * cut  # refusing ps[:j]
        allowed = np.ones(n + 1, bool)
        allowed[1:n] = ps[:-1] < ps[1:]  # ties never straddle a cut
        f = np.where(allowed, f, np.inf)
        g = np.where(allowed, g, np.inf)
        if ps[-1] >= 1.0:
            f[n] = np.inf  # p = 1 always acts (p ≥ high for every high ≤ 1)
        act_all = f[0] + g[0]  # high = 0 acts on everything, whatever low is
        if ps[0] <= 0.0:
            g[0] = np.inf  # otherwise p = 0 always refuses (p ≤ low for every low ≥ 0)
        total = f + _sliding_min(g, k)
        i = int(np.argmin(total))
        if act_all <= total[i]:
            i, j, best = 0, 0, act_all
        else:
            lo_j = max(0, i - k)
            window = g[lo_j : i + 1]
            j, best = lo_j + int(np.flatnonzero(window == window.min())[-1]), total[i]
        self.high_ = _cut(ps, i, 0.0, 1.0)
        self.low_ = min(_cut(ps, j, 0.0, 1.0), self.high_)
        self.cost_ = float((best + c.review * n) / n)
        self.n_ = n
        return self

    def _constant(self, c: Costs, y: np.ndarray, k: int) -> CostThresholds:
        """The cheapest decision that ignores the score, for scores that carry no signal."""
        n = y.size
        options = {"act on every item": (c.act * float((~y).sum()), 0.0, 0.0),
                   # (high, low) = (1, 1): only a score of exactly 1.0 would still act
                   "refuse every item": (c.refuse * float(y.sum()), 1.0, 1.0)}
        if k >= n:
            options["review every item"] = (c.review * n, 1.0, 0.0)
        name = min(options, key=lambda o: options[o][0])
        cost, self.high_, self.low_ = options[name]
        self.cost_ = cost / n
        self.n_ = n
        warnings.warn(ThresholdWarning(
            f"the scores do not separate the labels on {n} items (one-sided Mann–Whitney p = "
            f"{self.signal_p_:.3f} > {self.signal_level}): fitted the cheapest constant decision, "
            f"{name}, not cut-points that would automate on noise"), stacklevel=3)
        return self


def signal_p(p: ArrayLike, y: ArrayLike) -> float:
    """One-sided Mann–Whitney p-value that items labelled true score higher than false ones.

    1.0 when a class is empty: nothing shows that the score separates anything.
    """
    p, y = np.asarray(p, float), np.asarray(y, bool)
    if y.all() or not y.any():
        return 1.0
    return float(stats.mannwhitneyu(p[y], p[~y], alternative="greater").pvalue)


def _cut(ps: np.ndarray, i: int, first: float, last: float) -> float:
    if i <= 0:
        return first
    if i >= ps.size:
        return last
    return float((ps[i - 1] + ps[i]) / 2)


def bayes_thresholds(costs: Costs) -> tuple[float, float]:
    """The cost-optimal (high, low) for perfectly calibrated probabilities, in closed form.

    Acting costs (1−p)·c_act in expectation, refusing p·c_ref, a look c_rev; act where acting is
    cheapest (p ≥ 1 − c_rev/c_act), refuse where refusing is (p ≤ c_rev/c_ref). When those cross
    there is no band and one cut p* = c_act/(c_act + c_ref) separates act from refuse.
    """
    high = 1 - costs.review / costs.act if costs.act > 0 else 0.0
    low = costs.review / costs.refuse if costs.refuse > 0 else 1.0
    if low >= high:
        star = costs.act / (costs.act + costs.refuse)
        return star, star
    return max(0.0, high), min(1.0, low)


class TargetErrorThresholds(_ZoneEstimator):
    """The most automation whose error rate on automated decisions is ≤ `target` with
    probability ≥ 1 − `delta`.

    Candidate cut-points are the fixed grid λ ∈ (0, ½]: act when p ≥ 1 − λ, refuse when p ≤ λ,
    i.e. automate the items whose probability of being wrong, min(p, 1 − p), is at most λ (the
    order that maximises automation for a given error when p is calibrated). Going up the grid
    from the most cautious λ, each hypothesis "error rate at λ > target" is tested with the exact
    binomial test on the k errors among the m automated items (p-value P(Bin(m, target) ≤ k), the
    Clopper–Pearson bound's dual), and a sequence stops at its first failure. Fixed-sequence
    testing controls the family-wise error rate, so every λ passed — in particular the largest,
    which is kept — meets the target with probability ≥ 1 − δ (Learn-then-Test, Angelopoulos et
    al. 2021; selective risk as in Geifman & El-Yaniv 2017).

    A sequence that starts where few items are automated stops early by bad luck (k errors among
    m = 30 items is a coarse test), so two sequences run, each at δ/2 (Bonferroni): one from the
    first λ where a test could pass at all, one from the largest λ that the probabilities
    themselves predict will pass. Both starting points are computed from the probabilities
    alone, never from the labels, so the order is fixed given the judge's answers and the
    guarantee holds whether or not the judge is calibrated (only automation suffers if not).

    Parameters
    ----------
    target:
        α, the highest acceptable error rate among automated decisions.
    delta:
        δ, the chance the guarantee may fail over the draw of labelled data (0.05: 95 % confidence).
    capacity:
        The largest share of items the band may send to review. When the guarantee needs a wider
        band, capacity wins: the fit automates more, warns, and sets ``guaranteed_ = False``.
    grid:
        Number of λ steps on (0, ½]. Fixed before seeing data, as the test requires.
    power:
        Where the second sequence starts: the largest λ at which, if the probabilities were
        calibrated, the test would pass with at least this probability.
    over:
        What the error rate is a share of. "automated" (the default): of the decisions made
        automatically, what a rule acting alone must meet. "all": of every decision, a reviewed
        one counting as right, what a cascade whose review is a trusted judge (the teacher of
        `seams distill`) makes; its errors only grow with λ, so one sequence from λ = 0 at the
        full δ tests it, and it automates far more for the same α.
    """

    def __init__(self, target: float = 0.05, delta: float = 0.05, capacity: float | None = None, grid: int = 200,
                 power: float = 0.8, over: Literal["automated", "all"] = "automated") -> None:
        self.target = target
        self.delta = delta
        self.capacity = capacity
        self.grid = grid
        self.power = power
        self.over = over

    def fit(self, p: ArrayLike, y: ArrayLike) -> TargetErrorThresholds:
        p, y = _check(p, y)
        if not 0 < self.target < 1 or not 0 < self.delta < 1:
            raise ValueError(f"target and delta must be within (0, 1), got {self.target} and {self.delta}")
        n = p.size
        risk = np.minimum(p, 1 - p)  # chance the automated decision is wrong, if p is calibrated
        wrong = np.where(p >= 0.5, ~y, y)
        order = np.argsort(risk, kind="stable")
        rs = risk[order]
        ws = np.concatenate([[0], np.cumsum(wrong[order])])
        lam = np.arange(1, self.grid + 1) / (2 * self.grid)
        m = np.searchsorted(rs, lam, side="right")
        k = ws[m]
        if self.over == "all":
            pval = stats.binom.cdf(k, n, self.target)
            chosen = _fixed_sequence(pval, self.delta, 0)
        else:
            d = self.delta / 2  # two sequences, Bonferroni
            pval = np.where(m > 0, stats.binom.cdf(k, m, self.target), 1.0)
            starts = [_first_testable(m, self.target, d), _predicted_start(rs, m, self.target, d, self.power)]
            chosen = max(_fixed_sequence(pval, d, s) for s in starts)
        n_pass = chosen + 1
        self.guaranteed_ = True
        if n_pass == 0:  # nothing can be automated under the guarantee: everything to review
            warnings.warn(f"no cut-point meets error ≤ {self.target} at confidence {1 - self.delta:.0%} "
                          f"with {n} labels: every item goes to review", ThresholdWarning, stacklevel=2)
        if self.capacity is not None:
            band = 1 - m / n
            if (chosen < 0 and 1.0 > self.capacity) or (chosen >= 0 and band[chosen] > self.capacity + 1e-12):
                ok = np.flatnonzero(band <= self.capacity + 1e-12)
                chosen = int(ok[0]) if ok.size else lam.size - 1
                self.guaranteed_ = False
                warnings.warn(f"review capacity {self.capacity:.0%} forces more automation than the error "
                              f"target allows: the guarantee does not hold", ThresholdWarning, stacklevel=2)
        if chosen < 0:
            self.lambda_, self.high_, self.low_ = 0.0, 1.0, 0.0
            self.automated_, self.errors_ = 0, 0
        else:
            self.lambda_ = float(lam[chosen])
            self.high_, self.low_ = 1 - self.lambda_, self.lambda_
            self.automated_, self.errors_ = int(m[chosen]), int(k[chosen])
        self.upper_bound_ = float(cp_upper(self.errors_, n if self.over == "all" else self.automated_, self.delta))
        self.n_ = n
        return self


def _fixed_sequence(pval: np.ndarray, level: float, start: int) -> int:
    """Index of the last hypothesis rejected going up from `start` (−1 if none)."""
    if start >= pval.size:
        return -1
    passed = pval[start:] <= level
    n = int(np.argmin(passed)) if not passed.all() else passed.size
    return start + n - 1 if n else -1


def _first_testable(m: np.ndarray, target: float, level: float) -> int:
    """The first grid step where zero errors could pass: (1 − α)^m ≤ level."""
    m_min = int(np.ceil(np.log(level) / np.log1p(-target)))
    ok = np.flatnonzero(m >= m_min)
    return int(ok[0]) if ok.size else m.size


def _predicted_start(rs: np.ndarray, m: np.ndarray, target: float, level: float, power: float) -> int:
    """The largest grid step whose test passes with probability ≥ `power` if the sorted risks `rs`
    (min(p, 1 − p), ascending) were the true error probabilities (normal approximation)."""
    e = np.concatenate([[0.0], np.cumsum(rs)])[m]
    v = np.concatenate([[0.0], np.cumsum(rs * (1 - rs))])[m]
    kcrit = stats.binom.ppf(level, m, target)
    kcrit = np.where(stats.binom.cdf(kcrit, m, target) <= level, kcrit, kcrit - 1)
    chance = stats.norm.cdf((kcrit + 0.5 - e) / np.sqrt(np.maximum(v, 1e-12)))
    ok = np.flatnonzero((chance >= power) & (kcrit >= 0) & (m > 0))
    return int(ok[-1]) if ok.size else m.size


__all__ = ["CostThresholds", "TargetErrorThresholds", "ThresholdWarning", "bayes_thresholds", "signal_p", "zones"]
