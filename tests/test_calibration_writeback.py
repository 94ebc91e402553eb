"""Write-back keeps the rubric's comments and layout; the block is applied; staleness and `check`."""

import json

import pytest
from calibration_synth import NOUL_RUBRIC, SynthJudge, choice_items, noul_items
from fixed_judge import FixedJudge

from seams.calibration.check import check_calibration
from seams.calibration.dataset import loads_jsonl
from seams.calibration.fit import FitOptions, fit_calibration
from seams.calibration.metrics import Costs
from seams.calibration.run import run_set
from seams.calibration.writeback import with_block, write_calibration
from seams.errors import RubricError
from seams.rubric import Rubric, builtin_names, builtin_path
from seams.rubric.calibration import QuestionMeasured, QuestionMetrics, RuleMeasured


def jsonl(items):
    return "".join(json.dumps(it) + "\n" for it in items)


@pytest.fixture
def fitted(tmp_path):
    """A rubric file, a labelled set, a distorted judge's run, and the fitted result."""
    path = tmp_path / "gate.yaml"
    path.write_text(NOUL_RUBRIC)
    rubric = Rubric.load(path)
    ds = loads_jsonl(jsonl(noul_items(600, seed=3)), rubric.questions)
    judge = SynthJudge(k=2.0, b=0.4)
    run = run_set(ds, judge)
    result = fit_calibration(rubric, ds, run, FitOptions(costs=Costs(act=4, refuse=1, review=0.3), n_boot=100))
    return path, rubric, ds, judge, run, result


def test_write_back_keeps_every_other_byte_and_comment(fitted):
    path, _, _, _, _, result = fitted
    rubric = write_calibration(path, result.block)
    text = path.read_text()
    assert text.startswith(NOUL_RUBRIC)  # comments, inline comments, flow maps, sequence indentation
    assert text.count("# Fitted by `seams calibrate`") == 1
    assert rubric.calibration.model == "synth-1" and rubric.calibration.n == 600
    assert rubric.hash == Rubric.loads(NOUL_RUBRIC).hash  # calibration is not part of the rubric's identity
    again = write_calibration(path, result.block.model_copy(update={"n": 601}))  # a refit replaces it in place
    text2 = path.read_text()
    assert text2.startswith(NOUL_RUBRIC) and text2.count("\ncalibration:") == 1
    assert text2.count("# Fitted by") == 1 and again.calibration.n == 601


def test_replacing_a_block_keeps_keys_and_comments_after_it():
    block_text = NOUL_RUBRIC.replace("policy:", "calibration:\n  model: old\n\n# how answers become outcomes\npolicy:", 1)
    # an old, invalid-to-apply block sits between questions and policy; only its lines change
    from seams.rubric.calibration import CalibrationBlock

    blk = CalibrationBlock(model="m-2", fitted_at="2026-01-01T00:00:00Z", data_hash="d", n=3, policy_fingerprint="x")
    out = with_block(block_text, blk)
    before, _, after = block_text.partition("calibration:\n  model: old\n")
    assert out.startswith(before) and out.endswith(after) and after.startswith("\n# how answers become")
    assert "model: m-2" in out and "model: old" not in out


def test_the_written_block_is_what_the_policy_applies(fitted):
    path, _, _, judge, _, result = fitted
    rubric = write_calibration(path, result.block)
    t = rubric.calibration.thresholds["flag"]
    assert t.method == "cost" and t.params["costs"] == {"act": 4.0, "refuse": 1.0, "review": 0.3}
    cal = rubric.calibration.questions["flag"].calibrator
    assert cal.method in ("platt", "isotonic")
    state = {"text": "x", "p": 0.8}
    decision = rubric.decide(state, judge=judge)
    assert decision.calibrated
    expected_p = cal.apply_p(judge.ask(state, rubric.questions)["flag"].noul)
    assert decision.probability == pytest.approx(expected_p)
    assert decision.threshold in (t.high, t.low)


def test_staleness_after_a_wording_a_model_or_a_policy_change(fitted):
    path, _, ds, judge, run, result = fitted
    rubric = write_calibration(path, result.block)
    assert rubric.stale_reasons("synth-1") == []
    assert check_calibration(rubric, ds, run).ok
    assert "fitted on model 'synth-1', running on 'other'" in rubric.stale_reasons("other")[0]
    text = path.read_text()
    reworded = Rubric.loads(text.replace("Does the `text` raise a flag?", "Does the `text` raise any flag?"))
    assert reworded.stale_reasons("synth-1") == ["question 'flag' changed wording since it was fitted"]
    repolicied = Rubric.loads(text.replace("else: block", "else: next"))
    assert repolicied.stale_reasons("synth-1") == ["the policy changed since it was fitted"]
    for stale in (reworded, repolicied):
        out = check_calibration(stale, ds, run)
        assert not out.ok and out.findings[0].where == "stale"
    other = run_set(ds, SynthJudge(k=2.0, b=0.4, model="synth-2"))
    out = check_calibration(rubric, ds, other)
    assert not out.ok and "running on 'synth-2'" in out.findings[0].message
    with pytest.warns(UserWarning, match="stale and was not applied"):
        assert not reworded.decide({"text": "x", "p": 0.5}, judge=judge).calibrated


def test_check_passes_unchanged_and_fails_when_the_judge_drifts_under_the_same_id(fitted):
    path, _, ds, _, run, result = fitted
    rubric = write_calibration(path, result.block)
    out = check_calibration(rubric, ds, run)
    assert out.ok, [f.message for f in out.findings if f.level == "fail"]
    assert any("McNemar" in f.message for f in out.findings)
    drifted = run_set(ds, SynthJudge(k=2.0, b=-2.5))  # same model id, answers lean to "no"
    out = check_calibration(rubric, ds, drifted)
    assert not out.ok
    fails = " | ".join(f.message for f in out.findings if f.level == "fail")
    assert "answers flipped significantly" in fails and "beyond its stored interval" in fails


def test_check_on_a_new_sample_from_the_same_judge_passes(fitted):
    path, _, _, judge, _, result = fitted
    rubric = write_calibration(path, result.block)
    fresh = loads_jsonl(jsonl(noul_items(600, seed=99)), rubric.questions)
    out = check_calibration(rubric, fresh, run_set(fresh, judge))
    assert any("differs from the fitted one" in f.message for f in out.findings)
    assert out.ok, [f.message for f in out.findings if f.level == "fail"]


def test_choices_get_a_temperature_and_rules_read_their_winner(tmp_path):
    path = tmp_path / "route.yaml"
    path.write_text("""\
name: route
state: {fields: {text: t, dist: d}}
questions:
  kind:
    type: choice
    criteria: [billing, technical, sales]
policy:
  outcomes: {route: act}
  rules:
    - id: route
      choice: kind
      high: 0.6
      then: route
  default: review
""")
    rubric = Rubric.load(path)
    ds = loads_jsonl(jsonl(choice_items(500, ["billing", "technical", "sales"], seed=1)), rubric.questions)
    judge = SynthJudge(k=3.0)  # reports the true distribution cubed: overconfident
    result = fit_calibration(rubric, ds, run_set(ds, judge), FitOptions(method="target", target=0.15, n_boot=50))
    cal = result.block.questions["kind"].calibrator
    assert cal.method == "temperature" and cal.temperature == pytest.approx(3.0, rel=0.25)
    q = result.questions["kind"]
    assert q.after["ece"] < q.before["ece"] and q.after["top1"] == q.before["top1"]
    assert result.block.thresholds["route"].method == "target-error"
    written = write_calibration(path, result.block)
    d = written.decide({"text": "x", "dist": {"billing": 0.9, "technical": 0.05, "sales": 0.05}}, judge=judge)
    assert d.calibrated and d.option == "billing"


def test_a_judge_that_always_says_the_same_is_recalibrated_to_the_base_rate():
    rubric = Rubric.loads(NOUL_RUBRIC)
    ds = loads_jsonl(jsonl(noul_items(240, seed=5)), rubric.questions)
    result = fit_calibration(rubric, ds, run_set(ds, FixedJudge({"flag": 0.4})), FitOptions(n_boot=20))
    cal = result.block.questions["flag"].calibrator
    fit_labels = [it.labels["flag"] for it in ds.items if it.id in result.fit_ids]
    assert cal.apply_p(0.4) == pytest.approx(sum(fit_labels) / len(fit_labels), abs=0.01)


@pytest.mark.parametrize("name", [n for n in builtin_names() if Rubric.builtin(n).calibration is not None])
def test_every_shipped_calibration_block_round_trips_byte_for_byte(name):
    """Reading a shipped block into its models and writing it back changes no byte of the file."""
    path = builtin_path(name)
    text = path.read_text(encoding="utf-8")
    rubric = Rubric.load(path)
    assert with_block(text, rubric.calibration, str(path)) == text


def test_a_misspelt_stored_key_is_a_load_error_not_a_silent_pass(fitted):
    """A stored section under a wrong name used to be ignored, and every check on it skipped."""
    path, *_, result = fitted
    write_calibration(path, result.block)
    text = path.read_text()
    assert "        heldout:\n          before:" in text
    path.write_text(text.replace("        heldout:\n          before:", "        held_out:\n          before:", 1))
    with pytest.raises(RubricError) as err:
        Rubric.load(path)
    assert "held_out" in str(err.value) and str(path) in str(err.value)


def test_a_misspelt_metric_name_in_code_raises():
    with pytest.raises(KeyError, match="acuracy"):
        QuestionMetrics(accuracy=0.9).value("acuracy")  # type: ignore[arg-type]
    with pytest.raises(KeyError, match="eec"):
        QuestionMetrics().interval("eec")  # type: ignore[arg-type]


def test_check_fails_when_the_stored_metrics_are_missing(fitted):
    """Nothing to compare against is a failed check, never a pass."""
    path, _, ds, _, run, result = fitted
    bare = result.block.model_copy(update={
        "questions": {q: qc.model_copy(update={"metrics": QuestionMeasured()}) for q, qc in result.block.questions.items()},
        "thresholds": {r: t.model_copy(update={"metrics": RuleMeasured()}) for r, t in result.block.thresholds.items()},
    })
    rubric = write_calibration(path, bare)
    out = check_calibration(rubric, ds, run)
    fails = [f for f in out.findings if f.level == "fail"]
    assert not out.ok
    assert {f.where for f in fails} == set(bare.questions) | {f"rule {r}" for r in bare.thresholds}
    assert all("stores no held-out metrics" in f.message for f in fails)
