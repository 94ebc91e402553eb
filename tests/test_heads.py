"""Heads fitted from labels, on real onnxruntime sessions of the tiny model that outputs features:
what they learn, how they are stored (byte for byte), and where they must never apply."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from heads_data import RUBRIC, items, jsonl
from tinymodel import write_tiny_model
from typer.testing import CliRunner

from seams.calibration.check import check_calibration
from seams.calibration.dataset import loads_jsonl
from seams.calibration.fit import FitOptions
from seams.calibration.head_fitting import HeadFitter, calibrate_with_heads, collect
from seams.calibration.run import RunResult
from seams.calibration.writeback import with_block, write_calibration
from seams.cli import _register, app
from seams.errors import ConfigError, HeadMismatch, InputError
from seams.judges.local import LocalJudge
from seams.judges.local.headed import HeadedJudge
from seams.rubric import Rubric
from seams.rubric.heads import rubric_heads, with_heads

_register()


@pytest.fixture(scope="module")
def local(tiny_features_dir: Path) -> LocalJudge:
    return LocalJudge(tiny_features_dir, intra_op_threads=1)


@pytest.fixture(scope="module")
def fitted(local: LocalJudge, tmp_path_factory: pytest.TempPathFactory):
    """The refund-desk rubric written with heads fitted on 300 labelled tickets."""
    path = tmp_path_factory.mktemp("heads") / "desk.yaml"
    path.write_text(RUBRIC)
    rubric = Rubric.load(path)
    ds = loads_jsonl(jsonl(items(300)), rubric.questions)
    result = calibrate_with_heads(rubric, ds, local, FitOptions(n_boot=50))
    return path, ds, result, write_calibration(path, result.calibration.block)


def test_heads_learn_what_the_model_cannot_see(fitted) -> None:
    _, _, result, _ = fitted
    q = result.calibration.questions
    # zero-shot the model gives "invoice" no weight: chance; the head reads it in the features
    assert q["refund"].before["auroc"] == pytest.approx(0.5)
    assert q["refund"].after["auroc"] > 0.95
    assert q["team"].before["top1"] < 0.7 and q["team"].after["top1"] > 0.95
    assert set(result.heads) == {"refund", "team"}
    assert all(h.model == "seams-tiny-features" and h.n == 150 for h in result.heads.values())


def test_heads_round_trip_through_the_rubric_file_byte_for_byte(fitted, local: LocalJudge) -> None:
    path, _, result, rubric = fitted
    text = path.read_text()
    assert text.startswith(RUBRIC)
    stored = rubric.calibration
    assert with_block(text, stored, str(path)) == text  # loaded and written again: the same bytes
    loaded = rubric_heads(rubric)
    for qid, head in result.heads.items():
        assert loaded[qid] == head
        assert np.array_equal(loaded[qid].weight_array, head.weight_array)
    states = [it["state"] for it in items(20, seed=9)]
    again = HeadedJudge(local, loaded).ask_many(states, rubric.questions)
    fresh = HeadedJudge(local, result.heads).ask_many(states, rubric.questions)
    assert [a.answers for a in again] == [a.answers for a in fresh]


def test_the_headed_judge_decides_with_heads_and_calibration(fitted, local: LocalJudge) -> None:
    _, _, _, rubric = fitted
    judge = with_heads(local, rubric)
    assert isinstance(judge, HeadedJudge) and judge.model_id == rubric.calibration.model
    assert judge.model_id.startswith("seams-tiny-features+heads:")
    decision = rubric.decide("the customer saw the invoice charged twice", judge=judge)
    assert decision.calibrated and decision.outcome == "refund"
    # the rubric applies its heads itself when asked with the very model they were fitted on
    auto = rubric.decide("the customer saw the invoice charged twice", judge=local)
    assert auto.calibrated and auto.outcome == "refund"
    assert auto.model == judge.model_id and auto.answers == decision.answers
    many = rubric.decide_many(["the customer saw the invoice charged twice", "hello"], judge=local)
    assert [d.model for d in many] == [judge.model_id] * 2 and all(d.calibrated for d in many)
    # the answers of `ask` do not change with heads around: the bare model answers as before
    assert local.ask("invoice", rubric.questions).model == "seams-tiny-features"


def test_a_head_never_applies_to_another_model(fitted, tmp_path: Path) -> None:
    _, ds, _, rubric = fitted
    other = LocalJudge(write_tiny_model(tmp_path / "other", model_id="seams-tiny-other", features=True))
    with pytest.raises(HeadMismatch, match="fitted on model 'seams-tiny-features'; it never applies to 'seams-tiny-other'"):
        HeadedJudge(other, rubric_heads(rubric))
    assert with_heads(other, rubric) is other
    assert any("fitted on model" in r for r in rubric.stale_reasons(other.model_id))
    run = RunResult(model=other.model_id, answers={it.id: other.ask(it.state, rubric.questions) for it in ds.items})
    out = check_calibration(rubric, ds, run)
    assert not out.ok
    assert any("head fitted on model 'seams-tiny-features'; it is never applied to 'seams-tiny-other'" in f.message
               for f in out.findings)


def test_a_model_without_features_cannot_carry_heads(fitted, tiny_model_dir: Path) -> None:
    _, ds, _, rubric = fitted
    plain = LocalJudge(tiny_model_dir)
    with pytest.raises(ConfigError, match="no pair-features output"):
        calibrate_with_heads(rubric, ds, plain, FitOptions(n_boot=0))
    assert with_heads(plain, rubric) is plain
    with pytest.raises(HeadMismatch):
        HeadedJudge(plain, rubric_heads(rubric))


def test_a_changed_wording_makes_the_heads_stale(fitted, local: LocalJudge) -> None:
    path, _, _, _ = fitted
    edited = Rubric.loads(path.read_text().replace("Is a refund asked for?", "Is money asked back?"))
    assert any("'refund' changed wording" in r for r in edited.stale_reasons(with_heads(local, edited).model_id))
    judge = with_heads(local, edited)
    assert set(judge.heads) == {"team"}  # the reworded question's head is left out
    assert set(HeadedJudge(local, rubric_heads(edited)).applicable(edited.questions)) == {"team"}


def test_fewer_than_50_labels_are_refused(local: LocalJudge) -> None:
    rubric = Rubric.loads(RUBRIC)
    ds = loads_jsonl(jsonl(items(40)), rubric.questions)
    with pytest.raises(InputError, match="too few labels to calibrate: 'refund' has 40, 'team' has 40; at least 50"):
        calibrate_with_heads(rubric, ds, local, FitOptions(n_boot=0))


def test_a_strongly_regularised_head_stays_with_the_model(local: LocalJudge) -> None:
    """At the grid's smallest C the head's spread comes from the model's logit, not the features:
    the logit column's scale keeps its weight nearly unpenalised (without it, the reverse)."""
    rubric = Rubric.loads(RUBRIC)
    rows = items(200, seed=4)
    for r in rows:  # labels the model can read: "yes" in the state
        r["state"] += " yes" if r["labels"]["refund"] else " no"
    pass_ = collect(rubric, local, [r["state"] for r in rows])
    logits = np.array([f["refund"].logits[0] for _, f in pass_])
    feats = np.stack([f["refund"].features[0] for _, f in pass_])
    y = np.array([r["labels"]["refund"] for r in rows], int)

    def spreads(fitter: HeadFitter) -> tuple[float, float]:
        fitter.fit(logits, feats, y)
        return float(np.std(fitter.logit_weight_ * logits)), float(np.std(feats @ fitter.weights_))

    from_logit, from_features = spreads(HeadFitter(Cs=[1e-3]))
    assert from_logit > 10 * from_features
    unscaled_logit, unscaled_features = spreads(HeadFitter(Cs=[1e-3], logit_scale=1.0))
    assert unscaled_logit < unscaled_features


def test_a_scaled_block_of_features_is_held_nearer_zero_and_its_weights_stay_in_raw_units() -> None:
    """`feature_scale` below 1 on a block penalises it harder: at one C its columns carry less of
    the score; the fitted weights still read raw features (the scale is folded in)."""
    rng = np.random.default_rng(3)
    n = 400
    logits = rng.normal(size=n)
    pair, block = rng.normal(size=(n, 3)), rng.normal(size=(n, 20)) * 5.0
    y = (logits + pair[:, 0] + 0.2 * block[:, :5].sum(1) + rng.normal(size=n) > 0).astype(int)
    feats = np.c_[pair, block]

    def block_spread(scale: float) -> tuple[float, HeadFitter]:
        f = HeadFitter(Cs=[0.1], feature_scale=np.r_[np.ones(3), np.full(20, scale)]).fit(logits, feats, y)
        return float(np.std(block @ f.weights_[3:])), f

    full, _ = block_spread(1.0)
    held, fitted = block_spread(0.05)
    assert held < 0.5 * full
    # raw units: the head's score on raw columns is the decision function of the logistic model
    # fitted on the standardised, scaled ones
    from sklearn.linear_model import LogisticRegression

    from seams.calibration.head_fitting import LOGIT_SCALE

    scale = np.r_[np.ones(3), np.full(20, 0.05)]
    x = np.c_[(logits - logits.mean()) / logits.std() * LOGIT_SCALE, (feats - feats.mean(0)) / feats.std(0) * scale]
    want = LogisticRegression(C=0.1, max_iter=2000).fit(x, y).decision_function(x)
    z = fitted.logit_weight_ * logits + feats @ fitted.weights_ + fitted.bias_
    np.testing.assert_allclose(z, want, atol=1e-4)
    same = HeadFitter(Cs=[0.1], feature_scale=1.0).fit(logits, feats, y)
    np.testing.assert_allclose(same.weights_, HeadFitter(Cs=[0.1]).fit(logits, feats, y).weights_)
    with pytest.raises(InputError, match=r"one per feature column \(23\), got 2"):
        HeadFitter(feature_scale=[1.0, 2.0]).fit(logits, feats, y)
    with pytest.raises(InputError, match="feature_scale must be positive"):
        HeadFitter(feature_scale=0.0).fit(logits, feats, y)


def test_a_choice_head_is_a_softmax_over_the_items_options_with_a_bias_per_option() -> None:
    """Grouped rows are fitted as a conditional logit: its gradient is the loss's, and when the
    features say nothing the per-option biases learn how often each option is right."""
    from scipy.optimize import check_grad

    from seams.calibration.head_fitting import _softmax_loss

    rng = np.random.default_rng(3)
    x, gold = rng.normal(size=(40, 3, 6)), rng.integers(0, 3, 40)
    theta = rng.normal(size=9)
    assert check_grad(lambda t: _softmax_loss(t, x, gold, 0.5)[0], lambda t: _softmax_loss(t, x, gold, 0.5)[1],
                      theta) < 1e-5

    n, k = 400, 3
    gold = rng.choice(k, size=n, p=[0.1, 0.1, 0.8])
    y = np.zeros((n, k), int)
    y[np.arange(n), gold] = 1
    fitter = HeadFitter().fit(rng.normal(size=n * k), rng.normal(size=(n * k, 5)), y.ravel(), np.repeat(np.arange(n), k))
    bias = np.array(fitter.option_bias_)
    assert bias.argmax() == 2 and bias[2] - bias[:2].max() > 1.0
    head = fitter.to_head(model="m", fingerprint="f", kind="choice", n=n)
    probs = head.probabilities(np.zeros(k), np.zeros((k, 5)))
    assert probs.argmax() == 2 and probs[2] > 0.6
    with pytest.raises(ValueError, match="bias for 3 options"):
        head.probabilities(np.zeros(4), np.zeros((4, 5)))
    with pytest.raises(InputError, match="whole item at a time"):
        HeadFitter().fit(np.zeros(5), np.zeros((5, 2)), np.array([1, 0, 0, 1, 0]), np.array([0, 0, 0, 1, 1]))


def _desk(tmp_path: Path) -> tuple[Path, Path]:
    """The refund desk's rubric and 200 labelled tickets, as files."""
    rubric_path = tmp_path / "desk.yaml"
    rubric_path.write_text(RUBRIC)
    data = tmp_path / "set.jsonl"
    data.write_text(jsonl(items(200, seed=1)))
    return rubric_path, data


def test_calibrate_heads_and_check_on_the_command_line(tiny_features_dir: Path, tmp_path: Path) -> None:
    rubric_path, data = _desk(tmp_path)
    runner = CliRunner()
    args = ["--model-dir", str(tiny_features_dir), "--no-cache"]
    res = runner.invoke(app, ["calibrate", str(rubric_path), str(data), "--heads", "--bootstrap", "50", "-q", *args],
                        env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "refund (zero-shot)" in res.output and "refund (heads + calibration)" in res.output
    assert "head:" in rubric_path.read_text()
    res = runner.invoke(app, ["check", str(rubric_path), str(data), "-q", *args])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["eval", str(rubric_path), str(data), "-q", "--json", *args])
    assert res.exit_code == 0, res.output
    evaluated = json.loads(res.output)
    assert evaluated["calibrated"] and "+heads:" in evaluated["model"]
    other = write_tiny_model(tmp_path / "other", model_id="seams-tiny-other", features=True)
    res = runner.invoke(app, ["check", str(rubric_path), str(data), "-q", "--model-dir", str(other), "--no-cache"])
    assert res.exit_code == 1 and "never applied to 'seams-tiny-other'" in res.output
    remote = runner.invoke(app, ["calibrate", str(rubric_path), str(data), "--heads", "--judge", "http://127.0.0.1:9"])
    assert remote.exit_code == 2 and "--heads fits on the local model" in remote.output


def test_a_question_can_be_left_without_a_head(tiny_features_dir: Path, tmp_path: Path) -> None:
    """`--no-head team` fits the refund head alone; the team Choice stays the bare model's."""
    rubric_path, data = _desk(tmp_path)
    runner = CliRunner()
    args = ["--model-dir", str(tiny_features_dir), "--no-cache", "--bootstrap", "20", "-q"]
    res = runner.invoke(app, ["calibrate", str(rubric_path), str(data), "--heads", "--no-head", "team", *args])
    assert res.exit_code == 0, res.output
    block = Rubric.load(rubric_path).calibration
    assert block is not None
    assert block.questions["refund"].head is not None and block.questions["team"].head is None
    wrong = runner.invoke(app, ["calibrate", str(rubric_path), str(data), "--heads", "--no-head", "teem", *args])
    assert wrong.exit_code == 2 and "'teem'" in wrong.output and "refund, team" in wrong.output
    alone = runner.invoke(app, ["calibrate", str(rubric_path), str(data), "--no-head", "team", *args])
    assert alone.exit_code == 2 and "give --heads too" in alone.output


def test_lines_with_their_own_questions_are_refused(local: LocalJudge) -> None:
    rubric = Rubric.loads(RUBRIC)
    rows = items(60)
    rows[0]["questions"] = {"refund": {"type": "noul", "instructions": "Is a refund asked for?"}}
    ds = loads_jsonl(jsonl(rows), rubric.questions)
    with pytest.raises(InputError, match="carry their own questions"):
        calibrate_with_heads(rubric, ds, local, FitOptions(n_boot=0))


def test_a_head_that_reads_the_state_embedding(tmp_path: Path, local: LocalJudge) -> None:
    """A `pair+state` head reads the pair features and the encoder's embedding of the text the
    question reads; it is fitted and applied on the same columns, and never laid over a model
    without an encoder."""
    from seams.judges.head import Head
    from seams.judges.local.headed import state_vector
    from seams.judges.local.hypotheses import state_text

    blend = {"blend": {"noul": {"logit": 1.0, "cosine": 0.5}}}  # a judge loads its encoder for a blend
    judge = LocalJudge(write_tiny_model(tmp_path / "m", model_id="seams-tiny-enc", features=True, encoder=True,
                                        config_overrides=blend), intra_op_threads=1)
    assert judge.encoder is not None and judge.feature_dim is not None
    rubric = Rubric.loads(RUBRIC)
    q = rubric.questions["refund"]
    rows = items(120, seed=3)
    states = [r["state"] for r in rows]
    got = judge.answers_and_features(states, {"refund": q})
    vectors = np.stack([state_vector(judge, q, s) for s in states])
    assert np.allclose(vectors[0], judge.encoder.embed([state_text(states[0])])[0])
    x = np.c_[np.stack([f["refund"].features[0] for _, f in got]), vectors]
    y = np.array([r["labels"]["refund"] for r in rows], int)
    fitter = HeadFitter().fit(np.array([f["refund"].logits[0] for _, f in got]), x, y)
    head = fitter.to_head(model=judge.model_id, fingerprint=q.fingerprint, kind="noul", n=len(rows), reads="pair+state")
    assert head.dim == judge.feature_dim + judge.encoder.dim
    # a pair head's digest is what it was before heads could read more; another reading is another head
    pair = head.model_copy(update={"reads": "pair"})
    assert head.digest != pair.digest
    headed = HeadedJudge(judge, {"refund": head})
    answers = headed.ask_many(states[:5], {"refund": q})
    for s, a, (_, f) in zip(states[:5], answers, got[:5], strict=True):
        want = head.probabilities(f["refund"].logits, np.c_[f["refund"].features, state_vector(judge, q, s)[None, :]])
        assert a.answers["refund"].noul == pytest.approx(float(want[0]), abs=1e-9)
    # the heads-file round trip keeps what it reads
    assert Head.model_validate(json.loads(head.model_dump_json())).reads == "pair+state"
    # a model without an encoder never gets it
    plain = write_tiny_model(tmp_path / "plain", model_id="seams-tiny-enc", features=True)
    with pytest.raises(HeadMismatch, match="no sentence encoder"):
        HeadedJudge(LocalJudge(plain, intra_op_threads=1), {"refund": head})
