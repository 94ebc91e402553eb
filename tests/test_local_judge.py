"""LocalJudge through real onnxruntime sessions on the tiny model whose logits the tests know.

The tiny model (tests/tinymodel.py) scores logit = -1 + hypothesis word weights + state word
weights + 4 per word that appears on both sides (for the words in MATCH_WEIGHTS). So every
expected probability below is computed by hand from those weights, not read back from the judge.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest
from tinymodel import BIAS, write_tiny_model

from seams.answers import choice_confidence, score_confidence
from seams.errors import ConfigError, InputError, QuestionError, StateError
from seams.judges import Judge
from seams.judges.local import LocalJudge
from seams.judges.local import config as local_config
from seams.judges.local.hypotheses import focus
from seams.judges.local.windows import min_state_tokens, stride
from seams.questions import Choice, Noul, NoulCriteria, Score


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def softmax(xs: list[float], t: float = 1.0) -> list[float]:
    m = max(xs)
    e = [math.exp((x - m) / t) for x in xs]
    return [v / sum(e) for v in e]


@pytest.fixture(scope="module")
def judge(tiny_model_dir: Path) -> LocalJudge:
    return LocalJudge(tiny_model_dir, intra_op_threads=1)


# ---------------------------------------------------------------------------- the mapping


def test_is_a_judge_with_the_models_id(judge: LocalJudge) -> None:
    assert isinstance(judge, Judge)
    assert judge.model_id == "seams-tiny-test"
    assert judge.max_length == 64


def test_noul_is_the_sigmoid_of_the_yes_logit(judge: LocalJudge) -> None:
    a = judge.ask("yes", {"q": Noul(instructions="Is it so?")})
    assert a["q"].noul == pytest.approx(sigmoid(BIAS + 6.0))
    b = judge.ask("no", {"q": Noul(instructions="Is it so?")})
    assert b["q"].noul == pytest.approx(sigmoid(BIAS - 6.0))
    assert a.model == "seams-tiny-test" and a.windows == 1
    assert a.usage.input_tokens > 0 and a.usage.output_tokens == 0


def test_noul_criteria_and_structured_instructions_reach_the_model(judge: LocalJudge) -> None:
    plain = judge.ask("text", {"q": Noul(instructions="Is it so?")})["q"].noul
    assert plain == pytest.approx(sigmoid(BIAS))
    # "favoured" (+2) only in what true means; "contradiction" (+3) only in what false means
    true_side = judge.ask("text", {"q": Noul(instructions="Is it so?", criteria=NoulCriteria(true="favoured"))})
    false_side = judge.ask("text", {"q": Noul(instructions="Is it so?", criteria=NoulCriteria(false="contradiction"))})
    assert true_side["q"].noul == pytest.approx(sigmoid(BIAS + 2))
    assert false_side["q"].noul == pytest.approx(sigmoid(BIAS + 3))
    # object and array instructions are rendered, not dropped
    obj = judge.ask("text", {"q": Noul(instructions={"task": "Is it so?", "hint": ["favoured"]})})
    assert obj["q"].noul == pytest.approx(sigmoid(BIAS + 2))
    # criteria without instructions: the true text becomes the statement
    bare = judge.ask("text", {"q": Noul(criteria=NoulCriteria(true="favoured", false="contradiction"))})
    assert bare["q"].noul == pytest.approx(sigmoid(BIAS + 5))


def test_a_question_naming_two_fields_reads_only_those_fields(judge: LocalJudge) -> None:
    # "yes" (+6) sits in a field neither question below names as one of a pair
    state = {"request": "yes", "sources": "text", "draft": "text"}
    pair = judge.ask(state, {"q": Noul(instructions="Does the `draft` follow from the `sources`?")})
    assert pair["q"].noul == pytest.approx(sigmoid(BIAS))
    # naming one field (or none) the question may lean on the rest, so it sees the whole state
    one = judge.ask(state, {"q": Noul(instructions="Does the `draft` hold?")})
    assert one["q"].noul == pytest.approx(sigmoid(BIAS + 6))
    # naming a field the state lacks: the whole state, never a guess
    missing = judge.ask(state, {"q": Noul(instructions="Does the `draft` follow from the `notes`?")})
    assert missing["q"].noul == pytest.approx(sigmoid(BIAS + 6))
    # the other pair of fields: "no" (-6) in the field left out does not count
    other = {"request": "yes", "sources": "no", "draft": "text"}
    about = Noul(instructions="Is the `draft` about the `request`?")
    assert judge.ask(other, {"q": about})["q"].noul == pytest.approx(sigmoid(BIAS + 6))
    # the named fields keep the state's order, whatever order the question names them in
    assert list(focus(about, other)) == ["request", "draft"]
    assert focus(about, {"draft": "a", "request": "b"}) == {"draft": "a", "request": "b"}


def test_questions_with_different_views_of_one_state_share_a_call(judge: LocalJudge) -> None:
    state = {"request": "yes", "sources": "text", "draft": "text"}
    qs = {"pair": Noul(instructions="Does the `draft` follow from the `sources`?"), "whole": Noul(instructions="Is it so?")}
    both = judge.ask(state, qs)
    assert both["pair"].noul == pytest.approx(sigmoid(BIAS))
    assert both["whole"].noul == pytest.approx(sigmoid(BIAS + 6))
    assert len(judge._plan([state], qs).pairs) == 2


def test_choice_is_a_softmax_over_one_hypothesis_per_option(judge: LocalJudge) -> None:
    q = Choice(instructions="Which team?", criteria={"Billing": None, "Sales": None, "Other": "favoured"})
    a = judge.ask("I was charged twice: billing", {"team": q})["team"]
    # Billing matches the state (+4); Other's description leans favoured (+2); Sales neither.
    expected = softmax([BIAS + 4, BIAS, BIAS + 2])
    assert list(a.probabilities) == ["Billing", "Sales", "Other"]
    assert list(a.probabilities.values()) == pytest.approx(expected)
    assert a.choice == "Billing"
    assert a.confidence == pytest.approx(choice_confidence(expected))
    assert sum(a.probabilities.values()) == pytest.approx(1.0)


def test_choice_probabilities_do_not_depend_on_option_order(judge: LocalJudge) -> None:
    names = {"Billing": "Payments", "Technical": None, "Sales": "favoured deals", "Red": None, "Blue": "x"}
    state = "billing question about a red invoice"
    base = judge.ask(state, {"c": Choice(instructions="Which?", criteria=names)})["c"]
    rng = random.Random(7)
    for _ in range(5):
        items = list(names.items())
        rng.shuffle(items)
        other = judge.ask(state, {"c": Choice(instructions="Which?", criteria=dict(items))})["c"]
        assert list(other.probabilities) == [k for k, _ in items]
        for name in names:
            assert other.probabilities[name] == pytest.approx(base.probabilities[name], abs=1e-9)
        assert other.confidence == pytest.approx(base.confidence)


def test_score_is_the_expectation_of_a_softmax_over_levels(judge: LocalJudge) -> None:
    q = Score(instructions="How upset?", criteria=["Calm", "Frustrated", "Angry"])
    a = judge.ask("very frustrated customer", {"s": q})["s"]
    expected = softmax([BIAS, BIAS + 4, BIAS])
    assert list(a.probabilities.values()) == pytest.approx(expected)
    assert a.score == pytest.approx(sum(i * p for i, p in enumerate(expected)))
    assert a.confidence == pytest.approx(score_confidence(expected))
    assert a.legend == {"0": "Calm", "1": "Frustrated", "2": "Angry"}
    assert a.level == 1
    top = judge.ask("angry angry", {"s": q})["s"]
    assert top.level == 2 and top.score > 1.5


def test_temperatures_from_the_config_shape_the_distributions(tmp_path: Path) -> None:
    hot = LocalJudge(write_tiny_model(tmp_path / "t", config_overrides={"choice_temperature": 2.0,
                                                                        "score_temperature": 4.0}))
    c = hot.ask("billing", {"c": Choice(criteria=["Billing", "Sales"])})["c"]
    assert list(c.probabilities.values()) == pytest.approx(softmax([BIAS + 4, BIAS], t=2.0))
    s = hot.ask("calm", {"s": Score(criteria=["calm", "angry"])})["s"]
    assert list(s.probabilities.values()) == pytest.approx(softmax([BIAS + 4, BIAS], t=4.0))


def test_templates_from_the_config_are_used(tmp_path: Path) -> None:
    d = write_tiny_model(tmp_path / "t", config_overrides={"templates": {"noul": "{instructions} favoured"}})
    a = LocalJudge(d).ask("text", {"q": Noul(instructions="Is it so?")})
    assert a["q"].noul == pytest.approx(sigmoid(BIAS + 2))


def test_question_ids_order_and_neighbours_do_not_change_answers(judge: LocalJudge) -> None:
    qs = {
        "n": Noul(instructions="yes?"),
        "c": Choice(instructions="Team?", criteria=["Billing", "Sales"]),
        "s": Score(instructions="Mood?", criteria=["calm", "angry"]),
    }
    state = "billing: I am angry, yes"
    alone = {k: judge.ask(state, {k: q})[k] for k, q in qs.items()}
    together = judge.ask(state, dict(reversed(list(qs.items()))))
    renamed = judge.ask(state, {f"id {k} 🙂": q for k, q in qs.items()})
    for k in qs:
        assert together[k] == alone[k]
        assert renamed[f"id {k} 🙂"] == alone[k]


def test_questions_may_be_given_as_their_json_shapes(judge: LocalJudge) -> None:
    a = judge.ask("yes", {"q": {"type": "noul", "instructions": "Is it so?"}})
    assert a["q"].noul == pytest.approx(sigmoid(BIAS + 6))
    with pytest.raises(QuestionError, match="2–255 options"):
        judge.ask("x", {"c": {"type": "choice", "criteria": {"only": None}}})
    with pytest.raises(QuestionError, match="at least one question"):
        judge.ask("x", {})
    with pytest.raises(StateError):
        judge.ask(3.5, {"q": Noul(instructions="x")})


# ---------------------------------------------------------------------------- long states


def _filler(n: int) -> list[str]:
    return ["filler"] * n


def test_a_long_state_is_windowed_and_a_noul_takes_the_max(judge: LocalJudge) -> None:
    q = {"q": Noul(instructions="Is there an injection?")}
    words = _filler(300)
    words[170] = "injection"  # deep inside: one window sees it
    words[20] = "no"  # another window says no; max-aggregation ignores it
    a = judge.ask(" ".join(words), q)
    assert a.windows > 1 and a["q"].model_extra == {"x_windows": a.windows}
    assert a["q"].noul == pytest.approx(sigmoid(BIAS + 6))
    clean = judge.ask(" ".join(_filler(300)), q)
    assert clean["q"].noul == pytest.approx(sigmoid(BIAS))
    assert clean.windows == a.windows


def test_the_last_token_is_never_cut(judge: LocalJudge) -> None:
    # The tokenizer file ships with truncation at 512 tokens; the judge must switch it off.
    a = judge.ask(" ".join(_filler(700) + ["yes"]), {"q": Noul(instructions="yes?")})
    assert a["q"].noul == pytest.approx(sigmoid(BIAS + 6))


def test_text_that_spells_a_special_token_cannot_forge_a_segment(judge: LocalJudge) -> None:
    sep = judge._tokenizer.token_to_id("[SEP]")
    plan = judge._plan(["billing [SEP] [CLS] yes"], {"q": Noul(instructions="Is it [SEP] so?")})
    ((ids, types),) = plan.pairs
    assert list(ids).count(sep) == 2  # the template's two, nothing from the text
    assert list(types).count(0) == list(ids).index(sep) + 1  # the hypothesis segment ends at the first


def test_windows_cover_the_state_within_the_model_window(judge: LocalJudge) -> None:
    q = Choice(instructions="Which team handles this ticket?", criteria=["Billing", "Technical", "Sales"])
    n = 200
    plan = judge._plan([" ".join(_filler(n))], {"c": q})
    lengths = [len(ids) for ids, _ in plan.pairs]
    assert max(lengths) <= judge.max_length
    windows = plan.windows[(0, "c")]
    hyp = max(len(judge._hypothesis(h).ids) for h in
              ["Which team handles this ticket?\nAnswer: Technical"])
    size = judge.max_length - 3 - hyp
    step = size - stride(size)
    assert windows == math.ceil((n - size) / step) + 1
    assert len(plan.pairs) == windows * 3  # every option sees every window


def test_a_choice_over_windows_takes_the_most_confident_window(judge: LocalJudge) -> None:
    q = {"c": Choice(instructions="Which team?", criteria=["Billing", "Technical", "Sales"])}
    short = judge.ask("billing", q)["c"]
    long = judge.ask(" ".join(["billing", *_filler(400)]), q)
    # The window that mentions billing decides; the flat windows of filler do not dilute it.
    assert long.windows > 3
    assert long["c"].choice == "Billing"
    assert list(long["c"].probabilities.values()) == pytest.approx(list(short.probabilities.values()))
    score = judge.ask(" ".join([*_filler(400), "angry"]), {"s": Score(criteria=["calm", "angry"])})["s"]
    assert score.level == 1 and score.model_extra["x_windows"] > 3


def test_a_question_too_long_for_the_window_names_the_limit(judge: LocalJudge) -> None:
    long = Noul(instructions=" ".join(["word"] * 60))
    limit = 64 - 3 - min_state_tokens(64)
    with pytest.raises(InputError, match=rf"question 'q'.*60 tokens.*window is 64 tokens.*at most {limit}"):
        judge.ask("x", {"q": long})


def test_a_state_over_the_token_budget_is_refused(tiny_model_dir: Path) -> None:
    small = LocalJudge(tiny_model_dir, max_state_tokens=100)
    with pytest.raises(StateError, match=r"101 tokens.*at most 100"):
        small.ask(" ".join(_filler(101)), {"q": Noul(instructions="x")})
    with pytest.raises(StateError, match=r"states\[1\] is 101 tokens"):
        small.ask_many(["ok", " ".join(_filler(101))], {"q": Noul(instructions="x")})


# ---------------------------------------------------------------------------- batching


def test_ask_many_matches_one_ask_per_state(judge: LocalJudge) -> None:
    qs = {"n": Noul(instructions="yes?"), "c": Choice(criteria=["Billing", "Sales", "Technical"]),
          "s": Score(criteria=["calm", "frustrated", "angry"])}
    states = ["yes billing", {"subject": "sales", "body": "angry"}, ["technical", "no"], " ".join(_filler(150))]
    many = judge.ask_many(states, qs)
    assert len(many) == len(states)
    for state, got in zip(states, many):
        one = judge.ask(state, qs)
        assert got.answers == one.answers
        assert got.windows == one.windows
        assert got.usage == one.usage
    with pytest.raises(StateError, match=r"states\[1\]"):
        judge.ask_many(["ok", None], qs)
    with pytest.raises(StateError, match="sequence of states"):
        judge.ask_many("one state", qs)


def test_batch_limits_never_change_an_answer(tiny_model_dir: Path, judge: LocalJudge) -> None:
    tight = LocalJudge(tiny_model_dir, max_batch_size=2, max_batch_tokens=64, max_pairs_per_pass=5)
    qs = {"c": Choice(criteria={f"Queue {i}": ("billing" if i % 3 else None) for i in range(40)}),
          "s": Score(criteria=["calm", "angry", "frustrated"])}
    states = ["billing", "a red and green " + " ".join(_filler(90)), "sales", "angry", "calm green"]
    loose, passes = judge.ask_many(states, qs), tight.ask_many(states, qs)
    assert [a.answers for a in passes] == [a.answers for a in loose]
    assert [a.usage for a in passes] == [a.usage for a in loose]
    assert judge.ask_many([], qs) == []


def test_identical_pairs_run_once(judge: LocalJudge) -> None:
    q = Choice(criteria=["Billing", "Sales"])
    once = judge._plan(["billing"], {"a": q})
    twice = judge._plan(["billing"], {"a": q, "b": q})
    assert len(twice.pairs) == len(once.pairs) == 2


def test_many_threads_share_one_judge(judge: LocalJudge) -> None:
    qs = {"n": Noul(instructions="yes?"), "c": Choice(criteria=["Billing", "Sales", "Technical"]),
          "s": Score(criteria=["calm", "angry"])}
    states = [f"{w} " * (i % 7 + 1) + " ".join(_filler(i * 9)) for i, w in
              enumerate(["yes", "billing", "no", "angry", "sales", "calm", "technical", "red"] * 3)]
    expected = [judge.ask(s, qs).answers for s in states]
    results: dict[int, object] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(12)

    def work(t: int) -> None:
        try:
            barrier.wait()
            for k in range(len(states)):
                i = (k + t) % len(states)
                got = judge.ask(states[i], qs).answers
                if got != expected[i]:
                    results[t] = (i, got)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(12)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors and not results


def test_aask_runs_in_a_worker_thread(judge: LocalJudge) -> None:
    qs = {"n": Noul(instructions="yes?")}

    async def main() -> list:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        t = asyncio.create_task(ticker())
        got = await asyncio.gather(*(judge.aask(s, qs) for s in ["yes", "no", "maybe"]))
        many = await judge.aask_many(["yes", "no"], qs)
        t.cancel()
        assert ticks > 0
        return [*got, *many]

    out = asyncio.run(main())
    assert [a["n"].noul for a in out] == pytest.approx(
        [sigmoid(BIAS + 6), sigmoid(BIAS - 6), sigmoid(BIAS), sigmoid(BIAS + 6), sigmoid(BIAS - 6)])


def test_a_graph_without_segment_ids_is_fed_what_it_takes(tmp_path: Path) -> None:
    d = write_tiny_model(tmp_path / "m", inputs=("input_ids", "attention_mask"))
    a = LocalJudge(d).ask("yes", {"q": Noul(instructions="Is it so?")})
    assert a["q"].noul == pytest.approx(sigmoid(BIAS + 6))


# ---------------------------------------------------------------------------- bad model dirs


@pytest.fixture
def model_copy(tiny_model_dir: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(tiny_model_dir, tmp_path / "model"))


def _edit_config(d: Path, **changes: object) -> None:
    cfg = json.loads((d / "config.json").read_text())
    cfg.update(changes)
    (d / "config.json").write_text(json.dumps(cfg))


def test_a_missing_directory_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=str(tmp_path / "nope")):
        LocalJudge(tmp_path / "nope")


def test_the_shipped_model_missing_names_its_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_config, "shipped_model_dir", lambda: tmp_path / "seams-minilm")
    with pytest.raises(ConfigError, match=r"shipped model is not installed at .*seams-minilm"):
        LocalJudge()


@pytest.mark.parametrize(
    ("breakage", "pattern"),
    [
        (lambda d: (d / "config.json").unlink(), r"config\.json: missing"),
        (lambda d: (d / "config.json").write_text('{"format": '), r"config\.json:1:\d+: not valid JSON"),
        (lambda d: (d / "config.json").write_text("[]"), r"config\.json: expected a JSON object"),
        (lambda d: _edit_config(d, format="other/2"), r"config\.json: format:"),
        (lambda d: _edit_config(d, max_length="long"), r"config\.json: max_length:"),
        (lambda d: _edit_config(d, choice_temperature=0), r"config\.json: choice_temperature:"),
        (lambda d: _edit_config(d, inputs=["input_ids", "pixels"]), r"config\.json: inputs: .*unknown input"),
        (lambda d: _edit_config(d, templates={"nope": "{x}"}), r"config\.json: .*unknown template"),
        (lambda d: (d / "model.onnx").unlink(), r"model\.onnx: missing; .*config\.json names it"),
        (lambda d: (d / "tokenizer.json").unlink(), r"tokenizer\.json: missing"),
        (lambda d: (d / "model.onnx").write_bytes(b"not a graph"), r"model\.onnx: onnxruntime cannot load it"),
        (lambda d: (d / "tokenizer.json").write_text("{}"), r"tokenizer\.json: not a loadable tokenizers file"),
        (lambda d: _edit_config(d, inputs=["input_ids", "attention_mask"]),
         r"model\.onnx: the graph takes inputs .*token_type_ids.*config\.json lists"),
        (lambda d: _edit_config(d, output="scores"), r"model\.onnx: no output 'scores'.*logits"),
    ],
)
def test_a_broken_model_dir_names_the_file(model_copy: Path, breakage, pattern: str) -> None:
    breakage(model_copy)
    with pytest.raises(ConfigError, match=pattern):
        LocalJudge(model_copy)


def test_unknown_config_fields_are_kept_for_provenance(model_copy: Path) -> None:
    _edit_config(model_copy, training={"base": "minilm", "data_hash": "abc"})
    assert LocalJudge(model_copy).config.model_extra == {"training": {"base": "minilm", "data_hash": "abc"}}


def test_a_batch_dependent_model_runs_one_pair_at_a_time_unless_told(model_copy: Path) -> None:
    assert LocalJudge(model_copy).max_batch_size == 32
    _edit_config(model_copy, batch_dependent=True)
    assert LocalJudge(model_copy).max_batch_size == 1
    assert LocalJudge(model_copy, max_batch_size=8).max_batch_size == 8
    _edit_config(model_copy, batch_dependent="sometimes")
    with pytest.raises(ConfigError, match="batch_dependent"):
        LocalJudge(model_copy)


def test_bad_runtime_settings_are_config_errors(tiny_model_dir: Path) -> None:
    with pytest.raises(ConfigError, match="intra_op_threads"):
        LocalJudge(tiny_model_dir, intra_op_threads=0)
    with pytest.raises(ConfigError, match="max_batch_size"):
        LocalJudge(tiny_model_dir, max_batch_size=0)


def test_logits_are_float64_probabilities_summing_to_one(judge: LocalJudge) -> None:
    c = judge.ask("billing", {"c": Choice(criteria=[f"o{i}" for i in range(255)])})["c"]
    assert sum(c.probabilities.values()) == pytest.approx(1.0, abs=1e-9)
    assert all(isinstance(p, float) for p in c.probabilities.values())
    assert np.isclose(c.confidence, 0.0)


def test_answer_caches_keep_a_batch_dependent_models_batchings_apart(model_copy: Path, tmp_path: Path) -> None:
    import sqlite3

    from seams.judges.cache import CachedJudge

    q = {"q": Noul(instructions="Is the ticket about billing?")}

    def rows_after_two_batchings(db: Path) -> int:
        for size in (1, 8):
            CachedJudge(LocalJudge(model_copy, max_batch_size=size), db).ask("refund my invoice", q)
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    assert rows_after_two_batchings(tmp_path / "float.sqlite") == 1  # the batch changes no answer
    _edit_config(model_copy, batch_dependent=True)
    assert LocalJudge(model_copy).answer_identity.endswith("|pairs-per-run:1")
    assert rows_after_two_batchings(tmp_path / "int8.sqlite") == 2
