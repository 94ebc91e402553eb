"""The labelled memory sets in `bench/data/` are frozen when written: each folder's `FROZEN` holds
the sha256 of its JSONL files, and a set edited after its first look would make every figure on it
(docs/seams.md) a figure on another set. Checked here so an edit fails CI, not a later reader."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "bench" / "data"
SETS = sorted(p.parent for p in DATA.glob("*/FROZEN"))


def test_every_labelled_set_is_frozen() -> None:
    assert len(SETS) >= 20
    unfrozen = [p.name for p in DATA.iterdir() if p.is_dir() and any(p.glob("*.jsonl")) and p not in SETS]
    assert unfrozen == [], f"labelled sets without FROZEN: {unfrozen}"


@pytest.mark.parametrize("folder", SETS, ids=lambda p: p.name)
def test_a_frozen_set_is_what_was_frozen(folder: Path) -> None:
    listed = {}
    for line in (folder / "FROZEN").read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        listed[name.lstrip("*")] = digest
    assert set(listed) == {p.name for p in folder.glob("*.jsonl")}, f"{folder.name}: FROZEN does not list its files"
    for name, digest in listed.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, f"{folder.name}/{name} changed"
