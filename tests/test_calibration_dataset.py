"""Labelled sets: every bad input is an error naming its file and line; nothing is skipped."""

import json

import pytest

from seams.calibration.dataset import LabelledSetError, load, load_jsonl, loads_jsonl, parse_columns
from seams.errors import InputError
from seams.questions import Choice, Noul, Score

QUESTIONS = {
    "flag": Noul(instructions="Is it flagged?"),
    "kind": Choice(instructions="What kind?", criteria=["billing", "technical", "sales"]),
    "depth": Score(instructions="How deep?", criteria=["none", "some", "full"]),
}


def line(**kw):
    base = {"id": "a", "state": "some text", "labels": {"flag": True}}
    base.update(kw)
    return json.dumps(base)


def err(text: str, questions=QUESTIONS) -> LabelledSetError:
    with pytest.raises(LabelledSetError) as info:
        loads_jsonl(text, questions, path="set.jsonl")
    return info.value


def test_a_good_set_loads_with_every_label_type():
    text = "\n".join([
        line(id="a", labels={"flag": True, "kind": "billing", "depth": 2}),
        "",  # blank lines are not items
        line(id=7, state={"text": "x"}, labels={"flag": False}),
        line(id="c", state=["x", "y"], labels={}),
    ])
    ds = loads_jsonl(text, QUESTIONS, path="set.jsonl")
    assert [it.id for it in ds] == ["a", "7", "c"]
    assert [it.line for it in ds] == [1, 3, 4]
    assert ds.items[0].labels == {"flag": True, "kind": "billing", "depth": 2}
    assert ds.label_counts() == {"flag": 2, "kind": 1, "depth": 1}


def test_hash_ignores_line_order_and_sees_every_edit():
    a, b = line(id="a"), line(id="b", labels={"flag": False})
    h = loads_jsonl(f"{a}\n{b}\n", QUESTIONS).hash
    assert loads_jsonl(f"{b}\n{a}\n", QUESTIONS).hash == h
    assert loads_jsonl(f"{a}\n{line(id='b', labels={'flag': True})}\n", QUESTIONS).hash != h
    assert len(h) == 16


def test_empty_file(tmp_path):
    p = tmp_path / "empty.jsonl"
    p.write_text("\n  \n")
    with pytest.raises(LabelledSetError) as info:
        load_jsonl(p, QUESTIONS)
    assert str(info.value) == f"{p}: empty: no labelled items"


def test_missing_file_names_it(tmp_path):
    with pytest.raises(LabelledSetError, match="no such file"):
        load_jsonl(tmp_path / "nope.jsonl", QUESTIONS)


def test_non_json_line_names_the_line():
    e = err(line(id="a") + "\n{not json\n")
    assert e.line == 2 and str(e).startswith("set.jsonl:2: not valid JSON")


def test_unknown_question_id_names_the_line_and_the_id():
    e = err(line(id="a") + "\n" + line(id="b", labels={"flagg": True}))
    assert e.line == 2 and "unknown question id 'flagg'" in str(e) and "known: ['depth', 'flag', 'kind']" in str(e)


def test_label_that_is_not_an_option():
    e = err(line(labels={"kind": "refunds"}))
    assert str(e).startswith("set.jsonl:1: label 'refunds' of choice 'kind' is not one of its options")


def test_level_out_of_range():
    e = err(line(id="a") + "\n\n" + line(id="b", labels={"depth": 3}))
    assert e.line == 3 and "label 3 of score 'depth' is out of range: its levels are 0–2" in str(e)


@pytest.mark.parametrize("value", [True, "2", 1.5])
def test_level_must_be_an_integer(value):
    assert "must be a level index 0–2" in str(err(line(labels={"depth": value})))


@pytest.mark.parametrize("value", [1, "yes", None])
def test_noul_label_must_be_a_boolean(value):
    assert "label of noul 'flag' must be true or false" in str(err(line(labels={"flag": value})))


@pytest.mark.parametrize("drop,msg", [("id", "missing 'id'"), ("state", "missing 'state'"), ("labels", "missing 'labels'")])
def test_missing_fields(drop, msg):
    raw = {"id": "a", "state": "s", "labels": {}}
    del raw[drop]
    e = err(json.dumps(raw))
    assert e.line == 1 and msg in str(e)


def test_other_shapes():
    assert "an item is a JSON object, got list" in str(err("[1, 2]"))
    assert "unknown key(s) ['label']" in str(err(json.dumps({"id": "a", "state": "s", "label": {}})))
    assert "'labels' must be an object" in str(err(line(labels=[True])))
    assert "'id' must be a non-empty string" in str(err(line(id="")))
    assert "a state must be a string, object or array, got int" in str(err(line(state=1)))
    assert "duplicate id 'a' (first on line 1)" in str(err(line(id="a") + "\n" + line(id="a")))


def test_per_line_questions_without_a_rubric():
    tools = {"tool": {"type": "choice", "criteria": ["search", "calculator"]}}
    ds = loads_jsonl(json.dumps({"id": "t1", "state": "2+2?", "labels": {"tool": "calculator"}, "questions": tools}))
    assert isinstance(ds.questions_for(ds.items[0])["tool"], Choice)
    e = err(json.dumps({"id": "t1", "state": "x", "labels": {"tool": "web"}, "questions": tools}), None)
    assert "label 'web' of choice 'tool' is not one of its options" in str(e)
    e = err(line(), None)
    assert "no questions: give a rubric" in str(e)
    e = err(json.dumps({"id": "t", "state": "x", "labels": {}, "questions": {"q": {"type": "choice", "criteria": ["a"]}}}), None)
    assert e.line == 1 and "questions.q" in str(e) and "2–255 options" in str(e)


def test_csv_adapter_maps_columns_and_names_bad_lines(tmp_path):
    p = tmp_path / "set.csv"
    p.write_text("ident,text,is_flag,kind\nx1,hello,1,billing\nx2,bye,no,\nx3,hm,maybe,sales\n")
    cols = "id=ident,state=text,flag=is_flag,kind=kind"
    with pytest.raises(LabelledSetError) as info:
        load(p, QUESTIONS, columns=cols)
    assert info.value.line == 4 and "must be true or false, got 'maybe'" in str(info.value)
    p.write_text("ident,text,is_flag,kind\nx1,hello,1,billing\nx2,bye,no,\n")
    ds = load(p, QUESTIONS, columns=cols)
    assert [(it.id, it.state, it.labels) for it in ds] == [
        ("x1", "hello", {"flag": True, "kind": "billing"}), ("x2", "bye", {"flag": False})]
    obj = load(p, QUESTIONS, columns="state=text+kind,flag=is_flag")
    assert obj.items[0].state == {"text": "hello", "kind": "billing"} and obj.items[0].id == "2"
    with pytest.raises(LabelledSetError, match="no column"):
        load(p, QUESTIONS, columns="state=body")
    with pytest.raises(InputError, match="needs state=COLUMN"):
        parse_columns("flag=is_flag")
    with pytest.raises(InputError, match="column mapping"):
        load(p, QUESTIONS)


# --------------------------------------------------------------------------- an id across lines

DEFS = {
    "noul": {"type": "noul", "instructions": "Is it urgent?"},
    "choice": {"type": "choice", "instructions": "Which team?",
               "criteria": {"billing": "money", "technical": None}},
    "score": {"type": "score", "instructions": "How angry?", "criteria": ["calm", "cross", "furious"]},
}
LABEL = {"noul": True, "choice": "billing", "score": 1}


def own(ident: str, kind: str, qid: str = "q1", labelled: bool = True) -> str:
    return json.dumps({"id": ident, "state": "a ticket", "questions": {qid: DEFS[kind]},
                       "labels": {qid: LABEL[kind]} if labelled else {}})


@pytest.mark.parametrize("first,then", [(a, b) for a in DEFS for b in DEFS if a != b])
def test_an_id_that_changes_type_between_lines_names_the_line_the_id_and_both_definitions(first, then):
    text = "\n".join([own("a", first), own("b", "noul", qid="other"), own("c", then)])
    e = err(text, None)
    assert e.line == 3
    msg = str(e)
    assert msg.startswith(f"set.jsonl:3: question 'q1' is a {then} here ({json.dumps(DEFS[then])})")
    assert f"but a {first} on line 1 ({json.dumps(DEFS[first])})" in msg
    assert "a question id keeps its type across the set" in msg


def test_a_line_may_not_change_the_type_of_a_rubric_question():
    e = err(own("a", "choice", qid="flag"))
    assert e.line == 1
    assert "question 'flag' is a choice here" in str(e)
    assert 'but a noul in the rubric ({"type": "noul", "instructions": "Is it flagged?"})' in str(e)


def test_a_type_change_is_refused_even_where_the_line_labels_none_of_it():
    # the judge would still be asked the question, and stability pools every answer by id
    e = err("\n".join([own("a", "noul"), own("b", "score", labelled=False)]), None)
    assert e.line == 2 and "question 'q1' is a score here" in str(e)


def test_an_id_may_change_its_wording_options_and_ladder_between_lines():
    lines = [
        own("a", "choice"),
        json.dumps({"id": "b", "state": "x", "labels": {"q1": "sales"},
                    "questions": {"q1": {"type": "choice", "instructions": "Route it",
                                         "criteria": ["sales", "legal", "hr"]}}}),
        json.dumps({"id": "c", "state": "x", "labels": {"q2": 4},
                    "questions": {"q2": {"type": "score", "criteria": ["0", "1", "2", "3", "4"]}}}),
        own("d", "score", qid="q2"),
        json.dumps({"id": "e", "state": "x", "labels": {"kind": "technical"}}),  # the rubric's own `kind`
    ]
    ds = loads_jsonl("\n".join(lines), QUESTIONS, path="set.jsonl")
    assert [len(ds.questions_for(it)["q1"].criteria) for it in ds.items[:2]] == [2, 3]
    assert [len(ds.questions_for(it)["q2"].criteria) for it in ds.items[2:4]] == [5, 3]


def test_a_long_definition_is_cut_in_the_message():
    roster = {"type": "choice", "criteria": {f"tool_{i}": "does a thing " * 5 for i in range(200)}}
    long_line = json.dumps({"id": "b", "state": "x", "questions": {"q1": roster}, "labels": {}})
    text = "\n".join([own("a", "noul"), long_line])
    msg = str(err(text, None))
    assert "question 'q1' is a choice here" in msg and "…" in msg and len(msg) < 800
