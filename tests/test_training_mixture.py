"""Pieces of the training mixture that need no data set (the full build reads ../shared/data)."""

import random

from training import mixture as M
from training.mixture import ToolItem, _closest_tools, _tool_choice_examples
from training.wordings import train_wordings


def test_hard_tool_negatives_are_the_tools_sharing_most_words_with_the_request():
    pool = {
        "book_flight": "Book a flight between two airports on a date.",
        "flight_status": "Say whether a flight is delayed.",
        "weather": "Today's weather for a city.",
        "translate": "Translate a sentence.",
        "convert_currency": None,
    }
    it = ToolItem("is my flight to Paris delayed today?", "flight_status", {}, "synthetic", pool)
    others = [n for n in pool if n != it.gold]
    assert _closest_tools(it, others, 2) == ["book_flight", "weather"]
    assert _closest_tools(it, others, 10) == ["book_flight", "weather", "convert_currency", "translate"]


def _flight_item() -> ToolItem:
    pool = {
        "book_flight": "Book a flight between two airports on a date.",
        "flight_status": "Say whether a flight is delayed.",
        "weather": "Today's weather for a city.",
        "translate": "Translate a sentence.",
        "convert_currency": "Convert an amount between currencies.",
        "set_alarm": "Set an alarm.",
        "play_music": "Play a song.",
    }
    return ToolItem("is my flight to Paris delayed today?", "flight_status", {}, "synthetic", pool)


def test_a_hard_no_fit_tool_choice_is_all_noes_over_the_closest_tools():
    it = _flight_item()
    w = next(w for w in train_wordings("tool_choice") if w.none_option is None)
    # a share of 2 makes every draw a hard one: the closest tools, the gold one left out
    examples = _tool_choice_examples(it, w, random.Random(0), hard_tool_negatives=2.0)
    assert examples and all(e.label == 0.0 for e in examples)
    assert not any("flight_status" in e.hypothesis for e in examples)
    assert any("book_flight" in e.hypothesis for e in examples)


def test_without_hard_negatives_the_gold_tool_is_the_one_yes():
    it = _flight_item()
    w = next(w for w in train_wordings("tool_choice") if w.none_option is None)
    examples = _tool_choice_examples(it, w, random.Random(0), hard_tool_negatives=0.0)
    yes = [e for e in examples if e.label == 1.0]
    assert len(yes) == 1 and "flight_status" in yes[0].hypothesis


def test_a_statement_asked_as_a_question_is_never_contradicted():
    pairs = [
        M.Pair("A man is sleeping on a bench.", "The man is awake.", "contradiction", "snli"),
        M.Pair("A man is sleeping on a bench.", "A man is sleeping.", "entailment", "snli"),
        M.Pair("A man is sleeping on a bench.", "The man is homeless.", "neutral", "snli"),
        M.Pair("Dublin has many pubs.", "Dublin's pubs are beautiful.", "neutral", "mnli"),
    ]
    rng = random.Random(0)
    seen = [M.as_question(p, rng) for p in pairs for _ in range(40)]
    assert all(q is not None for q in seen)
    for (question, passage, label), p in zip(seen, [p for p in pairs for _ in range(40)], strict=True):
        assert question.endswith("?") and passage == p.a
        assert label != "contradiction", (question, label)
        # answered (yes or no) unless the premise leaves it open
        assert label == ("neutral" if p.label == "neutral" else "entailment") or question.startswith("Who ")
        if question.startswith("Who "):
            assert p.label != "contradiction" and "pubs" not in question  # who-questions need a person
    forms = {q.split()[0] for q, _, _ in seen}
    assert {"Is", "Who"} <= forms, forms  # inverted copula, who-questions and templates all occur
    assert M.as_question(M.Pair("x", "Is it raining?", "neutral", "snli"), rng) is None



def test_paws_passes_ask_every_pair_each_pass_with_labels_that_follow_the_task():
    pairs = [
        M.Pair("Flights from New York to Florida.", "Flights from Florida to New York.", "corrects", "paws"),
        M.Pair("He moved to Paris in 1990.", "In 1990 he moved to Paris.", "restates", "paws"),
    ]
    ex = M._paws_examples(pairs, 20, random.Random(0))
    by_task = {t: [e for e in ex if e.task == t] for t in ("correction", "restatement", "memory_choice")}
    # a Noul is one pair, the two-way Choice two (one hypothesis per option): 20 passes x 2 pairs
    assert len(by_task["correction"]) + len(by_task["restatement"]) + len(by_task["memory_choice"]) // 2 == 40
    assert all(e.source == "paws" for e in ex)
    inverted = {w.id for t in ("correction", "restatement") for w in train_wordings(t) if w.invert}
    for task, marker in (("correction", "Florida to New York"), ("restatement", "In 1990")):
        for e in by_task[task]:
            assert e.label == float((marker in e.state) != (e.wording in inverted)), e
    assert inverted & {e.wording for e in ex}  # inverted wordings were drawn and their labels flipped
    choice = by_task["memory_choice"]
    assert choice and sum(e.label for e in choice) == len(choice) // 2  # one yes per asked pair
    assert M._paws_examples(pairs, 0, random.Random(0)) == []


def test_the_paws_probe_reads_label_rows_and_skips_the_rest(tmp_path):
    from training.paws_probe import read_paws

    f = tmp_path / "paws.tsv"
    f.write_text('1\tFlights from A to B.\tFlights from B to A.\t0\n2\tHe said "hi".\tHe said "hi" .\t1\n'
                 "3\tbroken row\n4\ta\tb\tlabel\n", encoding="utf-8")
    assert read_paws(f) == [("Flights from A to B.", "Flights from B to A.", 0), ('He said "hi".', 'He said "hi" .', 1)]
