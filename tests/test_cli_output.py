"""What the CLI prints explains itself: raw and calibrated probabilities side by side, the written
and fitted cut-points, warnings and errors as one clean line each, whole lines on a pipe,
progress where a person watches and plain lines where a log reads.

Commands run through typer's runner and, where the behaviour depends on the stream (width,
wrapping, progress), as a real subprocess with a pipe or a pseudo-terminal. The judge is the tiny
ONNX model of tests/tinymodel.py: "yes" in a state pushes P(yes) to ≈0.99, "no" down.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

import pytest
from typer.testing import CliRunner

from seams.calibration.writeback import write_calibration
from seams.cli import _register, app
from seams.judges.local import LocalJudge
from seams.rubric import Rubric
from seams.rubric.calibration import CalibrationBlock, Calibrator, QuestionCalibration, RuleThresholds
from seams.rubric.rubric import question_fingerprint

_register()

REPLY = textwrap.dedent("""\
    name: reply-gate
    state:
      fields:
        message: {description: the reply to send, required: true}
        context: {description: "earlier turns, if any", required: false}
    questions:
      rude: {type: noul, instructions: Is the `message` rude given the `context`?}
    policy:
      outcomes: {send: act, hold: refuse}
      rules:
        - {id: rude, question: rude, high: 0.8, low: 0.3, then: hold, else: send}
      default: send
    """)

GATE = textwrap.dedent("""\
    name: text-gate
    state: text
    questions:
      flagged: {type: noul, instructions: Does the text say yes?}
    policy:
      outcomes: {pass: act, block: refuse}
      rules:
        - {id: flagged, question: flagged, high: 0.5, then: block, else: pass}
      default: pass
    """)


def invoke(*args: str, input: str | None = None):
    return CliRunner().invoke(app, list(args), input=input)


def env() -> dict[str, str]:
    """The environment of a subprocess: no CI marker, no COLUMNS (the test decides both)."""
    return {k: v for k, v in os.environ.items() if k not in ("CI", "COLUMNS")}


def seams(*args: str, extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`seams ...` as a subprocess, stdout and stderr both pipes."""
    return subprocess.run([sys.executable, "-m", "seams", *args], capture_output=True, text=True,
                          env={**env(), **(extra_env or {})}, timeout=120)


@pytest.fixture
def calibrated(tmp_path: Path, tiny_model_dir: Path) -> Path:
    """reply-gate with a calibration block fitted (by hand, with known numbers) on the tiny model:
    Platt a=0.5 halves the logit (a raw 0.99 reads 0.909); the rule's fitted cut-points are 0.7 / 0.2."""
    path = tmp_path / "reply.yaml"
    path.write_text(REPLY)
    r = Rubric.load(path)
    block = CalibrationBlock(
        model=LocalJudge(tiny_model_dir).model_id, fitted_at=datetime.now(UTC), data_hash="0" * 16, n=100,
        policy_fingerprint=r.policy_fingerprint(),
        questions={"rude": QuestionCalibration(fingerprint=question_fingerprint(r.questions["rude"]), n=100,
                                               calibrator=Calibrator(method="platt", a=0.5, b=0.0))},
        thresholds={"rude": RuleThresholds(high=0.7, low=0.2, method="cost")},
    )
    write_calibration(path, block)
    return path


def labelled(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "set.jsonl"
    rows = [{"id": f"i{i}", "state": "yes yes" if i % 2 else "no no", "labels": {"flagged": bool(i % 2)}}
            for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


# --------------------------------------------------------------------------- raw and calibrated


def test_ask_shows_raw_and_calibrated_side_by_side_and_both_cut_points(calibrated: Path, tiny_model_dir: Path) -> None:
    state = json.dumps({"message": "yes, you fool", "context": "a question"})
    r = invoke("ask", str(calibrated), "--json-state", "-s", state, "--model-dir", str(tiny_model_dir))
    assert r.exit_code == 0, r.output
    out = r.output
    assert "rules read the calibrated probabilities against the fitted cut-points" in out
    row = next(line for line in out.splitlines() if line.startswith("│ rude ") and "noul" in line)
    cells = [c.strip() for c in row.strip("│").split("│")]
    raw, cal = float(cells[2]), float(cells[3])
    assert raw > 0.98 and cal == pytest.approx(1 / (1 + ((1 - raw) / raw) ** 0.5), abs=0.002)  # Platt a=0.5
    rule = next(line for line in out.splitlines() if line.startswith("│ rude ") and "high" in line)
    assert "│ 0.8 / 0.3 " in rule and "│ 0.7 / 0.2 * " in rule  # written; fitted, applied
    assert "decision: hold (refuse) — rule rude: calibrated rude p=0.9" in out and "≥ 0.700" in out
    data = json.loads(invoke("ask", str(calibrated), "--json-state", "-s", state, "--model-dir",
                             str(tiny_model_dir), "--json").stdout)
    assert data["answers"]["rude"]["noul"] == pytest.approx(raw, abs=0.001)
    assert data["calibrated_answers"]["rude"]["noul"] == pytest.approx(cal, abs=0.001)
    assert data["cutpoints"] == [{"rule": "rude", "reads": "rude", "written": {"high": 0.8, "low": 0.3},
                                  "fitted": {"high": 0.7, "low": 0.2}, "applied": "fitted"}]


def test_an_uncalibrated_rubric_says_the_written_cut_points_apply(tmp_path: Path, tiny_model_dir: Path) -> None:
    path = tmp_path / "reply.yaml"
    path.write_text(REPLY)
    r = invoke("ask", str(path), "--json-state", "-s", '{"message": "no", "context": "c"}',
               "--model-dir", str(tiny_model_dir))
    assert r.exit_code == 0, r.output
    assert "not calibrated: rules read the raw probabilities against the written cut-points" in r.output
    assert "│ 0.8 / 0.3 * " in r.output and "decision: send (act) — rule rude: raw rude p=" in r.output


def test_rubric_check_lists_written_and_fitted_cut_points(calibrated: Path, tmp_path: Path) -> None:
    r = invoke("rubric", "check", str(calibrated))
    assert r.exit_code == 0, r.output
    assert "(1 question, 1 rule, calibrated on seams-tiny-test)" in r.output  # singular, named model
    assert "rule rude (reads rude): written high 0.8 / low 0.3; fitted high 0.7 / low 0.2 (applied)" in r.output
    two = tmp_path / "gate.yaml"
    two.write_text(GATE.replace("policy:", "  other: {type: noul, instructions: Is it long?}\npolicy:"))
    r = invoke("rubric", "check", str(two))
    assert "(2 questions, 1 rule, not calibrated)" in r.output
    assert "rule flagged (reads flagged): written ≥ 0.5 (applied); fitted not fitted" in r.output


def test_the_html_report_shows_the_cut_points(tmp_path: Path, tiny_model_dir: Path) -> None:
    rubric = tmp_path / "gate.yaml"
    rubric.write_text(GATE)
    r = invoke("eval", str(rubric), str(labelled(tmp_path, 6)), "--model-dir", str(tiny_model_dir),
               "--no-cache", "--bootstrap", "0", "--report", str(tmp_path / "report"))
    assert r.exit_code == 0, r.output
    assert "(written cut-points ≥ 0.5; written ≥ 0.5, fitted —)" in r.output  # the rule line says which apply
    page = (tmp_path / "report" / "index.html").read_text()
    assert "<h2>Cut-points</h2>" in page and "the rules read raw probabilities" in page
    assert "<td>flagged</td><td>flagged</td><td><b>≥ 0.5</b></td><td>—</td>" in page


# --------------------------------------------------------------------------- warnings and errors


def test_a_warning_is_one_line_without_python_source(tiny_model_dir: Path) -> None:
    # the built-in rubric is calibrated on the shipped model: on the tiny one it is stale
    p = seams("ask", "passage-gate", "--json-state", "-s", '{"query": "Is it so?", "passage": "yes"}',
              "--model-dir", str(tiny_model_dir))
    assert p.returncode == 0, p.stderr
    lines = p.stderr.splitlines()
    stale = [line for line in lines if "is stale" in line]
    assert len(stale) == 1 and stale[0].startswith("warning: calibration of rubric 'passage-gate' is stale")
    assert "CalibrationWarning" not in p.stderr and "warnings.warn" not in p.stderr and ".py:" not in p.stderr
    assert "calibration stale, not applied" in p.stdout


def test_inline_question_errors_name_the_option_without_pydantic_noise() -> None:
    r = invoke("ask", "-q", "Which?", "--options", "a", "-s", "x")
    assert r.exit_code == 2
    assert "error: --options: a choice needs 2–255 options, got 1" in r.output
    assert "type=value_error" not in r.output and "input_value" not in r.output
    r = invoke("ask", "-q", "How?", "--levels", "only", "-s", "x")
    assert r.exit_code == 2 and "error: --levels:" in r.output and "[type=" not in r.output


def test_every_rubric_error_is_shown_with_did_you_mean(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(REPLY.replace("policy:", "polcy:").replace("instructions: Is", "instructons: Is"))
    r = invoke("rubric", "check", str(bad))
    assert r.exit_code == 1
    fails = [line for line in r.output.splitlines() if line.startswith("fail ")]
    assert f"fail {bad}:8:1: [polcy] unknown key 'polcy'; did you mean 'policy'?" in fails
    assert any("[questions.rude.instructons] unknown key 'instructons'; did you mean 'instructions'?" in f for f in fails)
    assert any("missing required key 'policy'" in f for f in fails)
    assert "more error" not in r.output
    data = json.loads(invoke("rubric", "check", str(bad), "--json").stdout)
    assert len(data[0]["errors"]) == len(fails) >= 3


def test_a_json_state_without_json_state_gets_a_hint(calibrated: Path) -> None:
    r = invoke("ask", str(calibrated), "-s", '{"message": "hi"}')
    assert r.exit_code == 2
    assert "expects an object state, got str; the state looks like JSON: add --json-state" in r.output


def test_a_question_naming_an_absent_optional_field_is_flagged(calibrated: Path, tiny_model_dir: Path) -> None:
    r = invoke("ask", str(calibrated), "--json-state", "-s", '{"message": "no"}', "--model-dir", str(tiny_model_dir))
    assert r.exit_code == 0, r.output
    assert ("warning: question 'rude' names `context`, which the state does not have: it was asked about "
            "the state as it is") in r.output
    full = invoke("ask", str(calibrated), "--json-state", "-s", '{"message": "no", "context": "c"}',
                  "--model-dir", str(tiny_model_dir))
    assert "warning:" not in full.output


def test_calibrate_refuses_too_few_labels_before_judging(tmp_path: Path) -> None:
    rubric = tmp_path / "gate.yaml"
    rubric.write_text(GATE)
    # a model folder that does not exist: were anything judged, that would be the error
    r = invoke("calibrate", str(rubric), str(labelled(tmp_path, 10)), "--model-dir", str(tmp_path / "none"),
               "--no-cache")
    assert r.exit_code == 2
    assert "too few labels to calibrate: 'flagged' has 10; at least 50 per question are needed" in r.output
    assert "judging" not in r.output


def test_help_keeps_bracketed_text_and_version_is_printed() -> None:
    assert "[tool.seams.lint]" in invoke("lint", "--help").output
    r = invoke("--version")
    assert r.exit_code == 0 and r.output.strip() == f"seams {version('seams')}"


# --------------------------------------------------------------------------- width


def test_piped_output_is_not_wrapped_and_the_model_id_is_whole(tiny_model_dir: Path) -> None:
    long_query = "Does the passage about the long history of the river and its bridges say yes to this? " * 2
    state = json.dumps({"query": long_query, "passage": "yes"})
    p = seams("ask", "passage-gate", "--json-state", "-s", state, "--model-dir", str(tiny_model_dir))
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("passage-gate v1 · model seams-tiny-test · ")
    decision = next(line for line in lines if line.startswith("decision: "))
    assert decision.endswith("zone)")  # one line, however long
    assert max(len(line) for line in lines) > 80  # the table took the width it needs
    assert not any(line.startswith("│             │") for line in lines)  # no row wrapped onto a second line
    # COLUMNS, when set, is honoured
    narrow = seams("ask", "passage-gate", "--json-state", "-s", state, "--model-dir", str(tiny_model_dir),
                   extra_env={"COLUMNS": "80"})
    assert max(len(line) for line in narrow.stdout.splitlines() if line.startswith(("┃", "│", "┏"))) <= 80


def test_runner_output_is_wide_too(tiny_model_dir: Path) -> None:
    r = invoke("ask", "-q", "Is this a rather long question about whether the state says yes or not at all?",
               "-s", "yes", "--model-dir", str(tiny_model_dir))
    assert r.exit_code == 0, r.output
    assert "answers · model seams-tiny-test · " in r.output
    assert "│ q        │ noul │ 0.99" in r.output


# --------------------------------------------------------------------------- progress


def test_progress_is_plain_lines_on_a_pipe_and_nothing_when_quiet(tmp_path: Path, tiny_model_dir: Path) -> None:
    rubric = tmp_path / "gate.yaml"
    rubric.write_text(GATE)
    data = labelled(tmp_path, 12)
    args = ("eval", str(rubric), str(data), "--model-dir", str(tiny_model_dir), "--no-cache", "--bootstrap", "0")
    p = seams(*args)
    assert p.returncode == 0, p.stderr
    assert "judging: 12/12 (100%)" in p.stderr.splitlines()
    assert "\r" not in p.stderr and "━" not in p.stderr  # no bar redraws in a log
    assert "judging" not in seams(*args, "--quiet").stderr
    assert "judging" not in seams(*args, "--json").stderr
    r = invoke(*args)  # the runner's streams are not a terminal either
    assert r.exit_code == 0 and "judging: 12/12 (100%)" in r.output


def test_stability_reports_one_progress_over_all_its_runs(tmp_path: Path, tiny_model_dir: Path) -> None:
    rubric = tmp_path / "gate.yaml"
    rubric.write_text(GATE)
    p = seams("stability", str(rubric), str(labelled(tmp_path, 5)), "--runs", "2", "--model-dir", str(tiny_model_dir))
    assert p.returncode == 0, p.stderr
    progress = [line for line in p.stderr.splitlines() if line.startswith("judging: ")]
    assert progress[-1] == "judging: 10/10 (100%)" and all("/10 " in line for line in progress)
    assert "over 2 runs, 5 items" in p.stdout


def run_on_a_terminal(args: list[str], extra_env: dict[str, str] | None = None) -> str:
    """Run `seams ...` with stderr on a pseudo-terminal; return what was drawn there."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "seams", *args], stdout=subprocess.DEVNULL, stderr=slave,
                            env={**env(), "TERM": "xterm", **(extra_env or {})})
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=120)
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace")


def test_progress_is_a_bar_on_a_terminal_and_lines_in_ci(tmp_path: Path, tiny_model_dir: Path) -> None:
    rubric = tmp_path / "gate.yaml"
    rubric.write_text(GATE)
    args = ["eval", str(rubric), str(labelled(tmp_path, 12)), "--model-dir", str(tiny_model_dir), "--no-cache",
            "--bootstrap", "0"]
    drawn = run_on_a_terminal(args)
    assert "judging" in drawn and "12/12" in drawn and "━" in drawn  # rich's bar
    assert "judging: 12/12 (100%)" not in drawn
    in_ci = run_on_a_terminal(args, {"CI": "true"})
    assert "judging: 12/12 (100%)" in in_ci and "━" not in in_ci


def test_ask_shows_a_spinner_on_a_terminal_and_nothing_on_a_pipe(tiny_model_dir: Path) -> None:
    args = ["ask", "-q", "Is it?", "-s", "yes", "--model-dir", str(tiny_model_dir)]
    assert "judging…" in run_on_a_terminal(args)  # transient: erased once the answer is in
    piped = seams(*args)
    assert piped.returncode == 0 and piped.stderr == ""


def test_seams_score_progress_on_a_pipe(tmp_path: Path, tiny_model_dir: Path) -> None:
    rubric = tmp_path / "gate.yaml"
    rubric.write_text(GATE)
    traces = tmp_path / "traces.jsonl"
    traces.write_text("".join(json.dumps({"id": f"t{i}", "state": "yes" if i % 2 else "no"}) + "\n" for i in range(5)))
    p = seams("score", str(rubric), str(traces), "--model-dir", str(tiny_model_dir))
    assert p.returncode == 0, p.stderr
    assert p.stderr.splitlines()[-1] == "scoring: 5/5 (100%)" and "scored 5 of 5 traces" in p.stdout
    again = seams("score", str(rubric), str(traces), "--model-dir", str(tiny_model_dir))
    assert "scoring:" not in again.stderr and "scored 0 of 5 traces" in again.stdout  # nothing left to do
