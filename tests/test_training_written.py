"""The written corpus's splits and pairs, and grouped batches (no data set, no torch needed)."""

import json
import random

from seams.questions import parse_questions
from training import written as WR
from training.train import make_batches


def _item(kind: str, label: object, line_id: str = "banking_support/g001/a") -> WR.Item:
    raw = {
        "noul": {"type": "noul", "instructions": "Is the `message` about a lost card?"},
        "choice": {"type": "choice", "instructions": "Which team takes the `message`?",
                   "criteria": {f"team_{k}": f"description {k}" for k in range(12)}},
        "score": {"type": "score", "instructions": "How urgent is the `message`?",
                  "criteria": ["no hurry", "soon", "today", "now"]},
    }[kind]
    q = parse_questions({"q": raw})["q"]
    return WR.Item("banking_support", line_id, "q", q, {"message": "I lost my card"}, label)


def test_a_choice_keeps_its_gold_option_and_at_most_max_options():
    hyps, text, ys = WR.pairs(_item("choice", "team_7"), random.Random(0))
    assert len(hyps) == WR.MAX_OPTIONS and sum(ys) == 1.0
    assert "team_7" in hyps[ys.index(1.0)]
    assert "I lost my card" in text


def test_a_score_is_every_level_with_the_gold_one_marked():
    hyps, _, ys = WR.pairs(_item("score", 2), random.Random(0))
    assert len(hyps) == 4 and ys == [0.0, 0.0, 1.0, 0.0]
    assert "Level 3 of 4" in hyps[2]


def test_a_noul_is_one_pair():
    hyps, _, ys = WR.pairs(_item("noul", False), random.Random(0))
    assert len(hyps) == 1 and ys == [0.0]


def test_held_out_groups_follow_the_spec_hash_and_ignore_the_variant():
    ids = [f"banking_support/g{n:03d}/{v}" for n in range(200) for v in "ab"]
    held = {i.rsplit("/", 1)[0] for i in ids if WR.held_out_group(i)}
    # both variants of a group fall on the same side; about 3/16 of groups are held out
    assert all(WR.held_out_group(f"{g}/a") == WR.held_out_group(f"{g}/b") for g in held)
    assert 0.10 < len(held) / 200 < 0.28


def test_held_out_wordings_depend_on_the_instructions_only():
    a, b = _item("noul", True), _item("noul", False, "hotel_guests/g009/c")
    assert WR.held_out_wording(a.question) == WR.held_out_wording(b.question)
    assert WR.wording_key(a.question) == "is the `message` about a lost card?"


def test_grouped_batches_keep_each_group_whole_and_every_pair_once():
    rng = random.Random(3)
    groups, lengths = [], []
    for g in range(300):
        n = rng.choice([1, 1, 4, 8])
        groups += [""] * n if n == 1 else [f"g{g}"] * n
        lengths += [rng.randint(10, 90)] * n
    batches = make_batches(lengths, 16, seed=5, groups=groups)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(len(groups)))
    where = {i: k for k, b in enumerate(batches) for i in b}
    for g in {x for x in groups if x}:
        assert len({where[i] for i, x in enumerate(groups) if x == g}) == 1
    assert max(len(b) for b in batches) <= 16 + 8


def test_ungrouped_batches_are_what_they_always_were():
    # pinned to the order the pipeline made before groups existed (e1b3aa7), so older runs resume
    # and rebuild with the very same batches
    import hashlib

    rng = random.Random(1)
    lengths = [rng.randint(5, 50) for _ in range(500)]
    digest = hashlib.sha256(json.dumps(make_batches(lengths, 32, seed=9)).encode()).hexdigest()[:16]
    assert digest == "6e5cbeddd26a241c"


def test_a_grouped_example_row_carries_its_group_and_an_ungrouped_one_does_not():
    from training.mixture import Example

    assert "group" not in Example("t", "s", "w", "h", "x", 1.0).row()
    row = Example("t", "s", "w", "h", "x", 1.0, "w0:1").row()
    assert json.loads(json.dumps(row))["group"] == "w0:1"
