"""The encoder blend: the sentence encoder's cosine of each option's own text with the state,
mixed into the cross-encoder's logits per question type (`config.blend`), on real onnxruntime
sessions of the tiny model and its tiny encoder (a unit-length bag of words, so a cosine is the
word overlap a test can compute by hand)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from tinymodel import write_tiny_model

from seams.errors import ConfigError
from seams.judges.local import LocalJudge
from seams.judges.local.hypotheses import option_texts
from seams.judges.local.judge import FLOOR_READING
from seams.questions import Choice, Noul, Score

# words with no weight in the tiny cross-encoder: it cannot tell these options apart
TEAM = Choice(instructions="Which team?", criteria={"one": "invoice charged twice", "two": "ticket question customer"})
LEVEL = Score(instructions="How much?", criteria=["filler text", "invoice charged twice", "word"])
YES = Noul(instructions="Is it true?")


def _judge(root: Path, blend: dict | None, **kw) -> LocalJudge:
    overrides = {"blend": blend} if blend is not None else {}
    return LocalJudge(write_tiny_model(root, encoder=True, config_overrides=overrides, **kw), intra_op_threads=1)


def _bag_cosine(a: str, b: str) -> float:
    """The tiny encoder's cosine, by hand: the overlap of the two texts' known words."""
    from tinymodel import SPECIALS, vocabulary

    words = [w for w in vocabulary() if w not in SPECIALS]
    ca, cb = (np.array([re.findall(r"[a-z]+", s.lower()).count(w) for w in words], dtype=float) for s in (a, b))
    return float(ca @ cb / math.sqrt((ca @ ca) * (cb @ cb)))


def test_a_choice_follows_the_cosine_the_cross_encoder_cannot_see(tmp_path: Path) -> None:
    plain = _judge(tmp_path / "plain", None)
    blended = _judge(tmp_path / "blend", {"choice": {"logit": 1.0, "cosine": 8.0}})
    state = "the invoice was charged twice"
    before = plain.ask(state, {"t": TEAM}).answers["t"]
    assert before.probabilities["one"] == pytest.approx(0.5)  # the cross-encoder alone: a coin
    after = blended.ask(state, {"t": TEAM}).answers["t"]
    assert after.choice == "one"
    cos = [_bag_cosine(t, state) for t in option_texts(TEAM)]
    assert option_texts(TEAM) == ["one: invoice charged twice", "two: ticket question customer"]
    want = np.exp(8.0 * np.array(cos))
    assert after.probabilities["one"] == pytest.approx(float(want[0] / want.sum()), abs=1e-5)


def test_only_the_blended_types_change(tmp_path: Path) -> None:
    plain = _judge(tmp_path / "plain", None)
    blended = _judge(tmp_path / "blend", {"choice": {"cosine": 8.0}})
    state = "yes, the invoice was charged twice"
    qs = {"y": YES, "s": LEVEL, "t": TEAM}
    a, b = plain.ask(state, qs).answers, blended.ask(state, qs).answers
    assert a["y"] == b["y"] and a["s"] == b["s"] and a["t"] != b["t"]


def test_a_score_blend_and_a_noul_scaling(tmp_path: Path) -> None:
    blended = _judge(tmp_path / "blend", {"score": {"logit": 0.0, "cosine": 20.0}, "noul": {"logit": 0.5, "bias": 1.0}})
    plain = _judge(tmp_path / "plain", None)
    state = "the invoice was charged twice"
    got = blended.ask(state, {"s": LEVEL, "y": YES}).answers
    assert got["s"].score == pytest.approx(1.0, abs=0.01)  # the level whose words the state repeats
    raw = plain.ask(state, {"y": YES}).answers["y"].noul
    logit = math.log(raw / (1 - raw))
    assert got["y"].noul == pytest.approx(1 / (1 + math.exp(-(0.5 * logit + 1.0))), abs=1e-6)


def test_many_states_at_once_answer_as_one_at_a_time(tmp_path: Path) -> None:
    judge = _judge(tmp_path / "blend", {"choice": {"cosine": 8.0}, "score": {"cosine": 3.0}})
    states = ["the invoice was charged twice", "a ticket question from the customer", "filler text", "word"]
    qs = {"t": TEAM, "s": LEVEL}
    assert [a.answers for a in judge.ask_many(states, qs)] == [judge.ask(s, qs).answers for s in states]


def test_features_carry_the_blended_logits(tmp_path: Path) -> None:
    judge = _judge(tmp_path / "blend", {"choice": {"logit": 0.5, "cosine": 8.0}}, features=True)
    state = "the invoice was charged twice"
    (answers, feats), = judge.answers_and_features([state], {"t": TEAM})
    z = feats["t"].logits
    p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    assert answers.answers["t"].probabilities["one"] == pytest.approx(float(p[0]), abs=1e-6)


def test_features_carry_the_model_s_own_logits_beside_the_blended_ones(tmp_path: Path) -> None:
    blended = _judge(tmp_path / "blend", {"choice": {"logit": 0.5, "cosine": 8.0, "bias": 0.25}}, features=True)
    plain = _judge(tmp_path / "plain", None, features=True)
    state = "the invoice was charged twice"
    (_, feats), = blended.answers_and_features([state], {"t": TEAM, "y": YES})
    (_, bare), = plain.answers_and_features([state], {"t": TEAM, "y": YES})
    # the blend is undone by model_logits: what training/blend.py fits a new blend on
    np.testing.assert_allclose(feats["t"].model_logits, bare["t"].logits, atol=1e-6)
    cos = np.array([_bag_cosine(t, state) for t in option_texts(TEAM)])
    np.testing.assert_allclose(feats["t"].logits, 0.5 * feats["t"].model_logits + 8.0 * cos + 0.25, atol=1e-4)
    np.testing.assert_array_equal(feats["y"].logits, feats["y"].model_logits)  # Nouls are not blended here


def test_a_blend_is_checked_when_the_model_loads(tmp_path: Path) -> None:
    root = write_tiny_model(tmp_path / "no-encoder", config_overrides={"blend": {"choice": {"cosine": 1.0}}})
    with pytest.raises(ConfigError, match="a non-zero cosine weight needs an encoder"):
        LocalJudge(root)
    root = write_tiny_model(tmp_path / "gone", encoder=True, config_overrides={"blend": {"choice": {"cosine": 1.0}}})
    (root / "encoder.onnx").unlink()
    with pytest.raises(ConfigError, match=r"encoder\.onnx: missing; .* names it as the model's encoder file"):
        LocalJudge(root)
    root = write_tiny_model(tmp_path / "typo", encoder=True, config_overrides={"blend": {"choise": {"cosine": 1.0}}})
    with pytest.raises(ConfigError, match="choise"):
        LocalJudge(root)
    cfg = json.loads((root / "config.json").read_text())
    cfg["blend"] = {"choice": {"cosine": float("nan")}}
    (root / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ConfigError, match="blend"):
        LocalJudge(root)


def _roster() -> Choice:
    from tinymodel import PLAIN_WORDS

    words = PLAIN_WORDS[:12]
    criteria = {f"tool_{k}": f"{words[k % 12]} {words[(k * 5 + 1) % 12]} {words[(k * 7 + 3) % 12]}" for k in range(30)}
    return Choice(instructions="Which tool?", criteria=criteria)


def test_a_long_choice_is_shortlisted_by_cosine(tmp_path: Path) -> None:
    blend = {"choice": {"logit": 1.0, "cosine": 8.0}}
    judge = _judge(tmp_path / "sl", blend, max_length=128, features=True)
    cfg = json.loads((tmp_path / "sl" / "config.json").read_text())
    cfg["shortlist"] = {"above": 24, "keep": 4}
    (tmp_path / "sl" / "config.json").write_text(json.dumps(cfg))
    short = LocalJudge(tmp_path / "sl", intra_op_threads=1)
    full = LocalJudge(tmp_path / "sl", intra_op_threads=1, shortlist=False)
    roster = _roster()
    state = roster.criteria["tool_7"]
    assert short.cost(state, {"t": roster}) == (1, 4) and full.cost(state, {"t": roster}) == (1, 30)
    a, b = short.ask(state, {"t": roster}).answers["t"], full.ask(state, {"t": roster}).answers["t"]
    assert a.choice == b.choice == "tool_7" == judge.ask(state, {"t": roster}).answers["t"].choice
    assert sum(a.probabilities.values()) == pytest.approx(1.0)
    cos = np.array([_bag_cosine(t, state) for t in option_texts(roster)])
    kept = set(np.argsort(-cos, kind="stable")[:4])
    lowest_kept = min(a.probabilities[f"tool_{k}"] for k in kept)
    assert all(a.probabilities[f"tool_{k}"] <= lowest_kept + 1e-9 for k in range(30) if k not in kept)
    # a short Choice, and the features path (heads read every option), are never shortlisted
    assert short.cost(state, {"t": TEAM}) == (1, 2)
    (_, feats), = short.answers_and_features([state], {"t": roster})
    assert feats["t"].features.shape[0] == 30


def test_a_shortlist_needs_a_blended_choice(tmp_path: Path) -> None:
    root = write_tiny_model(tmp_path / "m", encoder=True, config_overrides={
        "blend": {"score": {"cosine": 1.0}}, "shortlist": {"above": 24, "keep": 16}})
    with pytest.raises(ConfigError, match="shortlist: needs an encoder and a blend whose choice cosine"):
        LocalJudge(root)
    root = write_tiny_model(tmp_path / "k", encoder=True, config_overrides={
        "blend": {"choice": {"cosine": 1.0}}, "shortlist": {"above": 8, "keep": 16}})
    with pytest.raises(ConfigError, match=r"keep \(16\) must not exceed above \(8\)"):
        LocalJudge(root)


def test_a_noul_floor_reads_the_hypothesis_cosine(tmp_path: Path) -> None:
    """A Noul blend (the floor under the judge): z = a·logit + b·cos(hypothesis, state) + c."""
    floor = {"logit": 0.5, "cosine": 3.0, "bias": -0.25}
    blended = _judge(tmp_path / "floor", {"noul": floor})
    plain = _judge(tmp_path / "plain", None)
    state = "yes, the invoice was charged twice"
    charged = Noul(instructions="Was the invoice charged twice?")
    raw = plain.ask(state, {"y": charged}).answers["y"].noul
    cos = _bag_cosine(option_texts(charged)[0], state)
    assert cos > 0.5  # the hypothesis shares words with the state, so the blend moves the answer
    want = 1 / (1 + math.exp(-(0.5 * math.log(raw / (1 - raw)) + 3.0 * cos - 0.25)))
    assert blended.ask(state, {"y": charged}).answers["y"].noul == pytest.approx(want, abs=1e-5)
    states = [state, "filler text", "the customer ticket", "word word"]
    assert [a.answers for a in blended.ask_many(states, {"y": charged})] == \
        [blended.ask(s, {"y": charged}).answers for s in states]


def test_cosines_nothing_waits_for_run_on_the_encoder_s_thread(tmp_path: Path, monkeypatch) -> None:
    """A Noul's or a short Choice's cosines run beside the cross-encoder's pairs; a long Choice's
    are needed for its shortlist, so they run first, on the caller's thread."""
    import threading

    judge = _judge(tmp_path / "m", {"noul": {"cosine": 1.0}, "choice": {"cosine": 8.0}}, max_length=128)
    cfg = json.loads((tmp_path / "m" / "config.json").read_text())
    cfg["shortlist"] = {"above": 24, "keep": 4}
    (tmp_path / "m" / "config.json").write_text(json.dumps(cfg))
    judge = LocalJudge(tmp_path / "m", intra_op_threads=1)
    judge._beside = True  # as on a machine with a core beside the cross-encoder's one thread
    encoder = judge.encoder
    assert encoder is not None
    seen: list[str] = []
    run = encoder._run

    def spy(texts):
        seen.append(threading.current_thread().name)
        return run(texts)

    monkeypatch.setattr(encoder, "_run", spy)
    judge.ask("the invoice was charged twice", {"y": YES, "t": TEAM})
    assert seen and all(name.startswith("seams-encoder") for name in seen)
    seen.clear()
    judge.ask("the invoice was charged twice again", {"r": _roster()})
    assert seen == [threading.current_thread().name]
    # where the cross-encoder's threads take every core, the encoder runs in line instead
    seen.clear()
    judge._beside = False
    judge.ask("a new ticket about the invoice", {"y": YES})
    assert seen == [threading.current_thread().name]


def test_an_encoder_failure_on_its_thread_is_the_caller_s_error(tmp_path: Path, monkeypatch) -> None:
    from seams.errors import ModelError

    judge = _judge(tmp_path / "m", {"noul": {"cosine": 1.0}})
    judge._beside = True
    assert judge.encoder is not None

    def broken(texts):
        raise ModelError("encoder.onnx: onnxruntime failed: broken on purpose")

    monkeypatch.setattr(judge.encoder, "_run", broken)
    with pytest.raises(ModelError, match="broken on purpose"):
        judge.ask("the invoice was charged twice", {"y": YES})


def test_k_nouls_about_one_state_embed_it_once(tmp_path: Path, monkeypatch) -> None:
    """The floor costs one encoder run per state, not per question; question texts are embedded
    once per judge (cached by text), so asking them again about a new state embeds only the state."""
    judge = _judge(tmp_path / "m", {"noul": {"logit": 0.5, "cosine": 1.0}})
    assert judge.encoder is not None
    embedded: list[str] = []
    run = judge.encoder._run

    def spy(texts):
        embedded.extend(texts)
        return run(texts)

    monkeypatch.setattr(judge.encoder, "_run", spy)
    qs = {f"q{k}": Noul(instructions=f"Is it {w}?") for k, w in enumerate(["red", "green", "blue", "calm"])}
    judge.ask("the ticket was red", qs)
    assert embedded.count("the ticket was red") == 1 and len(embedded) == 5
    embedded.clear()
    judge.ask("the ticket was blue", qs)
    assert embedded == ["the ticket was blue"]


def test_a_noul_relating_two_named_fields_reads_the_logit_alone(tmp_path: Path) -> None:
    """The floor reads the cosine of a question with what the state is about; a Noul that relates
    two named fields (`noul_relational`, the logit alone by default) is not about that."""
    blended = _judge(tmp_path / "floor", {"noul": {"logit": 1.0, "cosine": 3.0}})
    plain = _judge(tmp_path / "plain", None)
    state = {"claim": "the invoice was charged twice", "source": "yes, the invoice was charged twice"}
    pair = Noul(instructions="Does the `source` support the `claim`?")
    one = Noul(instructions="Was the invoice charged twice, as the `claim` says?")
    got, bare = blended.ask(state, {"p": pair, "o": one}).answers, plain.ask(state, {"p": pair, "o": one}).answers
    assert got["p"].noul == pytest.approx(bare["p"].noul, abs=1e-9)  # untouched by the floor
    def logit(p: float) -> float:
        return math.log(p / (1 - p))

    # one field named: the floor applies (its answers are near 1, so compared as logits)
    assert abs(logit(got["o"].noul) - logit(bare["o"].noul)) > 0.1
    # a named pair the state does not hold is no relation: the floor applies again
    other = {"text": "yes, the invoice was charged twice"}
    assert abs(logit(blended.ask(other, {"p": pair}).answers["p"].noul)
               - logit(plain.ask(other, {"p": pair}).answers["p"].noul)) > 0.1
    # answers cached by the reading before that rule are keyed apart; a model with no floor keeps its id
    assert blended.answer_identity == f"{blended.model_id}|floor-reading:{FLOOR_READING}"
    assert plain.answer_identity == plain.model_id
    # a state with no fields: a question referring to two of its parts in words relates them
    text = "The invoice was charged twice.\nThe invoice was charged once."
    for words, relates in (("Do these two statements contradict each other?", True),
                           ("Does the second text deny what the first text says?", True),
                           ("Did the customer pay first and complain later?", False),
                           ("Was the invoice charged twice?", False)):
        q = {"q": Noul(instructions=words)}
        moved = abs(logit(blended.ask(text, q).answers["q"].noul) - logit(plain.ask(text, q).answers["q"].noul))
        assert (moved < 1e-6) is relates, words
    # and the relational weights are the config's to set
    tuned = _judge(tmp_path / "tuned", {"noul": {"cosine": 3.0}, "noul_relational": {"logit": 2.0}})
    raw = bare["p"].noul
    want = 1 / (1 + math.exp(-2.0 * math.log(raw / (1 - raw))))
    assert tuned.ask(state, {"p": pair}).answers["p"].noul == pytest.approx(want, abs=1e-6)


def test_costing_an_ask_runs_no_encoder_work_it_does_not_need(tmp_path: Path, monkeypatch) -> None:
    judge = _judge(tmp_path / "m", {"noul": {"cosine": 1.0}, "choice": {"cosine": 8.0}})
    assert judge.encoder is not None
    ran: list[str] = []
    run = judge.encoder._run
    monkeypatch.setattr(judge.encoder, "_run", lambda texts: ran.extend(texts) or run(texts))
    assert judge.cost("the invoice was charged twice", {"y": YES, "t": TEAM}) == (1, 3)
    assert ran == []  # neither the Noul's nor the short Choice's cosines decide the plan
