"""`seams distill` against a teacher that is the real System One server (`seams serve`'s app on
uvicorn on loopback) over a judge answering with gold labels and a share of noise; the student
is the tiny features model, through real onnxruntime sessions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from heads_data import RUBRIC, items
from label_judge import LabelJudge
from test_server import serving
from typer.testing import CliRunner

from seams.calibration.dataset import load_jsonl
from seams.calibration.distill import distill, read_states
from seams.calibration.fit import FitOptions
from seams.cli import _register, app
from seams.errors import LabelledSetError
from seams.judges.local import LocalJudge
from seams.judges.remote import RemoteJudge
from seams.rubric import Rubric
from seams.server import create_app

_register()
ROWS = items(400, seed=2)


@pytest.fixture(scope="module")
def teacher():
    judge = LabelJudge(ROWS, noise=0.05)
    with serving(create_app(judge)) as url:
        yield judge, url


def test_distilling_from_a_served_teacher(teacher, tiny_features_dir: Path, tmp_path: Path) -> None:
    _gold, url = teacher
    rubric = Rubric.loads(RUBRIC)
    states = [(r["id"], r["state"]) for r in ROWS]
    remote = RemoteJudge("gold-teacher-1", base_url=url)
    out = tmp_path / "teacher.jsonl"
    result = distill(rubric, states, remote, LocalJudge(tiny_features_dir), agreement=0.9,
                     options=FitOptions(n_boot=50), labelled_path=out)
    # the labelled set holds the teacher's answers, noise included, not the gold labels
    written = load_jsonl(out, rubric.questions)
    assert len(written) == 400
    flipped = sum(it.labels["refund"] != r["labels"]["refund"] for it, r in zip(written.items, ROWS))
    assert 0 < flipped < 50
    assert result.fitted.heads and result.rubric.calibration.questions["refund"].head is not None
    assert result.agreement["refund"]["agreement"] > 0.85 and result.agreement["team"]["agreement"] > 0.85
    c = result.cascade
    assert c["n"] == 200 and c["weak"].startswith("seams-tiny-features+heads:")
    assert c["agreement"] >= 0.9 and c["local_share"] > 0.5
    remote.close()


def test_distill_on_the_command_line_writes_the_rubric_and_caches_the_teacher(
        teacher, tiny_features_dir: Path, tmp_path: Path) -> None:
    gold, url = teacher
    rubric_path = tmp_path / "desk.yaml"
    rubric_path.write_text(RUBRIC)
    states = tmp_path / "states.jsonl"
    states.write_text("".join(json.dumps({"id": r["id"], "state": r["state"]}) + "\n" for r in ROWS[:200]))
    args = ["distill", str(rubric_path), str(states), "--teacher", url, "--teacher-model", "gold-teacher-1",
            "--model-dir", str(tiny_features_dir), "--cache", str(tmp_path / "cache.sqlite"), "--agreement", "0.9",
            "--bootstrap", "50", "-q"]
    runner = CliRunner()
    res = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "answered locally" in res.output and "head:" in rubric_path.read_text()
    assert (tmp_path / "states.teacher.jsonl").is_file()
    calls = gold.calls
    again = runner.invoke(app, [*args, "--dry-run", "--json"])
    assert again.exit_code == 0, again.output
    report = json.loads(again.output)
    assert report["cascade"]["n"] == 100 and set(report["agreement"]) == {"refund", "team"}
    assert gold.calls == calls  # every teacher answer came from the cache


def test_states_files_are_checked_line_by_line(tmp_path: Path) -> None:
    bad = tmp_path / "s.jsonl"
    bad.write_text('{"state": "a"}\n{"text": "b"}\n')
    with pytest.raises(LabelledSetError, match=r"s.jsonl:2.*'state'"):
        read_states(bad)
    bad.write_text('{"id": 1, "state": "a"}\n{"id": 1, "state": "b"}\n')
    with pytest.raises(LabelledSetError, match="duplicate id '1'"):
        read_states(bad)
