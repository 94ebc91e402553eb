"""Running a judge over a set: concurrency, the cache (re-runs, resuming), per-line questions,
scores, and test–retest stability."""

import asyncio
import json
import random

import pytest
from calibration_synth import SynthJudge, choice_items, noul_items

from seams.answers import Answers, ChoiceAnswer, NoulAnswer
from seams.calibration.dataset import loads_jsonl
from seams.calibration.evaluate import evaluate_set
from seams.calibration.fit import FitOptions, fit_calibration
from seams.calibration.run import arun_set, run_set
from seams.calibration.stability import stability
from seams.errors import TransportError
from seams.judges import SyncJudge
from seams.judges.cache import CachedJudge
from seams.questions import Choice, Noul, Score
from seams.rubric import Rubric


def jsonl(items):
    return "".join(json.dumps(it) + "\n" for it in items)


QS = {"flag": Noul(instructions="Flag?")}


class Crashing(SynthJudge):
    """Dies (not a judge error: a crash) on its n-th call."""

    def __init__(self, after: int, **kw):
        super().__init__(**kw)
        self.after = after

    def ask(self, state, questions):
        if self.calls >= self.after:
            raise KeyboardInterrupt
        return super().ask(state, questions)


def test_an_interrupted_run_resumes_from_the_cache_and_a_rerun_costs_nothing(tmp_path):
    ds = loads_jsonl(jsonl(noul_items(80, seed=1)), QS)
    path = tmp_path / "answers.sqlite"
    with pytest.raises(KeyboardInterrupt):
        run_set(ds, CachedJudge(Crashing(after=30), path), concurrency=1)
    fresh = SynthJudge()
    done = run_set(ds, CachedJudge(fresh, path), concurrency=4)
    assert len(done.answers) == 80 and fresh.calls == 50  # only what the crash left unasked
    again = SynthJudge()
    run_set(ds, CachedJudge(again, path))
    assert again.calls == 0


class Slow:
    """An async judge that records how many calls overlap."""

    model_id = "slow-1"

    def __init__(self):
        self.now = self.peak = 0

    def ask(self, state, questions):  # pragma: no cover - the async path is what is tested
        raise AssertionError

    async def aask(self, state, questions):
        self.now += 1
        self.peak = max(self.peak, self.now)
        await asyncio.sleep(0.002)
        self.now -= 1
        if state["p"] > 0.97:
            raise TransportError("connection reset")
        return Answers(model="slow-1", answers={q: NoulAnswer(noul=state["p"]) for q in questions})


def test_concurrency_is_bounded_and_a_failing_item_is_recorded_not_guessed():
    ds = loads_jsonl(jsonl(noul_items(120, seed=2)), QS)
    judge = Slow()
    res = asyncio.run(arun_set(ds, judge, concurrency=5))
    assert 1 < judge.peak <= 5
    failed = {it.id for it in ds.items if it.state["p"] > 0.97}
    assert failed and set(res.errors) == failed and not failed & set(res.answers)
    assert "TransportError: connection reset" in next(iter(res.errors.values()))
    assert list(res.answers) == [it.id for it in ds.items if it.id not in failed]  # file order


def test_per_line_questions_with_varying_options_are_evaluated_without_a_rubric():
    rng = random.Random(0)
    lines = []
    for i, it in enumerate(choice_items(120, ["search", "calc", "mail", "maps"], seed=3, qid="tool")):
        opts = ["search", "calc", "mail", "maps"][: 2 + i % 3]
        if it["labels"]["tool"] not in opts:
            continue
        dist = {o: it["state"]["dist"][o] for o in opts}
        total = sum(dist.values())
        it["state"]["dist"] = {o: v / total for o, v in dist.items()}
        it["questions"] = {"tool": {"type": "choice", "criteria": rng.sample(opts, len(opts))}}
        lines.append(it)
    ds = loads_jsonl(jsonl(lines))
    out = evaluate_set(ds, run_set(ds, SynthJudge()), n_boot=50)
    m = out["questions"]["tool"]
    assert m["type"] == "choice" and m["n"] == len(lines) and 0 < m["top1"] <= 1
    assert set(m["per_class"]) <= {"search", "calc", "mail", "maps"}


class Levels(SyncJudge):
    """A Score judge: the true level distribution, sharpened (overconfident)."""

    model_id = "levels-1"

    def ask(self, state, questions):
        from seams.answers import ScoreAnswer

        out = {}
        for qid, q in questions.items():
            raw = [v ** 3 for v in state["levels"]]
            out[qid] = ScoreAnswer.from_probabilities([v / sum(raw) for v in raw], q.criteria)
        return Answers(model="levels-1", answers=out)


def test_scores_get_a_temperature_and_an_mae():
    rubric = Rubric.from_dict({
        "name": "grade", "state": {"fields": {"levels": "the true level distribution"}},
        "questions": {"quality": {"type": "score", "criteria": ["poor", "fair", "good", "great"]}},
        "policy": {"outcomes": {"ship": "act"}, "rules": [], "default": "ship"},
    })
    rng = random.Random(1)
    items = []
    for i in range(400):
        w = [rng.random() ** 2 for _ in range(4)]
        d = [v / sum(w) for v in w]
        items.append({"id": f"s{i}", "state": {"levels": d}, "labels": {"quality": rng.choices(range(4), d)[0]}})
    ds = loads_jsonl(jsonl(items), rubric.questions)
    result = fit_calibration(rubric, ds, run_set(ds, Levels()), FitOptions(n_boot=50))
    assert isinstance(rubric.questions["quality"], Score)
    cal = result.block.questions["quality"].calibrator
    assert cal.method == "temperature" and cal.temperature == pytest.approx(3.0, rel=0.3)
    q = result.questions["quality"]
    assert q.after["log_loss"] < q.before["log_loss"] and "mae" in q.after


class Noisy(SynthJudge):
    """Answers with noise, and picks a Choice's winner by position half the time."""

    def __init__(self):
        super().__init__(model="noisy-1")
        self.rng = random.Random(7)

    def ask(self, state, questions):
        out = {}
        for qid, q in questions.items():
            if isinstance(q, Noul):
                out[qid] = NoulAnswer(noul=min(1, max(0, state["p"] + self.rng.uniform(-0.2, 0.2))))
            else:
                first = q.options[0]
                out[qid] = ChoiceAnswer.from_probabilities(
                    {o: (0.7 if o == first else 0.3 / (len(q.options) - 1)) for o in q.options})
        return Answers(model="noisy-1", answers=out)


def test_stability_measures_retest_spread_and_order_flips():
    items = noul_items(40, seed=4)
    for it in items:
        it["labels"] = {}
    ds = loads_jsonl(jsonl(items), QS)
    out = stability(ds, Noisy(), runs=3)
    flag = out["questions"]["flag"]
    assert out["runs"] == 3 and flag["n"] == 40 and 0 < flag["sd_mean"] < flag["sd_max"] <= 0.25
    qs = {"kind": Choice(criteria=["a", "b", "c"])}
    cds = loads_jsonl(jsonl([{"id": f"k{i}", "state": {"p": 0.5}, "labels": {}} for i in range(10)]), qs)
    out = stability(cds, Noisy(), runs=2, reorders=2)
    kind = out["questions"]["kind"]
    # it picks whatever comes first: reversing always flips it, a shuffle whenever "a" moves
    assert kind["reorder_n"] == 20 and 0.5 <= kind["reorder_flip_rate"] <= 1.0
    assert kind["unstable_rate"] == 0


def test_what_counts_as_right_for_each_kind_of_rule():
    from fixed_judge import FixedJudge

    from seams.calibration.extract import rule_data

    rubric = Rubric.from_dict({
        "name": "r", "state": "text",
        "questions": {"a": {"type": "noul"}, "b": {"type": "noul"},
                      "k": {"type": "choice", "criteria": ["x", "y"]},
                      "s": {"type": "score", "criteria": ["lo", "hi"]}},
        "policy": {"outcomes": {"go": "act", "stop": "refuse"}, "default": "stop", "rules": [
            {"id": "flags", "any": ["a", "b"], "high": 0.5, "then": "stop"},
            {"id": "opt", "question": "k", "option": "y", "high": 0.5, "then": "go"},
            {"id": "pick", "choice": "k", "high": 0.5, "then": "go"},
            {"id": "score", "question": "s", "high": 0.5, "then": "go"}]},
    })
    items = [{"id": "1", "state": "t", "labels": {"a": False, "b": True, "k": "y"}},
             {"id": "2", "state": "t", "labels": {"a": False, "k": "x"}},  # b unlabelled: read as false
             {"id": "3", "state": "t", "labels": {}}]
    ds = loads_jsonl(jsonl(items), rubric.questions)
    run = run_set(ds, FixedJudge({"a": 0.2, "b": 0.9, "k": {"x": 0.3, "y": 0.7}, "s": [0.5, 0.5]}))
    rules = {r.id: r for r in rubric.policy.rules}
    ids, p, y = rule_data(rules["flags"], rubric.questions, ds, run)
    assert ids == ["1", "2"] and list(p) == [0.9, 0.9] and list(y) == [True, False]
    ids, p, y = rule_data(rules["opt"], rubric.questions, ds, run)
    assert list(p) == [0.7, 0.7] and list(y) == [True, False]
    ids, p, y = rule_data(rules["pick"], rubric.questions, ds, run)  # winner y at 0.7: right for item 1 only
    assert list(p) == [0.7, 0.7] and list(y) == [True, False]
    # a score rule: no item labels `s` yet, so nothing to fit on
    ids, p, y = rule_data(rules["score"], rubric.questions, ds, run)
    assert ids == []


def test_a_score_rule_reads_labelled_levels_through_its_written_cut_points():
    from fixed_judge import FixedJudge

    from seams.calibration.extract import rule_data

    rubric = Rubric.from_dict({
        "name": "r", "state": "text",
        "questions": {"s": {"type": "score", "criteria": ["easy", "routine", "hard", "expert"]}},
        "policy": {"outcomes": {"big": "act", "small": "act", "mid": "act"}, "default": "mid", "rules": [
            {"id": "route", "question": "s", "high": 0.6, "low": 0.3, "then": "big", "else": "small",
             "review": "mid"}]},
    })
    # levels 0..3 normalise to 0, 1/3, 2/3, 1: level 0 wants small (≤ 0.3), 1 the band, 2 and 3 big (≥ 0.6)
    items = [{"id": str(i), "state": "t", "labels": {"s": i}} for i in range(4)]
    ds = loads_jsonl(jsonl(items), rubric.questions)
    run = run_set(ds, FixedJudge({"s": [0.1, 0.2, 0.3, 0.4]}))
    ids, p, y = rule_data(rubric.policy.rules[0], rubric.questions, ds, run)
    assert ids == ["0", "2", "3"] and list(y) == [False, True, True]
    assert all(v == pytest.approx(run.answers["0"].answers["s"].normalized) for v in p)
