"""`seams score` on the single-process engine (seams/traces.py, seams/cli/score.py): the tiny ONNX
model over JSONL and Parquet traces, the same decisions as `Rubric.decide`, resuming after a crash
(a torn last line included), bad input named before anything is written, a failing judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gate_rubric import gate_text
from typer.testing import CliRunner

from seams import Rubric
from seams.cli import _register, app
from seams.errors import InputError, StateError
from seams.judges import LocalJudge, RemoteJudge
from seams.traces import score

_register()

RUBRIC_TEXT = gate_text("score-gate")
RUBRIC = Rubric.loads(RUBRIC_TEXT)
#: fields that differ between two runs of the same decision
VOLATILE = ("latency_ms", "decided_at")


def texts(n: int) -> list[str]:
    return [("yes it is {}", "no it is not {}", "the ticket text {}")[i % 3].format(i) for i in range(n)]


def write_traces(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"id": f"t{i}", "state": s}) + "\n" for i, s in enumerate(texts(n))))
    return path


def stable(out: Path) -> list[dict]:
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in rows]


def test_each_line_is_the_decision_rubric_decide_makes(tmp_path, tiny_model_dir):
    judge = LocalJudge(tiny_model_dir)
    traces = write_traces(tmp_path / "traces.jsonl", 30)
    summary = score(RUBRIC, traces, tmp_path / "out.jsonl", judge=judge, batch_size=8)
    assert (summary.total, summary.skipped, summary.scored) == (30, 0, 30)
    assert summary.outcomes == {"go": 10, "stop": 10, "review": 10}
    rows = stable(tmp_path / "out.jsonl")
    assert [r["id"] for r in rows] == [f"t{i}" for i in range(30)]
    for row, text in zip(rows, texts(30)):
        want = RUBRIC.decide(text, judge=judge).model_dump(mode="json")
        assert row == {"id": row["id"], **{k: v for k, v in want.items() if k not in VOLATILE}}


def test_an_interrupted_run_resumes_without_losing_or_repeating_an_item(tmp_path, tiny_model_dir):
    judge = LocalJudge(tiny_model_dir)
    traces = write_traces(tmp_path / "traces.jsonl", 40)
    full = tmp_path / "full.jsonl"
    score(RUBRIC, traces, full, judge=judge, batch_size=16)
    # a crash: 10 whole lines were written, the 11th only half
    lines = full.read_bytes().split(b"\n")
    partial = tmp_path / "partial.jsonl"
    partial.write_bytes(b"\n".join(lines[:10]) + b"\n" + lines[10][:25])
    summary = score(RUBRIC, traces, partial, judge=judge, batch_size=16)
    assert (summary.skipped, summary.scored) == (10, 30)
    assert stable(partial) == stable(full)
    again = score(RUBRIC, traces, partial, judge=judge)
    assert again.scored == 0 and stable(partial) == stable(full)


def test_parquet_with_a_state_column_or_one_column_per_field(tmp_path, tiny_model_dir):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    judge = LocalJudge(tiny_model_dir)
    jsonl = write_traces(tmp_path / "traces.jsonl", 12)
    pq.write_table(pa.table({"id": [f"t{i}" for i in range(12)], "state": texts(12)}), tmp_path / "traces.parquet")
    score(RUBRIC, jsonl, tmp_path / "a.jsonl", judge=judge)
    score(RUBRIC, tmp_path / "traces.parquet", tmp_path / "b.jsonl", judge=judge)
    assert stable(tmp_path / "a.jsonl") == stable(tmp_path / "b.jsonl")

    fields = Rubric.loads(RUBRIC_TEXT.replace("state: text", "state: {type: object, fields: {reply: {}}}")
                          .replace("Does the text agree?", "Does the `reply` agree?"))
    pq.write_table(pa.table({"id": ["x", "y"], "reply": ["yes it is", "no it is not"]}), tmp_path / "fields.parquet")
    score(fields, tmp_path / "fields.parquet", tmp_path / "c.jsonl", judge=judge)
    assert [(r["id"], r["outcome"]) for r in stable(tmp_path / "c.jsonl")] == [("x", "go"), ("y", "stop")]


@pytest.mark.parametrize(("content", "error", "message"), [
    ('{"id": "a", "state": "yes"}\n{"id": "a", "state": "no"}\n', InputError, r"traces.jsonl:2: id 'a' appears twice \(first at .*traces.jsonl:1\)"),
    ('{"id": "a", "state": "yes"}\n["no"]\n', InputError, r"traces.jsonl:2: a trace is an object with a \"state\""),
    ('{"id": "a", "state": "yes"}\n{"id": "b", "state": {"text": "no"}}\n', StateError, r"traces.jsonl:2 \(id 'b'\): .*expects a text state, got dict"),
])
def test_bad_input_is_named_before_anything_is_written(tmp_path, tiny_model_dir, content, error, message):
    traces = tmp_path / "traces.jsonl"
    traces.write_text(content)
    with pytest.raises(error, match=message):
        score(RUBRIC, traces, tmp_path / "out.jsonl", judge=LocalJudge(tiny_model_dir))
    assert not (tmp_path / "out.jsonl").exists()


def test_a_failing_judge_takes_the_on_error_outcome_never_an_act(tmp_path, mock):
    traces = write_traces(tmp_path / "traces.jsonl", 6)
    with RemoteJudge("no-such-model", base_url=mock.url) as bad:
        summary = score(RUBRIC, traces, tmp_path / "out.jsonl", judge=bad, batch_size=3)
    assert summary.outcomes == {"review": 6}
    assert all(r["rule"] == "on_error" and r["error"] for r in stable(tmp_path / "out.jsonl"))


def test_the_command_scores_resumes_and_reports(tmp_path, tiny_model_dir):
    rubric = tmp_path / "gate.yaml"
    rubric.write_text(RUBRIC_TEXT)
    traces = write_traces(tmp_path / "traces.jsonl", 9)
    args = ["score", str(rubric), str(traces), "--model-dir", str(tiny_model_dir), "--json"]
    first = CliRunner().invoke(app, args, catch_exceptions=False)
    assert first.exit_code == 0, first.output
    out = json.loads(first.stdout)
    assert out["out"] == str(tmp_path / "traces.decisions.jsonl")
    assert (out["total"], out["scored"], out["outcomes"]) == (9, 9, {"go": 3, "stop": 3, "review": 3})
    second = CliRunner().invoke(app, args, catch_exceptions=False)
    assert json.loads(second.stdout)["skipped"] == 9 and json.loads(second.stdout)["scored"] == 0
    bad = CliRunner().invoke(app, [*args, "--engine", "spark"])
    assert bad.exit_code == 2 and "--engine" in bad.output and "spark" in bad.output


def test_a_state_the_judge_refuses_stops_the_run_naming_the_trace(tmp_path, tiny_model_dir):
    traces = tmp_path / "traces.jsonl"
    states = [*texts(5), "the ticket text " * 20, *texts(3)]
    traces.write_text("".join(json.dumps({"id": f"t{i}", "state": s}) + "\n" for i, s in enumerate(states)))
    out = tmp_path / "out.jsonl"
    with pytest.raises(StateError, match=r"trace 't5': .*tokens"):
        score(RUBRIC, traces, out, judge=LocalJudge(tiny_model_dir, max_state_tokens=30), batch_size=4)
    assert [r["id"] for r in stable(out)] == ["t0", "t1", "t2", "t3"]  # the batch before it is kept
