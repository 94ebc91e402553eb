"""Metrics agree with scikit-learn's and with closed forms; intervals cover what they should."""

import numpy as np
import pytest
from sklearn import metrics as skm

from seams.calibration.metrics import (
    Costs,
    auroc,
    brier,
    choice_metrics,
    clopper_pearson,
    cohen_kappa,
    cp_upper,
    ece,
    ece_adaptive,
    log_loss,
    mcnemar,
    noul_metrics,
    score_metrics,
    zone_metrics,
)


@pytest.fixture
def binary():
    rng = np.random.default_rng(3)
    p = rng.uniform(size=800)
    y = rng.uniform(size=800) < p
    return p, y


def test_binary_metrics_match_sklearn(binary):
    p, y = binary
    assert brier(p, y) == pytest.approx(skm.brier_score_loss(y, p))
    assert log_loss(p, y) == pytest.approx(skm.log_loss(y, p))
    assert auroc(p, y) == pytest.approx(skm.roc_auc_score(y, p))
    pred = p >= 0.5
    assert cohen_kappa(pred, y, 2) == pytest.approx(skm.cohen_kappa_score(pred, y))
    m = noul_metrics(p, y, n_boot=0)
    assert m["accuracy"] == pytest.approx(skm.accuracy_score(y, pred), abs=1e-6)
    assert m["f1"] == pytest.approx(skm.f1_score(y, pred), abs=1e-6)
    assert m["precision"] == pytest.approx(skm.precision_score(y, pred), abs=1e-6)
    at = noul_metrics(p, y, threshold=0.8, n_boot=0)  # a rule's cut moves precision/recall, not accuracy
    assert at["recall"] == pytest.approx(skm.recall_score(y, p >= 0.8), abs=1e-6)
    assert at["accuracy"] == m["accuracy"]


def test_auroc_ties_and_a_missing_class():
    assert auroc(np.array([0.5, 0.5, 0.5, 0.5]), np.array([1, 0, 1, 0])) == pytest.approx(0.5)
    assert np.isnan(auroc(np.array([0.2, 0.9]), np.array([1, 1])))


def test_weighted_kappa_matches_sklearn():
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 5, 300), rng.integers(0, 5, 300)
    b[:150] = a[:150]
    assert cohen_kappa(a, b, 5, "quadratic") == pytest.approx(skm.cohen_kappa_score(a, b, weights="quadratic"))
    assert cohen_kappa(a, b, 5) == pytest.approx(skm.cohen_kappa_score(a, b))


def test_ece_by_hand():
    conf = np.array([0.05, 0.15, 0.15, 0.95])
    hit = np.array([0, 1, 0, 1])
    # bins (15 wide): 0.05 alone (gap .05), both 0.15 together (gap |.5 − .15|), 0.95 alone (gap .05)
    assert ece(conf, hit) == pytest.approx((0.05 + 2 * 0.35 + 0.05) / 4)
    # two equal-mass bins; the tied 0.15s stay together: {0.05, 0.15, 0.15} and {0.95}
    assert ece_adaptive(conf, hit, n_bins=2) == pytest.approx((abs(1 - 0.35) + 0.05) / 4)
    assert ece_adaptive(np.full(6, 0.3), np.array([1, 1, 1, 0, 0, 0])) == pytest.approx(0.2)  # ties share a bin
    # batched: one row per resample gives the same as one call per row
    rows = np.stack([conf, conf[::-1]])
    hits = np.stack([hit, hit[::-1]])
    assert np.allclose(ece(rows, hits), [ece(conf, hit), ece(conf[::-1], hit[::-1])])


def test_a_calibrated_judge_has_small_ece_and_intervals_cover_it(binary):
    p, y = binary
    m = noul_metrics(p, y, n_boot=200)
    assert m["ece"] < 0.06
    for key in ("accuracy", "brier", "auroc", "ece", "kappa"):
        lo, hi = m[f"{key}_ci"]
        assert lo <= m[key] <= hi, key


def test_clopper_pearson_exact_values():
    lo, hi = clopper_pearson(0, 10)
    assert lo == 0 and hi == pytest.approx(0.308497, abs=1e-5)
    lo, hi = clopper_pearson(5, 10)
    assert (lo, hi) == pytest.approx((0.187086, 0.812914), abs=1e-5)
    assert float(cp_upper(0, 10, 0.05)) == pytest.approx(1 - 0.05 ** (1 / 10))
    assert float(cp_upper(0, 0, 0.05)) == 1.0


def test_choice_and_score_metrics():
    dists = [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [0.6, 0.4]]
    names = [["a", "b", "c"], ["a", "b", "c"], ["a", "b", "c"], ["x", "a"]]  # options may vary per item
    m = choice_metrics(dists, names, ["a", "b", "a", "a"], n_boot=0)
    assert m["top1"] == pytest.approx(0.5) and m["n"] == 4 and m["classes"] == 4
    assert m["per_class"]["a"]["support"] == 3 and m["per_class"]["b"]["precision"] == 1.0
    assert m["log_loss"] == pytest.approx(-np.mean(np.log([0.7, 0.8, 0.3, 0.4])), abs=1e-6)
    s = score_metrics([[0.1, 0.2, 0.7], [0.8, 0.1, 0.1]], [2, 1], n_boot=0)
    assert s["mae"] == pytest.approx((abs(1.6 - 2) + abs(0.3 - 1)) / 2, abs=1e-6)
    assert s["accuracy"] == pytest.approx(0.5)


def test_zone_metrics_and_costs():
    p = np.array([0.95, 0.9, 0.5, 0.1, 0.05])
    y = np.array([True, False, True, True, False])
    z = zone_metrics(p, y, 0.8, 0.2, costs=Costs(act=10, refuse=2, review=1))
    assert (z["act"], z["refuse"], z["review"]) == (2, 2, 1)
    assert (z["wrong_act"], z["wrong_refuse"], z["errors"]) == (1, 1, 2)
    assert z["error_rate"] == pytest.approx(0.5) and z["automation_rate"] == pytest.approx(0.8)
    assert z["cost_per_item"] == pytest.approx((10 + 2 + 1) / 5)
    assert Costs.parse("act=10, review=0.5") == Costs(act=10, refuse=1, review=0.5)
    with pytest.raises(ValueError, match="costs are act"):
        Costs.parse("wrong=3")


def test_mcnemar():
    before = np.array([True] * 30 + [False] * 10)
    after = before.copy()
    assert mcnemar(before, after)["p_value"] == 1.0
    after[:12] = False  # twelve right answers went wrong, none the other way
    t = mcnemar(before, after)
    assert (t["b"], t["c"]) == (12, 0) and t["p_value"] == pytest.approx(2 * 0.5 ** 12)
