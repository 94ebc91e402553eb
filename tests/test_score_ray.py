"""`seams score --engine ray` on a real local Ray cluster (`ray.init(num_cpus=2)`): the same lines
as the single-process engine, and a worker killed mid-run loses no item and repeats none."""

from __future__ import annotations

import functools
import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed: pip install seams[ray]")

from test_score import RUBRIC, RUBRIC_TEXT, stable, write_traces  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from seams.cli import _register, app  # noqa: E402
from seams.judges import LocalJudge  # noqa: E402
from seams.traces import score

_register()
pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def scorer_pids() -> list[int]:
    """The processes of the pool's actors (Ray titles them after the class)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b"MapWorker(MapBatches(Scorer))" in cmd:
                pids.append(int(entry.name))
    return pids


def test_the_ray_engine_writes_what_the_local_engine_writes(cluster, tmp_path, tiny_model_dir):
    traces = write_traces(tmp_path / "traces.jsonl", 120)
    local = score(RUBRIC, traces, tmp_path / "local.jsonl", judge=LocalJudge(tiny_model_dir), batch_size=8)
    on_ray = score(RUBRIC, traces, tmp_path / "ray.jsonl", engine="ray", workers=2, batch_size=8,
                   judge_factory=functools.partial(LocalJudge, tiny_model_dir))
    assert on_ray.scored == local.scored == 120 and on_ray.outcomes == local.outcomes
    assert stable(tmp_path / "ray.jsonl") == stable(tmp_path / "local.jsonl")
    # and from the command line, resuming a run cut short
    rubric = tmp_path / "gate.yaml"
    rubric.write_text(RUBRIC_TEXT)
    out = tmp_path / "cli.jsonl"
    out.write_text("".join(line + "\n" for line in (tmp_path / "local.jsonl").read_text().splitlines()[:50]))
    res = CliRunner().invoke(app, ["score", str(rubric), str(traces), "--out", str(out), "--engine", "ray",
                                   "--workers", "2", "--model-dir", str(tiny_model_dir), "--json"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert (json.loads(res.stdout)["skipped"], json.loads(res.stdout)["scored"]) == (50, 70)
    assert stable(out) == stable(tmp_path / "local.jsonl")


def test_a_killed_worker_loses_no_item(cluster, tmp_path):
    """The shipped model (slow enough that the run is still going when a worker dies)."""
    traces = write_traces(tmp_path / "traces.jsonl", 240)
    out = tmp_path / "ray.jsonl"
    result: dict = {}
    run = threading.Thread(target=lambda: result.setdefault("summary", score(
        RUBRIC, traces, out, engine="ray", workers=2, batch_size=4)))
    run.start()
    deadline = time.monotonic() + 300
    while not (out.exists() and out.read_text().count("\n") >= 8) and time.monotonic() < deadline:
        time.sleep(0.05)
    pids = scorer_pids()
    assert pids, "no Scorer actor process found"
    os.kill(pids[0], signal.SIGKILL)
    killed_at = out.read_text().count("\n")
    run.join(timeout=300)
    assert not run.is_alive()
    assert 8 <= killed_at < 240  # the worker died mid-run
    rows = stable(out)
    assert sorted(r["id"] for r in rows) == sorted(f"t{i}" for i in range(240))  # each item once
    local = tmp_path / "local.jsonl"
    score(RUBRIC, traces, local, batch_size=4)
    assert rows == stable(local)
