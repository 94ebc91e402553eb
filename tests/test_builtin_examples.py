"""Every example runs end to end (on a tiny stand-in model here: the figures are meaningless, the
wiring is what is checked; on the shipped model each example is one `python examples/...` away)."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from seams import judges
from seams.judges.local import LocalJudge

# The tiny stand-in is not the model the built-in rubrics are calibrated on: they warn, rightly.
pytestmark = pytest.mark.filterwarnings("ignore::seams.rubric.CalibrationWarning")

#: what the integrations' examples import beyond the base install
OPTIONAL = {"langgraph", "opentelemetry", "ray"}
EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))


@pytest.fixture(scope="module")
def tiny_judge(tmp_path_factory):
    from tinymodel import write_tiny_model

    return LocalJudge(write_tiny_model(tmp_path_factory.mktemp("tiny-256"), max_length=256), intra_op_threads=1)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path, tiny_judge, monkeypatch, capsys):
    monkeypatch.setattr(judges, "_default", tiny_judge)
    try:
        runpy.run_path(str(path), run_name="__main__")
    except ModuleNotFoundError as exc:  # an integration's example without its extra installed
        if (exc.name or "").split(".")[0] in OPTIONAL:
            pytest.skip(f"needs {exc.name} (an optional extra)")
        raise
    out = capsys.readouterr().out
    assert out.strip()
    doc = path.read_text().split('"""')[1]
    assert f"python examples/{path.name}" in doc  # the header says the one command that runs it
