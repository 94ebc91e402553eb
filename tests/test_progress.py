"""Library code reports progress through a callback, `progress(done, total)`, and never prints."""

from __future__ import annotations

import json

from calibration_synth import SynthJudge

from seams.calibration.dataset import loads_jsonl
from seams.calibration.run import run_set
from seams.calibration.stability import stability
from seams.questions import Choice, Noul


def items(n: int) -> str:
    state = {"p": 0.5, "dist": {"a": 0.5, "b": 0.3, "c": 0.2}}
    return "".join(json.dumps({"id": f"i{i}", "state": state, "labels": {}}) + "\n" for i in range(n))


def test_run_set_counts_every_item_and_prints_nothing(capsys) -> None:
    ds = loads_jsonl(items(7), {"flag": Noul(instructions="Flag?")})
    seen: list[tuple[int, int]] = []
    run_set(ds, SynthJudge(), concurrency=3, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(k, 7) for k in range(1, 8)]
    assert capsys.readouterr() == ("", "")


def test_stability_is_one_count_over_its_runs_and_reorderings() -> None:
    qs = {"flag": Noul(instructions="Flag?"), "pick": Choice(instructions="Which?", criteria=["a", "b", "c"])}
    ds = loads_jsonl(items(4), qs)
    seen: list[tuple[int, int]] = []
    stability(ds, SynthJudge(), runs=2, reorders=2, progress=lambda d, t: seen.append((d, t)))
    total = 2 * 4 + 2 * 4  # two retest runs, two reorderings of the one Choice
    assert {t for _, t in seen} == {total} and seen[-1] == (total, total)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)  # never goes backwards
