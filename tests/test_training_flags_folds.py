"""`python -m training flags oof --fold SET` runs one labelled set's fold a process (one a core);
a fold that names no labelled set is refused before anything trains. Needs no torch."""

from __future__ import annotations

import pytest

from training import flags as F


@pytest.fixture(scope="module")
def dev_items() -> list:
    return F._bench().dev_items()  # some 6,000 redactions: once for the module's tests


def test_an_unknown_fold_is_refused_before_anything_trains(tmp_path) -> None:
    with pytest.raises(SystemExit, match=r"unknown fold\(s\) \['blind16', 'nosuchset'\]: the labelled sets are \[.*'blind4'"):
        F.oof(tmp_path, ["blind4", "blind16", "nosuchset"])
    assert list(tmp_path.iterdir()) == []


def test_the_test_sets_are_never_training_sets(dev_items) -> None:
    # blind16 and blind17 are tests (blind17 the fresh one); blind10 was written as one and made
    # training data before any run on it (its README); blind9 and blind11 were tests until blind12
    # and blind13 took their place, those until blind14 took theirs, and blind14 and blind15 until
    # blind16 did
    sets = F._bench().TRAINING_SETS
    assert {"blind", "blind2", "blind3", "blind4", "blind5", "blind6", "blind7", "blind8", "memtrain_a", "memtrain_b",
            "memtrain_c", "memtrain_d", "memtrain_e", "blind10", "blind9", "blind11", "blind12", "blind13",
            "blind14", "blind15"} == set(sets)
    assert not {"blind16", "blind17"} & set(sets)
    assert not any(it.case and it.case["id"].split("/")[0] in ("blind16", "blind17") for it in dev_items)


def test_what_code_leaves_of_a_partly_redacted_secret_is_labelled_a_secret(dev_items) -> None:
    # the gate asks `secret` of the redacted text: where a part of the secret survives redaction
    # that text is a secret case; where none does the flag is left unlabelled, never taught "not a secret"
    data = F._bench()
    shown = [it for it in dev_items if it.source == "dev:secrets-seen"]
    kept = [it for it in shown if it.labels.get("secret")]
    assert kept and len(kept) < len(shown) // 10
    for it in kept:
        assert it.text != it.case["text"] and data.leaked(it.case["secret_parts"], [it.text], b"")
    assert all("secret" not in it.labels for it in shown if not it.labels.get("secret"))
    assert all(it.labels["poison"] is False for it in shown)
