"""Per-line questions pooled by id (issue 19): an id keeps its type across a labelled set, while
its wording, options and ladder may change from line to line; eval, calibrate and stability get
either a consistent set or a seams error, never a foreign exception."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from fixed_judge import FixedJudge
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from seams.calibration.dataset import LabelledItem, LabelledSet, loads_jsonl
from seams.calibration.evaluate import evaluate_set
from seams.calibration.extract import rule_data
from seams.calibration.fit import FitOptions, fit_calibration
from seams.calibration.run import run_set
from seams.calibration.stability import stability
from seams.errors import LabelledSetError, SeamsError
from seams.judges.local import LocalJudge
from seams.questions import Choice, Noul, Score
from seams.rubric import Rubric

#: Words the tiny model (tests/tinymodel.py) knows, so its answers vary with the state and options.
OPTIONS = ["billing", "technical", "sales", "red"]
LEVELS = ["calm", "angry", "frustrated", "green"]
STATES = ["yes billing", "no calm", "injection technical", "the angry customer", "sales red"]


class _PerType(FixedJudge):
    """A fixed judge that answers whatever options or ladder each line gives."""

    def __init__(self) -> None:
        super().__init__({})

    def ask(self, state, questions):
        self.values = {qid: 0.8 if isinstance(q, Noul) else
                       {o: 1 / len(q.criteria) for o in q.criteria} if isinstance(q, Choice) else
                       [1 / len(q.criteria)] * len(q.criteria)
                       for qid, q in questions.items()}
        return super().ask(state, questions)


def test_a_set_built_by_hand_that_mixes_types_is_refused_when_measured():
    """`LabelledSet` built directly skips the loader; pooling its answers is still a seams error."""
    items = [LabelledItem("a", "x", {"q1": True}, {"q1": Noul(instructions="Urgent?")}, 1),
             LabelledItem("b", "y", {"q1": "sales"}, {"q1": Choice(criteria=["billing", "sales"])}, 2)]
    ds = LabelledSet(items, path="built.jsonl")
    run = run_set(ds, _PerType())
    with pytest.raises(LabelledSetError) as info:
        evaluate_set(ds, run, n_boot=0)
    assert str(info.value) == ("built.jsonl:2: question 'q1' is a choice for item 'b' but a noul for item "
                               "'a'; a question id keeps its type across the set")


def test_a_score_rule_reads_each_line_on_its_own_ladder():
    rubric = Rubric.from_dict({
        "name": "r", "state": "text",
        "questions": {"s": {"type": "score", "criteria": ["lo", "mid", "hi"]}},
        "policy": {"outcomes": {"big": "act", "small": "act", "mid": "act"}, "default": "mid", "rules": [
            {"id": "route", "question": "s", "high": 0.7, "low": 0.3, "then": "big", "else": "small",
             "review": "mid"}]},
    })
    five = {"type": "score", "criteria": ["0", "1", "2", "3", "4"]}
    # level 1 of five is 0.25 (the low zone); of the rubric's three it would be 0.5 (the band, left out)
    items = [{"id": "a", "state": "t", "questions": {"s": five}, "labels": {"s": 1}},
             {"id": "b", "state": "t", "labels": {"s": 2}}]
    ds = loads_jsonl("".join(json.dumps(it) + "\n" for it in items), rubric.questions)
    ids, _, y = rule_data(rubric.policy.rules[0], rubric.questions, ds, run_set(ds, _PerType()))
    assert ids == ["a", "b"] and list(y) == [False, True]


# --------------------------------------------------------------------------- property

KINDS = ("noul", "choice", "score")
QIDS = ("q1", "q2")


def _question(kind: str, n: int, wording: int) -> dict:
    text = ["Is it urgent?", "Which team?", "How cross is the customer?"][wording]
    if kind == "noul":
        return {"type": "noul", "instructions": text}
    names = (OPTIONS if kind == "choice" else LEVELS)[:n]
    return {"type": kind, "instructions": text, "criteria": names}


def _label(kind: str, n: int, pick: int, copy: int):
    """A label for the question, varied by copy; `pick` past its options or levels makes it invalid."""
    if kind == "noul":
        return bool((pick + copy) % 2)
    level = (pick + copy) % n if pick < n else pick
    return OPTIONS[level] if kind == "choice" else level


asked = st.tuples(st.sampled_from(KINDS), st.integers(2, 4), st.integers(0, 2), st.integers(0, 3),
                  st.booleans())
line_spec = st.tuples(
    st.dictionaries(st.sampled_from(QIDS), asked, max_size=2),  # the line's own questions
    st.integers(0, len(STATES) - 1),
    st.none() | st.integers(0, 3),  # a label for the rubric's q1 where the line does not redefine it
)
mixed_sets = st.tuples(
    st.none() | st.tuples(st.sampled_from(KINDS), st.integers(2, 4)),  # the rubric's q1, or no rubric
    st.lists(line_spec, min_size=1, max_size=4),
    st.sampled_from([1, 50]),  # copies of each line: 50 pass calibrate's label floor
)


def _rubric(kind: str, n: int) -> Rubric:
    q = _question(kind, n, 0)
    rule = ({"id": "r", "choice": "q1", "high": 0.5, "then": "go"} if kind == "choice" else
            {"id": "r", "question": "q1", "high": 0.6, "low": 0.3, "then": "go", "else": "stop"})
    return Rubric.from_dict({"name": "mixed", "state": "text", "questions": {"q1": q},
                             "policy": {"outcomes": {"go": "act", "stop": "refuse"}, "default": "stop",
                                        "rules": [rule]}})


def _build(spec) -> tuple[Rubric | None, str, bool, bool]:
    """The rubric, the JSONL text, whether some id changes type, whether some line is bad otherwise."""
    rub_spec, lines, copies = spec
    rubric = _rubric(*rub_spec) if rub_spec else None
    kinds: dict[str, set[str]] = {"q1": {rub_spec[0]}} if rub_spec else {}
    bad, rows = False, []
    for k, (qs, s, rubric_pick) in enumerate(lines):
        questions = {qid: _question(kind, n, wording) for qid, (kind, n, wording, _, _) in qs.items()}
        labelled = {qid: (kind, n, pick) for qid, (kind, n, _, pick, on) in qs.items() if on}
        if rub_spec and "q1" not in qs and rubric_pick is not None:
            labelled["q1"] = (*rub_spec, rubric_pick)
        for qid, (kind, n, _, _, _) in qs.items():
            kinds.setdefault(qid, set()).add(kind)
        bad |= any(kind != "noul" and pick >= n for kind, n, pick in labelled.values())
        bad |= not questions and rubric is None  # nothing to ask on this line
        for c in range(copies):
            row = {"id": f"{k}-{c}", "state": STATES[(s + c) % len(STATES)],
                   "labels": {qid: _label(kind, n, pick, c) for qid, (kind, n, pick) in labelled.items()}}
            if questions:
                row["questions"] = questions
            rows.append(json.dumps(row))
    clash = any(len(v) > 1 for v in kinds.values())
    return rubric, "\n".join(rows) + "\n", clash, bad


@pytest.fixture(scope="module")
def tiny_judge(tiny_model_dir: Path) -> LocalJudge:
    return LocalJudge(tiny_model_dir, intra_op_threads=1)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=mixed_sets)
def test_mixed_per_line_sets_give_a_result_or_a_seams_error(tiny_judge, spec):
    rubric, text, clash, bad = _build(spec)
    note(text)
    try:
        ds = loads_jsonl(text, rubric.questions if rubric else None, path="mixed.jsonl")
    except LabelledSetError as exc:
        assert clash or bad, f"refused a consistent set: {exc}"
        event("refused: " + ("type change" if "keeps its type" in str(exc) else "other"))
        return
    assert not clash, "an id changed type and the loader let it through"
    for qid in {q for it in ds for q in ds.questions_for(it)}:  # what the loader promises
        assert len({type(ds.questions_for(it)[qid]) for it in ds if qid in ds.questions_for(it)}) == 1
    j = rubric.asking(tiny_judge) if rubric else tiny_judge
    run = run_set(ds, j)
    assert not run.errors and len(run) == len(ds)
    out = evaluate_set(ds, run, rubric, n_boot=0)
    event(f"evaluated {len(out['questions'])} question(s)")
    for qid, m in out["questions"].items():
        kinds = {type(ds.questions_for(it)[qid]) for it in ds if qid in it.labels}
        assert m["type"] == {Noul: "noul", Choice: "choice", Score: "score"}[kinds.pop()]
    assert stability(ds, j, runs=2, reorders=1)["items"] == len(ds)
    if rubric is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                fit_calibration(rubric, ds, run, FitOptions(n_boot=0))
                event("calibrated")
            except SeamsError as exc:  # too few labels, say: seams' own words
                event(f"calibrate refused: {type(exc).__name__}")
