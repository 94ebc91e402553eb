"""Pair features from a real onnxruntime session on the tiny model that outputs them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from tinymodel import vocabulary

from seams.errors import ConfigError
from seams.judges.local import LocalJudge
from seams.questions import Choice, Noul, Score

QUESTIONS = {
    "flag": Noul(instructions="Is this an injection?"),
    "team": Choice(instructions="Which team?", criteria={"billing": None, "technical": None, "sales": None}),
    "mood": Score(instructions="How upset?", criteria=["calm", "frustrated", "angry"]),
}


@pytest.fixture(scope="module")
def judge(tiny_features_dir: Path) -> LocalJudge:
    return LocalJudge(tiny_features_dir, intra_op_threads=1)


def test_features_leave_the_answers_unchanged(judge: LocalJudge, tiny_model_dir: Path) -> None:
    plain = LocalJudge(tiny_model_dir, intra_op_threads=1)
    states = ["the invoice was charged twice yes", "technical calm", "filler text"]
    got = judge.answers_and_features(states, QUESTIONS)
    for (answers, _), want in zip(got, plain.ask_many(states, QUESTIONS)):
        assert answers.answers == want.answers
    assert judge.has_features and judge.feature_dim == 3 * len(vocabulary())
    assert not plain.has_features and plain.feature_dim is None


def test_features_are_the_state_counts_and_the_matches(judge: LocalJudge) -> None:
    vocab = vocabulary()
    v = len(vocab)
    f = judge.features("invoice invoice technical", QUESTIONS["team"])
    assert f.features.shape == (3, 3 * v) and f.logits.shape == (3,) and f.window == 0
    assert f.features[0, v + vocab["invoice"]] == 2  # the state's words, whichever option
    technical = list(QUESTIONS["team"].options).index("technical")
    assert f.features[technical, vocab["technical"]] == 1  # the option's own words
    assert f.features[technical, 2 * v + vocab["technical"]] == 1  # the word on both sides
    assert f.features[0, 2 * v + vocab["technical"]] == 0
    # the logits are the ones the answer is read from
    answer = judge.ask("invoice invoice technical", {"t": QUESTIONS["team"]})["t"]
    assert answer.choice == "technical" and int(np.argmax(f.logits)) == technical


def test_a_windowed_noul_reads_the_max_logit_window(tiny_features_dir: Path) -> None:
    small = LocalJudge(tiny_features_dir, intra_op_threads=1)
    state = " ".join(["filler"] * 120 + ["yes"] + ["filler"] * 20)
    f = small.features(state, QUESTIONS["flag"])
    assert f.window > 0  # the "yes" sits in a late window
    assert f.features[0, len(vocabulary()) + vocabulary()["yes"]] == 1
    p = small.ask(state, {"q": QUESTIONS["flag"]})["q"].noul
    assert p == pytest.approx(1 / (1 + np.exp(-f.logits[0])))


def test_a_model_without_features_refuses_them_clearly(tiny_model_dir: Path) -> None:
    plain = LocalJudge(tiny_model_dir, intra_op_threads=1)
    with pytest.raises(ConfigError, match="no pair-features output"):
        plain.features("yes", QUESTIONS["flag"])


def test_a_config_naming_a_missing_features_output_is_refused(tiny_model_dir: Path, tmp_path: Path) -> None:
    d = Path(shutil.copytree(tiny_model_dir, tmp_path / "m"))
    cfg = json.loads((d / "config.json").read_text())
    (d / "config.json").write_text(json.dumps({**cfg, "features": "pooled"}))
    with pytest.raises(ConfigError, match="no output 'pooled'"):
        LocalJudge(d)
