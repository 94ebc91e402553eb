"""`python -m training flags oof --fold SET` runs one labelled set's fold a process (one a core);
a fold that names no labelled set is refused before anything trains. Needs no torch."""

from __future__ import annotations

import pytest

from training import flags as F


def test_an_unknown_fold_is_refused_before_anything_trains(tmp_path) -> None:
    with pytest.raises(SystemExit, match=r"unknown fold\(s\) \['blind11', 'blind9'\]: the labelled sets are \[.*'blind4'"):
        F.oof(tmp_path, ["blind4", "blind9", "blind11"])
    assert list(tmp_path.iterdir()) == []


def test_the_test_sets_are_never_training_sets() -> None:
    # blind9, blind11, blind12 and blind13 are the tests; blind10 was written as one and made training data before
    # any run on it (its README)
    sets = F._bench().TRAINING_SETS
    assert {"blind", "blind2", "blind3", "blind4", "blind5", "blind6", "blind7", "blind8", "memtrain_a", "memtrain_b",
            "memtrain_c", "memtrain_d", "memtrain_e", "blind10"} == set(sets)
    assert not any(it.case and it.case["id"].split("/")[0] in ("blind9", "blind11", "blind12", "blind13")
                   for it in F._bench().dev_items())
