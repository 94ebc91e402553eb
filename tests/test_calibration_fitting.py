"""Calibrators and threshold fitters on synthetic judges whose true probabilities are known."""

import dataclasses
import warnings
from itertools import product

import numpy as np
import pytest
from calibration_synth import NOUL_RUBRIC, SynthJudge, distort, noul_items
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from scipy import stats

from seams.calibration.calibrators import (
    IsotonicCalibrator,
    PlattCalibrator,
    TemperatureCalibrator,
    fit_noul_calibrator,
)
from seams.calibration.dataset import loads_jsonl
from seams.calibration.fit import CalibrationDataWarning, FitOptions, fit_calibration
from seams.calibration.metrics import Costs, ece
from seams.calibration.run import run_set
from seams.calibration.thresholds import (
    CostThresholds,
    TargetErrorThresholds,
    ThresholdWarning,
    bayes_thresholds,
    signal_p,
)
from seams.errors import InputError
from seams.rubric import Rubric


def calibrated(n, seed=0, a=1.0, b=1.0):
    rng = np.random.default_rng(seed)
    p = rng.beta(a, b, size=n)
    return p, rng.uniform(size=n) < p


# --------------------------------------------------------------------------- calibrators


def test_platt_undoes_a_logit_distortion_and_the_block_applies_it_identically():
    p, y = calibrated(20000, seed=1)
    q = distort(p, 2.5, 0.5)  # overconfident and biased
    est = PlattCalibrator().fit(q, y)
    assert est.a_ == pytest.approx(1 / 2.5, abs=0.03) and est.b_ == pytest.approx(-0.5 / 2.5, abs=0.05)
    assert ece(est.predict(q), y) < ece(q, y) / 3
    block = est.to_block()
    grid = np.linspace(0, 1, 101)
    assert np.allclose([block.apply_p(v) for v in grid], est.predict(grid), atol=1e-5)


def test_isotonic_is_monotone_and_the_block_applies_it_identically():
    p, y = calibrated(5000, seed=2)
    q = np.where(p < 0.5, p ** 2, 0.5 + 0.2 * (p - 0.5))  # monotone, but no logistic map undoes it
    est = IsotonicCalibrator(max_points=40).fit(q, y)
    assert np.all(np.diff(est.y_) >= 0) and len(est.x_) <= 40
    grid = np.linspace(0, 1, 101)
    block = est.to_block()
    assert np.allclose([block.apply_p(v) for v in grid], est.predict(grid), atol=1e-5)
    assert ece(est.predict(q), y) < ece(q, y) / 3
    assert isinstance(fit_noul_calibrator(q, y, "auto"), IsotonicCalibrator)
    assert isinstance(fit_noul_calibrator(q[:150], y[:150], "auto"), PlattCalibrator)  # too few for isotonic
    assert fit_noul_calibrator(q, y, "none") is None


def test_temperature_recovers_the_sharpening_and_copes_with_varying_options():
    rng = np.random.default_rng(4)
    dists, labels = [], []
    for i in range(4000):
        k = 2 + i % 4  # 2 to 5 options
        d = rng.dirichlet(np.ones(k))
        labels.append(int(rng.choice(k, p=d)))
        s = d ** 3
        dists.append(s / s.sum())  # the judge reports p^3: temperature 3 undoes it
    est = TemperatureCalibrator().fit(dists, labels)
    assert est.temperature_ == pytest.approx(3.0, rel=0.1)
    block = est.to_block()
    assert np.allclose(block.apply_dist(list(dists[0])), est.predict([dists[0]])[0], atol=1e-6)


def test_platt_never_reads_a_judge_backwards():
    rng = np.random.default_rng(11)
    p = rng.uniform(size=400)
    y = rng.uniform(size=400) < 1 - p  # answers run against the labels
    est = PlattCalibrator().fit(p, y)
    assert est.a_ == 0 and np.allclose(est.predict([0.1, 0.9]), y.mean())


def test_calibrators_validate_their_inputs():
    with pytest.raises(ValueError, match="both classes"):
        PlattCalibrator().fit([0.2, 0.7], [True, True])
    with pytest.raises(ValueError, match="within"):
        PlattCalibrator().fit([0.2, 1.7], [True, False])
    with pytest.raises(ValueError, match="outside"):
        TemperatureCalibrator().fit([[0.5, 0.5]], [2])


# --------------------------------------------------------------------------- cost thresholds


def test_cost_thresholds_match_the_closed_form_on_a_calibrated_judge():
    p, y = calibrated(200_000, seed=5)
    costs = Costs(act=10, refuse=2, review=1)
    assert bayes_thresholds(costs) == pytest.approx((0.9, 0.5))
    est = CostThresholds(costs).fit(p, y)
    assert est.high_ == pytest.approx(0.9, abs=0.03) and est.low_ == pytest.approx(0.5, abs=0.03)
    assert set(np.unique(est.predict(p))) == {-1, 0, 1}


def test_an_expensive_look_leaves_one_cut_at_the_cost_ratio():
    p, y = calibrated(200_000, seed=6)
    costs = Costs(act=5, refuse=1, review=2)  # a look costs more than c_act·c_ref/(c_act + c_ref)
    star, _ = bayes_thresholds(costs)
    assert star == pytest.approx(5 / 6)
    est = CostThresholds(costs).fit(p, y)
    assert est.high_ == est.low_ == pytest.approx(star, abs=0.03)
    assert not np.any(est.predict(p) == 0)


def test_capacity_caps_the_band():
    p, y = calibrated(20_000, seed=7)
    free = CostThresholds(Costs(10, 10, 1)).fit(p, y)
    assert np.mean(free.predict(p) == 0) > 0.5
    capped = CostThresholds(Costs(10, 10, 1), capacity=0.1).fit(p, y)
    assert np.mean(capped.predict(p) == 0) <= 0.1
    assert capped.cost_ >= free.cost_


def _brute_force(p, y, costs, capacity):
    cands = np.concatenate([[0.0, 1.0], (np.sort(np.unique(p))[:-1] + np.sort(np.unique(p))[1:]) / 2])
    best = np.inf
    for h, lo in product(cands, cands):
        if lo > h:
            continue
        act, ref = p >= h, (p < h) & (p <= lo)
        band = ~(act | ref)
        if capacity is not None and band.sum() > np.floor(capacity * p.size + 1e-9):
            continue
        cost = costs.act * np.sum(act & ~y) + costs.refuse * np.sum(ref & y) + costs.review * band.sum()
        best = min(best, cost / p.size)
    return best


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.lists(st.tuples(st.sampled_from([0.0, 0.1, 0.25, 0.3, 0.5, 0.7, 0.8, 0.95, 1.0]), st.booleans()),
                  min_size=1, max_size=14),
    act=st.floats(0.1, 10), refuse=st.floats(0.1, 10), review=st.floats(0, 5),
    capacity=st.one_of(st.none(), st.floats(0, 1)),
)
def test_the_linear_scan_finds_the_brute_force_minimum(data, act, refuse, review, capacity):
    p = np.array([d[0] for d in data])
    y = np.array([d[1] for d in data])
    costs = Costs(act, refuse, review)
    est = CostThresholds(costs, capacity, signal_level=None).fit(p, y)
    assert est.cost_ == pytest.approx(_brute_force(p, y, costs, capacity), abs=1e-9)
    z = est.predict(p)
    realised = (costs.act * np.sum((z == 1) & ~y) + costs.refuse * np.sum((z == -1) & y)
                + costs.review * np.sum(z == 0)) / p.size
    assert realised == pytest.approx(est.cost_, abs=1e-9)  # the cut-points do what the fit says


def _realised(est, p, y, costs):
    z = est.predict(p)
    return (costs.act * np.sum((z == 1) & ~y) + costs.refuse * np.sum((z == -1) & y)
            + costs.review * np.sum(z == 0)) / p.size


@pytest.mark.parametrize("direction", ["unrelated", "reversed"])
def test_scores_without_signal_get_the_cheapest_constant_decision(direction):
    rng = np.random.default_rng(3)
    y = rng.uniform(size=131) < 0.6
    p = rng.uniform(0.01, 0.99, size=131)
    if direction == "reversed":  # true items score lower: no evidence for the score's direction
        p = np.where(y, p * 0.6, 0.4 + p * 0.6)
    costs = Costs(3, 6, 1)
    with pytest.warns(ThresholdWarning, match="do not separate the labels"):
        est = CostThresholds(costs, capacity=0.3).fit(p, y)
    assert est.signal_p_ > 0.05
    # 40 % false x 3 < 60 % true x 6, and the cap rules out reviewing all: act on every item
    assert (est.high_, est.low_) == (0.0, 0.0)
    assert set(est.predict(p)) == {1}
    assert est.cost_ == pytest.approx(_realised(est, p, y, costs))
    if direction == "unrelated":  # with the test switched off, cut-points fit the sample's noise
        free = CostThresholds(costs, capacity=0.3, signal_level=None).fit(p, y)
        assert free.cost_ < est.cost_ and len(set(free.predict(p))) > 1


def test_the_constant_decision_can_refuse_or_review_every_item():
    rng = np.random.default_rng(4)
    y = rng.uniform(size=200) < 0.3
    p = rng.uniform(0.01, 0.99, size=200)
    with pytest.warns(ThresholdWarning):
        refuse = CostThresholds(Costs(5, 1, 2)).fit(p, y)  # 70 % false x 5 > 30 % true x 1
    assert set(refuse.predict(p)) == {-1}
    with pytest.warns(ThresholdWarning, match="review every item"):
        review = CostThresholds(Costs(5, 5, 0.5)).fit(p, y)  # no cap: a look is cheapest
    assert set(review.predict(p)) == {0}
    assert review.cost_ == pytest.approx(0.5)


def test_scores_with_signal_are_cut_without_a_warning():
    p, y = calibrated(300, seed=6)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ThresholdWarning)
        est = CostThresholds(Costs(3, 6, 1), capacity=0.3).fit(p, y)
    assert est.signal_p_ < 1e-6 and 0 < est.low_ < est.high_ < 1


def test_signal_p_is_one_sided():
    y = np.array([True] * 20 + [False] * 20)
    up = np.linspace(0, 1, 40)[::-1]  # true items score higher
    assert signal_p(up, y) < 1e-6
    assert signal_p(up[::-1], y) > 0.99
    assert signal_p(up, np.ones(40, bool)) == 1.0


# --------------------------------------------------------------------------- target error


def test_target_error_on_a_calibrated_judge_stays_below_the_oracle():
    # p ~ U(0, 1) calibrated: automating min(p, 1 − p) ≤ λ has error λ/2, so the oracle λ is 2α
    p, y = calibrated(50_000, seed=8)
    est = TargetErrorThresholds(target=0.1, delta=0.05).fit(p, y)
    assert 0.16 <= est.lambda_ <= 0.2
    assert est.high_ == pytest.approx(1 - est.lambda_) and est.low_ == pytest.approx(est.lambda_)
    assert est.guaranteed_ and est.upper_bound_ <= 0.1


def test_target_error_out_of_reach_sends_everything_to_review():
    p, y = calibrated(40, seed=9)
    with pytest.warns(ThresholdWarning, match="every item goes to review"):
        est = TargetErrorThresholds(target=0.01, delta=0.05).fit(p, y)
    assert (est.high_, est.low_) == (1.0, 0.0) and np.all(est.predict(p[p < 1]) == 0)


def test_capacity_overrides_the_target_and_says_so():
    p, y = calibrated(5000, seed=10)
    with pytest.warns(ThresholdWarning, match="guarantee does not hold"):
        est = TargetErrorThresholds(target=0.05, delta=0.05, capacity=0.2).fit(p, y)
    assert not est.guaranteed_ and np.mean(est.predict(p) == 0) <= 0.2


def _true_error(high, low, p_true, p_judge):
    act, ref = p_judge >= high, (p_judge < high) & (p_judge <= low)
    m = act.sum() + ref.sum()
    return None if m == 0 else (np.sum(1 - p_true[act]) + np.sum(p_true[ref])) / m


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    target=st.sampled_from([0.05, 0.1, 0.2]),
    k=st.floats(0.5, 3.0), b=st.floats(-1.0, 1.0),
    shape=st.tuples(st.floats(0.3, 2.0), st.floats(0.3, 2.0)),
    n=st.integers(500, 3000), seed=st.integers(0, 2**16),
)
def test_a_fitted_band_violates_its_guarantee_no_more_often_than_its_confidence_allows(target, k, b, shape, n, seed):
    """Fit on R fresh samples of a (possibly miscalibrated) judge; on a large fresh draw, count how
    often the true error rate on automated decisions exceeds the target. With δ = 0.1 that count is
    at most Binomial(R, δ); failing the 99.9 % quantile would mean the guarantee is broken."""
    delta, reps = 0.1, 60
    rng = np.random.default_rng(seed)
    fresh = rng.beta(*shape, size=100_000)
    fresh_j = distort(fresh, k, b)
    violations = automated = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ThresholdWarning)
        for _ in range(reps):
            p = rng.beta(*shape, size=n)
            y = rng.uniform(size=n) < p
            est = TargetErrorThresholds(target=target, delta=delta).fit(distort(p, k, b), y)
            err = _true_error(est.high_, est.low_, fresh, fresh_j)
            violations += err is not None and err > target
            automated += err is not None
    note(f"{automated} of {reps} fits automated something; {violations} violated the target")
    assert violations <= stats.binom.ppf(0.999, reps, delta)


def test_a_target_over_all_decisions_automates_more_and_holds_over_all_of_them():
    """A cascade to a trusted judge errs only where it automates: counted over every decision,
    the same α allows a far wider automated region, and the fitted band's errors over a large
    fresh draw stay within α (with 3 % of labels flipped, as from a noisy teacher)."""
    rng = np.random.default_rng(12)

    def draw(n):
        p = rng.beta(0.4, 0.4, size=n)
        y = rng.uniform(size=n) < p
        return p, y ^ (rng.uniform(size=n) < 0.03)

    p, y = draw(600)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ThresholdWarning)
        automated = TargetErrorThresholds(target=0.05, delta=0.05).fit(p, y)
    over_all = TargetErrorThresholds(target=0.05, delta=0.05, over="all").fit(p, y)
    assert over_all.automated_ > automated.automated_ + 100
    assert over_all.guaranteed_ and over_all.upper_bound_ <= 0.05
    fresh, fy = draw(100_000)
    decided = (fresh >= over_all.high_) | (fresh <= over_all.low_)
    wrong = decided & ((fresh >= over_all.high_) != fy)
    assert wrong.mean() <= 0.05 and decided.mean() > 0.35


# --------------------------------------------------------------------------- label counts


def _set(n, seed=0):
    import json

    return "".join(json.dumps(it) + "\n" for it in noul_items(n, seed))


def test_fewer_than_50_labels_is_an_error_and_fewer_than_200_a_warning():
    rubric = Rubric.loads(NOUL_RUBRIC)
    judge = SynthJudge()
    small = loads_jsonl(_set(49), rubric.questions)
    with pytest.raises(InputError, match="'flag' has 49; at least 50 per question"):
        fit_calibration(rubric, small, run_set(small, judge), FitOptions())
    some = loads_jsonl(_set(120), rubric.questions)
    with pytest.warns(CalibrationDataWarning, match="only 120 labels"):
        result = fit_calibration(rubric, some, run_set(some, judge), FitOptions(n_boot=50))
    assert result.block.questions["flag"].n == 120


def test_a_zero_slope_is_applied_as_the_base_rate_not_ignored():
    from seams.rubric.calibration import Calibrator

    flat = Calibrator(method="platt", a=0.0, b=-0.5)
    assert flat.apply_p(0.1) == pytest.approx(flat.apply_p(0.9)) == pytest.approx(1 / (1 + np.exp(0.5)))


def test_costs_follow_the_kind_of_the_outcome_in_each_zone():
    """A red-flag rule (high zone → a refusal) prices a wrong high-zone decision as a wrong
    refusal: fitting it with act=10, refuse=1 equals fitting the act-then rule with the prices
    swapped."""
    acting = Rubric.loads(NOUL_RUBRIC)
    refusing = Rubric.loads(NOUL_RUBRIC.replace("then: allow\n      else: block", "then: block\n      else: allow"))
    assert refusing.policy.outcomes[refusing.policy.rules[0].then] == "refuse"
    judge = SynthJudge()
    data = loads_jsonl(_set(400, seed=3), acting.questions)
    run = run_set(data, judge)

    def cuts(rubric, costs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = fit_calibration(rubric, data, run, FitOptions(costs=Costs.parse(costs), n_boot=20)).block.thresholds["flag"]
        return t.high, t.low

    assert cuts(refusing, "act=10,refuse=1,review=0.5") == cuts(acting, "act=1,refuse=10,review=0.5")
    assert cuts(refusing, "act=10,refuse=1,review=0.5") != cuts(acting, "act=10,refuse=1,review=0.5")


GATED_RUBRIC = NOUL_RUBRIC.replace("name: synth-gate", "name: synth-gated").replace(
    "questions:\n", "questions:\n  open:\n    type: noul\n    instructions: Is the `text` in scope?\n", 1,
).replace("      question: flag\n", "      question: flag\n      gate: {question: open, high: 0.95, low: 0.9}\n")


def test_a_rules_gate_is_fitted_on_its_own_labels_and_applied_when_deciding():
    """The gate's cut-points come from the gate question's labels, land near the closed-form
    optimum for a calibrated judge, and replace the written ones when the rubric decides."""
    import json

    from seams.answers import Answers, NoulAnswer

    rubric = Rubric.loads(GATED_RUBRIC)
    rng = np.random.default_rng(7)
    items = []
    for i, p in enumerate(rng.beta(1, 1, size=3000)):
        y_open, y_flag = bool(rng.uniform() < p), bool(rng.uniform() < p)
        items.append({"id": f"g{i}", "state": {"text": f"item {i}", "p": round(float(p), 6)},
                      "labels": {"open": y_open, "flag": y_flag}})
    data = loads_jsonl("".join(json.dumps(it) + "\n" for it in items), rubric.questions)
    costs = Costs.parse("act=4,refuse=4,review=1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = fit_calibration(rubric, data, run_set(data, SynthJudge()),
                                 FitOptions(costs=costs, calibrator="none", n_boot=20))
    gate = result.block.gates["flag"]
    want_high, want_low = bayes_thresholds(costs)  # 0.75, 0.25
    assert gate.high == pytest.approx(want_high, abs=0.06) and gate.low == pytest.approx(want_low, abs=0.06)
    assert "flag (gate)" in result.rules and result.rules["flag (gate)"].heldout["n"] > 0
    # the gated rule is fitted and measured without the items its gate is labelled to keep out
    opened = {it.id for it in data.items if it.labels["open"]}
    assert result.rules["flag"].heldout["n"] == len(result.report_ids & opened)

    fitted = Rubric.from_dict({**rubric.spec.model_dump(by_alias=True, exclude_none=True),
                               "calibration": result.block.model_dump(mode="json", exclude_none=True)})
    answers = Answers(model="synth-1", answers={"open": NoulAnswer(noul=0.85), "flag": NoulAnswer(noul=0.99)})
    # written gate (0.95 / 0.9): 0.85 is closed, the rule is passed over to the default
    assert rubric.decide_answers(answers).outcome == "block"
    # fitted gate (≈0.75): 0.85 opens it and the rule's own zone decides
    assert fitted.decide_answers(answers).outcome == "allow"


def _fit_flag(rubric_text, costs="act=4,refuse=4,review=1", n=3000, seed=11):
    import json

    rubric = Rubric.loads(rubric_text)
    rng = np.random.default_rng(seed)
    items = []
    for i, p in enumerate(rng.beta(1, 1, size=n)):
        items.append({"id": f"c{i}", "state": {"text": f"item {i}", "p": round(float(p), 6)},
                      "labels": {q: bool(rng.uniform() < p) for q in rubric.questions}})
    data = loads_jsonl("".join(json.dumps(it) + "\n" for it in items), rubric.questions)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fit_calibration(rubric, data, run_set(data, SynthJudge()),
                               FitOptions(costs=Costs.parse(costs), calibrator="none", n_boot=20))


def test_a_rule_can_price_its_own_mistakes_higher_thresholds_scaled_to_consequence():
    plain = _fit_flag(NOUL_RUBRIC).block.thresholds["flag"]
    costly = _fit_flag(NOUL_RUBRIC.replace("      then: allow\n", "      then: allow\n      costs: {act: 20}\n"))
    t = costly.block.thresholds["flag"]
    assert plain.high == pytest.approx(0.75, abs=0.06)
    assert t.high == pytest.approx(bayes_thresholds(Costs(act=20, refuse=4, review=1))[0], abs=0.03)  # 0.95
    assert t.params["costs"] == {"act": 20.0, "refuse": 4.0, "review": 1.0}


def test_a_gate_can_price_a_wrong_close_above_a_wrong_open():
    """confirm-before-act's shape: closing the `irreversible` gate wrongly lets an irreversible
    action through on the laxer rule, so a wrong close is the costly mistake."""
    text = GATED_RUBRIC.replace("gate: {question: open, high: 0.95, low: 0.9}",
                                "gate: {question: open, high: 0.95, low: 0.9, costs: {open: 1, closed: 20, review: 1}}")
    gate = _fit_flag(text).block.gates["flag"]
    star, _ = bayes_thresholds(Costs(act=1, refuse=20, review=1))  # one cut at 1/21
    assert gate.high == pytest.approx(star, abs=0.04) and gate.low == gate.high
    assert gate.params["costs"] == {"open": 1.0, "closed": 20.0, "review": 1.0}


@pytest.mark.parametrize("bad,message", [
    ("costs: {act: -1}", r"policy.rules.0.costs.act\] Input should be greater than or equal to 0"),
    ("costs: {wrong: 1}", r"policy.rules.0.costs.wrong\] unknown key 'wrong'"),
])
def test_rule_costs_are_checked_when_the_rubric_loads(bad, message):
    from seams.errors import RubricError

    with pytest.raises(RubricError, match=message):
        Rubric.loads(NOUL_RUBRIC.replace("      then: allow\n", f"      then: allow\n      {bad}\n"))


def test_a_rule_whose_scores_carry_no_signal_is_fitted_to_one_decision_and_says_why():
    import json

    rubric = Rubric.loads(NOUL_RUBRIC)
    rng = np.random.default_rng(12)
    items = noul_items(300, seed=12)
    for it in items:  # labels drawn apart from the score the judge reports
        it["labels"]["flag"] = bool(rng.uniform() < 0.5)
    data = loads_jsonl("".join(json.dumps(it) + "\n" for it in items), rubric.questions)
    run = run_set(data, SynthJudge())
    opts = FitOptions(costs=Costs.parse("act=4,refuse=4,review=1"), capacity=0.3, n_boot=20, calibrator="none")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = fit_calibration(rubric, data, run, opts)
        free = fit_calibration(rubric, data, run, dataclasses.replace(opts, signal_level=1.0))
    t = result.block.thresholds["flag"]
    assert t.high == t.low and t.high in (0.0, 1.0)
    assert t.params["signal_p"] > 0.05
    assert any("do not separate the labels" in n for n in result.notes)
    cut = free.block.thresholds["flag"]  # the test switched off: cut-points fitted to the noise
    assert 0 < cut.high < 1 and not any("do not separate" in n for n in free.notes)
