"""The pytest plugin (seams/pytest_plugin.py), run inside pytest's own `pytester`: its fixtures
against the tiny ONNX model, cassettes recorded once and replayed with no model at all, and the
assertions failing with messages that name the items. The rubric is calibrated for real with
`seams calibrate` on the tiny model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gate_rubric import gate_text
from tinymodel import write_tiny_model
from typer.testing import CliRunner

from seams.cli import _register, app

_register()
pytest_plugins = ["pytester"]

RUBRIC = gate_text("plugin-gate")


def _items() -> list[dict]:
    """"yes" texts agree, "no" texts do not, plain texts mostly do not (the tiny model reads
    them at about 0.27): the model is right on nearly all of them."""
    out = []
    for i in range(80):
        out.append({"id": f"yes{i}", "state": f"yes it is {i}", "labels": {"agreed": True}})
        out.append({"id": f"no{i}", "state": f"no it is not {i}", "labels": {"agreed": False}})
    for i in range(80):
        out.append({"id": f"plain{i}", "state": f"the ticket text {i}", "labels": {"agreed": i % 10 == 0}})
    return out


@pytest.fixture(scope="module")
def calibrated(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("plugin")
    rubric, data = root / "gate.yaml", root / "set.jsonl"
    rubric.write_text(RUBRIC)
    data.write_text("".join(json.dumps(it) + "\n" for it in _items()))
    res = CliRunner().invoke(app, ["calibrate", str(rubric), str(data), "--model-dir", str(tiny_model_dir),
                                   "--no-cache", "--quiet", "--bootstrap", "100"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "calibration:" in rubric.read_text()
    # the same model id, re-exported with a hypothesis template that reads every text as agreeing
    # more: what a silently changed model behind an unchanged id looks like
    drifted = write_tiny_model(root / "drifted", config_overrides={
        "templates": {"noul": "contradiction contradiction {instructions}"}})
    return {"rubric": rubric, "data": data, "model": tiny_model_dir, "drifted": drifted, "root": root}


TEST_HOLDS = """
from seams.pytest_plugin import assert_calibration_holds, assert_error_rate

def test_holds(seams_judge):
    assert_calibration_holds({rubric!r}, {data!r}, seams_judge)

def test_error_rate_bound(seams_judge):
    assert_error_rate({rubric!r}, {data!r}, seams_judge, at_most={bound})
"""


def test_a_calibrated_rubric_holds_on_the_model_it_was_fitted_on(pytester: pytest.Pytester, calibrated):
    pytester.makepyfile(TEST_HOLDS.format(rubric=str(calibrated["rubric"]), data=str(calibrated["data"]), bound=0.2))
    result = pytester.runpytest("--seams-model-dir", str(calibrated["model"]))
    result.assert_outcomes(passed=2)


def test_a_changed_model_behind_the_same_id_fails_naming_the_flipped_items(pytester: pytest.Pytester, calibrated):
    pytester.makepyfile(TEST_HOLDS.format(rubric=str(calibrated["rubric"]), data=str(calibrated["data"]), bound=0.05))
    result = pytester.runpytest("--seams-model-dir", str(calibrated["drifted"]))
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    assert "calibration of rubric 'plugin-gate' does not hold on 240 items" in out
    assert "answers flipped significantly against the stored run" in out
    # the flipped items are named, with their stored and current answers
    result.stdout.fnmatch_lines(["*plain1: no -> yes*", "*... and * more*"])
    # the bound: the plain texts are now acted on, and each wrong one is named with its number
    result.stdout.fnmatch_lines(["*rule agreed: * wrong of * automated decisions (error rate * > 0.05)*",
                                 "*plain1: p = * >= high *, labelled False*"])


def test_a_reworded_question_is_stale(pytester: pytest.Pytester, calibrated):
    reworded = calibrated["root"] / "reworded.yaml"
    reworded.write_text(calibrated["rubric"].read_text().replace("Does the text agree?", "Does the text say yes?"))
    pytester.makepyfile(TEST_HOLDS.format(rubric=str(reworded), data=str(calibrated["data"]), bound=1.0))
    result = pytester.runpytest("--seams-model-dir", str(calibrated["model"]), "-k", "holds")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*stale: question 'agreed' changed wording since it was fitted*"])


TEST_CASSETTE = """
import pytest
from seams import Rubric

@pytest.mark.parametrize("text", ["yes it is", "no it is not"])
def test_gate(seams_cassette, text):
    judge = seams_cassette()
    decision = Rubric.load({rubric!r}).decide(text, judge=judge)
    assert decision.outcome == ("go" if text.startswith("yes") else "stop")
    assert judge.mode == {mode!r}
"""


def test_cassettes_record_once_then_replay_with_no_model(pytester: pytest.Pytester, calibrated):
    rubric = str(calibrated["rubric"])
    pytester.makepyfile(test_gate=TEST_CASSETTE.format(rubric=rubric, mode="replay"))
    missing = pytester.runpytest()
    missing.assert_outcomes(failed=2)
    missing.stdout.fnmatch_lines(["*cassette *test_gate*yes_it_is*.jsonl does not exist*--seams-record=new*"])

    pytester.makepyfile(test_gate=TEST_CASSETTE.format(rubric=rubric, mode="auto"))
    pytester.runpytest("--seams-record=new", "--seams-model-dir", str(calibrated["model"])).assert_outcomes(passed=2)
    recorded = sorted((pytester.path / "cassettes" / "test_gate").glob("*.jsonl"))
    assert [p.name for p in recorded] == ["test_gate_no_it_is_not.jsonl", "test_gate_yes_it_is.jsonl"]
    assert all(len(p.read_text().splitlines()) == 1 for p in recorded)

    # offline: the model directory is gone and replay needs none
    pytester.makepyfile(test_gate=TEST_CASSETTE.format(rubric=rubric, mode="replay"))
    pytester.runpytest("--seams-model-dir", str(pytester.path / "no-such-model")).assert_outcomes(passed=2)
