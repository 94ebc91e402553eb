"""Reading the state once (`LocalJudge(reading="once")`, `seams.judges.local.towers`): the shipped
model's towers heads, the file format's checks, and how questions are routed between the heads
and the cross-encoder."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from seams.errors import ConfigError
from seams.judges.local import LocalJudge, shipped_model_dir
from seams.judges.local.towers import FEATURES, TowerHead, Towers, pair_features, segments
from seams.questions import Choice, Noul, Score
from tests.tinymodel import write_tiny_model

TICKET = ("Hi, I was charged twice for my March invoice (order 4471) and the refund I was promised "
          "last week still has not arrived. Please fix this today or I will dispute the charge.")
NOULS = {
    "refund": Noul(instructions="Is the customer asking for money back?"),
    "invoice": Noul(instructions="Is the message about an invoice?"),
    "angry": Noul(instructions="Is the customer angry?"),
    "today": Noul(instructions="Does the customer need an answer today?"),
}
TOPIC = Choice(instructions="What is the ticket about?",
               criteria={"billing": "charges, invoices, refunds", "shipping": "deliveries and parcels",
                         "login": "passwords and access to the account"})
URGENCY = Score(instructions="How urgent is the ticket?", criteria=["no hurry", "this week", "today"])


@pytest.fixture(scope="module")
def once() -> LocalJudge:
    if not (shipped_model_dir() / "towers.npz").exists():
        pytest.skip("the shipped model has no towers.npz")
    return LocalJudge(reading="once", intra_op_threads=1)


def test_the_once_reading_names_its_own_model(once, shipped_judge) -> None:
    assert once.model_id.startswith(shipped_judge.model_id + "+once:")
    assert once.model_id != shipped_judge.model_id
    answers = once.ask(TICKET, {"topic": TOPIC})
    assert answers.model == once.model_id
    assert "reading='once'" in repr(once)


def test_the_obvious_cases_read_once(once) -> None:
    a = once.ask(TICKET, {"topic": TOPIC, "urgency": URGENCY, **NOULS}).answers
    assert a["topic"].choice == "billing"
    assert abs(sum(a["urgency"].probabilities.values()) - 1.0) < 1e-9
    for qid in NOULS:
        assert 0.0 < a[qid].noul < 1.0
    # a refund ticket reads as one more than a question the ticket has nothing to do with
    other = once.ask(TICKET, {"q": Noul(instructions="Is the message a recipe for bread?")}).answers["q"].noul
    assert a["refund"].noul > other


def test_an_answer_read_once_does_not_depend_on_the_questions_asked_beside_it(once) -> None:
    alone = {qid: once.ask(TICKET, {qid: q}).answers[qid] for qid, q in NOULS.items()}
    together = once.ask(TICKET, {**NOULS, "topic": TOPIC, "urgency": URGENCY}).answers
    for qid in NOULS:
        assert together[qid].noul == pytest.approx(alone[qid].noul, abs=1e-6)


def test_the_kth_question_adds_no_model_run(once, shipped_judge) -> None:
    """Cost in model runs, planned (no clock): reading once, k Nouls about one state take the
    same encoder runs whatever k is (the state, and its parts when the Noul head reads them);
    the cross-encoder takes one run per question."""
    parts = len(segments(TICKET)) if once._towers.heads["noul"].reads_segments else 0
    for k in range(1, len(NOULS) + 1):
        qs = dict(list(NOULS.items())[:k])
        assert once.cost(TICKET, qs) == (1, 1 + parts)
        assert shipped_judge.cost(TICKET, qs) == (1, k)


def test_a_noul_relating_two_fields_is_still_read_by_the_cross_encoder(once, shipped_judge) -> None:
    state = {"claim": "The invoice was paid on 3 March.", "record": "Invoice 4471: unpaid, overdue since March."}
    rel = Noul(instructions="Does the `record` contradict the `claim`?")
    qs = {"rel": rel, "topic": TOPIC}
    got, want = once.ask(state, qs).answers, shipped_judge.ask(state, qs).answers
    assert got["rel"].noul == want["rel"].noul  # the same cross-encoder run
    assert got["topic"].probabilities != want["topic"].probabilities  # the heads, not the cross-encoder
    windows, runs = once.cost(state, qs)
    assert (windows, runs) == (1, 2)  # one pair for the relational Noul, one encoder run for the state


def test_a_long_state_is_read_in_windows_and_a_noul_takes_the_best(once) -> None:
    filler = "The weather report for the week says rain on most days and wind on the coast. " * 40
    state = filler + TICKET
    answers = once.ask(state, {"refund": NOULS["refund"]})
    a = answers.answers["refund"]
    assert a.x_windows is not None and a.x_windows > 1
    assert answers.windows == a.x_windows
    # the max over windows: at least what the window holding the ticket gives on its own
    assert a.noul >= once.ask(filler[:400], {"refund": NOULS["refund"]}).answers["refund"].noul


def test_reading_once_refuses_what_it_cannot_do(once, tmp_path) -> None:
    with pytest.raises(ConfigError, match="reading must be one of 'pairs', 'once'"):
        LocalJudge(reading="twice")
    tiny = write_tiny_model(tmp_path / "tiny", features=True, encoder=True)
    with pytest.raises(ConfigError, match="has no towers"):
        LocalJudge(tiny, reading="once")
    with pytest.raises(ConfigError, match="pair features come from the cross-encoder"):
        once.answers_and_features([TICKET], {"q": NOULS["refund"]})


def _copy_model(tmp_path: Path) -> Path:
    """The shipped model directory, its graphs linked rather than copied (they are 70 MB)."""
    d = tmp_path / "model"
    shutil.copytree(shipped_model_dir(), d, ignore=shutil.ignore_patterns("*.onnx"))
    for graph in shipped_model_dir().glob("*.onnx"):
        (d / graph.name).symlink_to(graph)
    return d


def test_towers_fitted_on_another_encoder_are_refused(once, tmp_path) -> None:
    towers = Towers.load(shipped_model_dir() / "towers.npz")
    other = tmp_path / "towers.npz"
    Towers(towers.heads, towers.ref_u, towers.ref_h, "0" * 64, towers.meta).save(other)
    with pytest.raises(ConfigError, match="fitted on an encoder with sha256 000000000000"):
        Towers.load(other, shipped_model_dir() / "encoder.onnx")
    model = _copy_model(tmp_path)
    shutil.copy(other, model / "towers.npz")
    with pytest.raises(ConfigError, match="refit them"):
        LocalJudge(model, reading="once")


def test_a_damaged_towers_file_is_a_config_error_naming_it(tmp_path) -> None:
    bad = tmp_path / "towers.npz"
    bad.write_bytes(b"not an npz")
    with pytest.raises(ConfigError, match="towers.npz: not a towers file"):
        Towers.load(bad)
    towers = Towers.load(shipped_model_dir() / "towers.npz")
    Towers({k: h for k, h in towers.heads.items() if k != "score"}, towers.ref_u, towers.ref_h,
           towers.encoder_sha256, towers.meta).save(bad)
    with pytest.raises(ConfigError, match="no head for score questions"):
        Towers.load(bad)
    # a pickled object array is never loaded
    np.savez(bad, meta=np.array([{"format": "seams.towers/1"}], dtype=object))
    with pytest.raises(ConfigError, match="not a towers file"):
        Towers.load(bad)


def test_a_model_naming_a_missing_towers_file_is_refused(tmp_path) -> None:
    model = _copy_model(tmp_path)
    (model / "towers.npz").unlink()
    with pytest.raises(ConfigError, match="towers.npz: missing"):
        LocalJudge(model)
    config = json.loads((model / "config.json").read_text())
    del config["encoder"], config["blend"], config["shortlist"]
    (model / "config.json").write_text(json.dumps(config))
    with pytest.raises(ConfigError, match="towers: needs an encoder"):
        LocalJudge(model)


def test_the_shipped_towers_match_the_shipped_encoder_and_round_trip(tmp_path) -> None:
    from seams.judges.local import read_model_dir

    path = shipped_model_dir() / "towers.npz"
    encoder = read_model_dir(shipped_model_dir()).towers_encoder_path
    assert encoder is not None
    towers = Towers.load(path, encoder)
    assert towers.encoder_sha256 == hashlib.sha256(encoder.read_bytes()).hexdigest()
    assert set(towers.heads) == {"noul", "choice", "score"}
    assert towers.meta["fitted_on"]["split"] == "train"
    copy = tmp_path / "towers.npz"
    towers.save(copy)
    again = Towers.load(copy)
    assert again.digest == towers.digest  # the same bytes: saving is deterministic
    rng = np.random.default_rng(0)
    u, h = rng.normal(size=384).astype(np.float32), rng.normal(size=(3, 384)).astype(np.float32)
    for kind in ("choice", "score"):
        assert np.array_equal(towers.logits(kind, u, h, h, h[:2]), again.logits(kind, u, h, h, h[:2]))


def test_pair_features_by_hand() -> None:
    u = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    h = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], dtype=np.float32)
    o = np.array([[0.6, 0.8, 0.0], [0.0, 0.0, 1.0]], dtype=np.float32)
    ref_u, ref_h = np.array([0.5, 0.5, 0.0]), np.array([0.0, 0.5, 0.5])
    x = pair_features("choice", u, h, o, FEATURES["ctr"], ref_u, ref_h)
    # cos_o [0.6, 0] and relative to their mean; cos_h [1, 0] likewise; ctr: cos_h - h·ref_u,
    # cos_h - u·ref_h, both; then the zeros a non-Score pads with
    np.testing.assert_allclose(x[0], [0.6, 0.3, 1.0, 0.5, 0.5, 1.0, 0.5, 0, 0, 0], atol=1e-6)
    np.testing.assert_allclose(x[1], [0.0, -0.3, 0.0, -0.5, -0.5, 0.0, -0.5, 0, 0, 0], atol=1e-6)
    noul = pair_features("noul", u, h[:1], o[:1], FEATURES["cos"])
    np.testing.assert_allclose(noul[0], [0.6, 0.0, 1.0, 0.0, 0, 0, 0], atol=1e-6)
    seg = pair_features("score", u, h, o, FEATURES["seg"], ref_u, ref_h, seg=np.stack([u, h[1]]))
    assert seg.shape == (2, 2 + 2 + 3 + 5 + 3)
    np.testing.assert_allclose(seg[:, -3], [0.0, 1.0])  # where each level sits on the ladder
    with pytest.raises(ValueError, match="unknown feature block"):
        pair_features("noul", u, h[:1], o[:1], ("nope",))


def test_a_head_with_a_hidden_layer_scores_as_written() -> None:
    rng = np.random.default_rng(1)
    d = 4
    head = TowerHead("cos", np.zeros(d, np.float32), np.ones(d, np.float32), rng.normal(size=d).astype(np.float32),
                     0.5, rng.normal(size=(d, 3)).astype(np.float32), np.zeros(3, np.float32),
                     rng.normal(size=3).astype(np.float32))
    x = rng.normal(size=(2, d)).astype(np.float32)
    assert head.W is not None and head.w is not None
    want = x @ head.w0 + 0.5 + np.maximum(x @ head.W, 0) @ head.w
    np.testing.assert_allclose(head.score(x), want, rtol=1e-5)


def test_segments_split_fields_and_long_sentences() -> None:
    assert segments("one line") == ["one line"]
    assert segments("a: 1\nb:\n  - x\n  - y") == ["a: 1", "b:\n  - x\n  - y"]
    long = "First sentence here. " * 12
    assert len(segments(long)) == 12 and all(s.startswith("First") for s in segments(long))


def test_the_cli_reads_once_with_judge_local_once(once) -> None:
    from typer.testing import CliRunner

    from seams.cli import _register, app

    _register()
    r = CliRunner().invoke(app, ["ask", "-q", "Which team?", "--options", "billing,shipping", "--state",
                                 "I was charged twice on my invoice", "--judge", "local-once", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["model"] == once.model_id and data["answers"]["q"]["choice"] == "billing"
    bad = CliRunner().invoke(app, ["ask", "-q", "Is it?", "--state", "x", "--judge", "local-twice"])
    assert bad.exit_code != 0 and "'local-once'" in bad.output


def _tiny_with_own_tower(tmp_path: Path) -> tuple[Path, Towers]:
    """The tiny model with an encoder, and towers that read an encoder of their own: the tiny
    encoder's graph with another epsilon (other bytes, the same inputs and output)."""
    import onnx
    from onnx import numpy_helper

    d = write_tiny_model(tmp_path / "tiny", features=True, encoder=True)
    graph = onnx.load(str(d / "encoder.onnx"))
    for init in graph.graph.initializer:
        if init.name == "eps":
            init.CopyFrom(numpy_helper.from_array(np.array(2e-6, dtype=np.float32), "eps"))
    onnx.save(graph, str(d / "towers_encoder.onnx"))
    dim = 7  # the "cos" block: cos_o, cos_h (2 each) and the 3 a type pads with
    w0 = np.array([1, 0, 1, 0, 0, 0, 0], dtype=np.float32)
    heads = {k: TowerHead("cos", np.zeros(dim, np.float32), np.ones(dim, np.float32), w0, 0.0)
             for k in ("noul", "choice", "score")}
    sha = hashlib.sha256((d / "towers_encoder.onnx").read_bytes()).hexdigest()
    towers = Towers(heads, np.zeros(4, np.float32), np.zeros(4, np.float32), sha, {"fitted_on": {"split": "none"}})
    towers.save(d / "towers.npz")
    config = json.loads((d / "config.json").read_text())
    config["towers"] = {"file": "towers.npz", "encoder": "towers_encoder.onnx"}
    (d / "config.json").write_text(json.dumps(config))
    return d, towers


def test_towers_may_read_an_encoder_of_their_own(tmp_path) -> None:
    """A tower trained to read questions can sit beside the base encoder the blend reads: the heads
    are checked against, and embed with, the encoder `towers.encoder` names."""
    d, towers = _tiny_with_own_tower(tmp_path)
    judge = LocalJudge(d, reading="once")
    assert judge.model_id.endswith("+once:" + Towers.load(d / "towers.npz").digest)

    got = judge.ask("yes it is true", {"q": Noul(instructions="Is this true?")}).answers["q"].noul
    enc = judge._tower_encoder
    assert enc is not None and enc.path.name == "towers_encoder.onnx"
    from seams.judges.local.hypotheses import hypotheses

    u, h = enc.embed(["yes it is true"])[0], enc.embed(hypotheses(Noul(instructions="Is this true?")))[0]
    assert got == pytest.approx(1 / (1 + np.exp(-2 * float(h @ u))), abs=1e-6)
    # heads fitted on the model's own encoder are refused here: they do not read it
    other = hashlib.sha256((d / "encoder.onnx").read_bytes()).hexdigest()
    Towers(towers.heads, towers.ref_u, towers.ref_h, other, towers.meta).save(d / "towers.npz")
    with pytest.raises(ConfigError, match="towers_encoder.onnx is"):
        LocalJudge(d, reading="once")
    (d / "towers_encoder.onnx").unlink()
    with pytest.raises(ConfigError, match="towers_encoder.onnx: missing; .* towers' encoder file"):
        LocalJudge(d)
