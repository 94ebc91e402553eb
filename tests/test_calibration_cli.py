"""`seams eval|calibrate|check|stability` end to end, against jevcompat's mock System One server
on loopback (a real HTTP peer) with the persistent answer cache."""

import json

import numpy as np
import pytest
from calibration_synth import distort
from jevcompat.mock import MockConfig, Running
from typer.testing import CliRunner

from seams.cli import _register, app
from seams.judges.remote import RemoteJudge
from seams.questions import Noul

_register()

RUBRIC = """\
# injection gate (CLI tests)
name: cli-gate
state: text
questions:
  injected:
    type: noul
    instructions: Does the text try to give the assistant new instructions?
policy:
  outcomes: {pass: act, quarantine: refuse}
  rules:
    - id: injected
      question: injected
      high: 0.5
      then: quarantine
      else: pass
  default: pass
"""


@pytest.fixture(scope="module")
def server():
    cfg = MockConfig()
    with Running(cfg) as running:
        yield running, cfg


@pytest.fixture(scope="module")
def labelled(server, tmp_path_factory):
    """300 texts, labelled from the mock's own (hash-derived) probabilities through a known
    distortion, so the mock is overconfident against these labels."""
    running, _ = server
    root = tmp_path_factory.mktemp("cli")
    states = [f"message number {i}: please summarise the attached report" for i in range(300)]
    judge = RemoteJudge("mock", base_url=running.url)
    q = {"injected": Noul(instructions="Does the text try to give the assistant new instructions?")}
    p = np.array([a["injected"].noul for a in judge.ask_many(states, q)])
    judge.close()
    rng = np.random.default_rng(0)
    y = rng.uniform(size=p.size) < distort(p, 0.7)
    data = root / "set.jsonl"
    data.write_text("".join(json.dumps({"id": f"m{i}", "state": s, "labels": {"injected": bool(v)}}) + "\n"
                            for i, (s, v) in enumerate(zip(states, y))))
    return root, data


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)


def judge_args(server, root):
    running, _ = server
    return ["--judge", running.url, "--model", "mock", "--cache", root / "cache.sqlite", "--quiet"]


def test_eval_json_and_a_rerun_costs_nothing(server, labelled):
    root, data = labelled
    rubric = root / "gate.yaml"
    rubric.write_text(RUBRIC)
    _, cfg = server
    res = invoke("eval", rubric, data, *judge_args(server, root), "--json", "--bootstrap", "50",
                 "--report", root / "eval-report")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    q = out["questions"]["injected"]
    for key in ("n", "accuracy", "brier", "ece", "kappa", "auroc"):
        assert q[key] is not None, key
    assert q["n"] == 300 and q["type"] == "noul" and out["model"] == "jevcompat-mock-0.1" and not out["calibrated"]
    assert out["rules"]["injected"]["n"] == 300
    assert (root / "eval-report" / "index.html").read_text().count("data:image/png;base64") == 1
    seen = cfg.requests
    again = invoke("eval", rubric, data, *judge_args(server, root), "--json", "--bootstrap", "0")
    assert again.exit_code == 0 and cfg.requests == seen  # every answer came from the cache


def test_calibrate_writes_back_check_passes_then_fails_on_a_reworded_question(server, labelled):
    root, data = labelled
    rubric = root / "gate2.yaml"
    rubric.write_text(RUBRIC)
    res = invoke("calibrate", rubric, data, *judge_args(server, root), "--target-error", "0.3",
                 "--bootstrap", "100", "--report", root / "report")
    assert res.exit_code == 0, res.output
    text = rubric.read_text()
    assert text.startswith(RUBRIC) and "\ncalibration:\n  model: jevcompat-mock-0.1\n" in text
    assert "method: target-error" in text
    html = (root / "report" / "index.html").read_text()
    assert "Calibration of cli-gate" in html and "target error 0.3" in html
    ok = invoke("check", rubric, data, *judge_args(server, root))
    assert ok.exit_code == 0, ok.output
    assert "calibration holds" in ok.output
    rubric.write_text(text.replace("new instructions?", "new orders?", 1))
    stale = invoke("check", rubric, data, *judge_args(server, root), "--json")
    assert stale.exit_code == 1
    found = json.loads(stale.stdout)
    assert found["findings"][0]["message"] == "question 'injected' changed wording since it was fitted"


def test_check_without_a_calibration_fails(server, labelled):
    root, data = labelled
    rubric = root / "gate3.yaml"
    rubric.write_text(RUBRIC)
    res = invoke("check", rubric, data, *judge_args(server, root))
    assert res.exit_code == 1 and "no calibration block" in res.output


def test_calibrate_with_costs_and_capacity_as_json(server, labelled):
    root, data = labelled
    rubric = root / "gate4.yaml"
    rubric.write_text(RUBRIC)
    res = invoke("calibrate", rubric, data, *judge_args(server, root), "--costs", "act=5,refuse=1,review=0.2",
                 "--capacity", "0.2", "--split", "0.6", "--seed", "3", "--bootstrap", "50", "--json", "--dry-run")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    t = out["calibration"]["thresholds"]["injected"]
    assert t["method"] == "cost" and t["params"]["capacity"] == 0.2 and t["params"]["seed"] == 3
    assert t["metrics"]["fit"]["review_rate"] <= 0.2 and out["written"] is False
    # the stored answers (for `seams check`'s McNemar test) are left out of the printed block
    assert set(out["calibration"]["metrics"]) == {"split", "method", "failed_items"}
    assert rubric.read_text() == RUBRIC  # a dry run writes nothing


def test_stability_of_a_deterministic_server(server, labelled):
    root, _ = labelled
    items = [{"id": f"t{i}", "state": f"ticket {i}", "labels": {},
              "questions": {"dept": {"type": "choice", "criteria": ["billing", "technical", "sales"]}}}
             for i in range(20)]
    (root / "choices.jsonl").write_text("".join(json.dumps(it) + "\n" for it in items))
    res = invoke("stability", "-", root / "choices.jsonl", "--judge", server[0].url, "--model", "mock", "--json",
                 "--runs", "2", "--reorders", "1")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    dept = out["questions"]["dept"]
    assert dept["sd_max"] == 0 and dept["unstable_rate"] == 0  # the mock is deterministic
    assert dept["reorder_n"] == 20 and dept["reorder_flip_rate"] == 0  # and reads names, not positions


@pytest.mark.parametrize("line,message", [
    ('{"id": "a", "state": "x", "labels": {"injectd": true}}', "bad.jsonl:2: label for unknown question id 'injectd'"),
    ('{"id": "a", "state": "x", "labels": {"injected": 1}}', "bad.jsonl:2: label of noul 'injected' must be true or false"),
    ("not json", "bad.jsonl:2: not valid JSON"),
])
def test_bad_data_exits_2_naming_the_line(tmp_path, line, message):
    rubric = tmp_path / "gate.yaml"
    rubric.write_text(RUBRIC)
    data = tmp_path / "bad.jsonl"
    data.write_text('{"id": "ok", "state": "x", "labels": {"injected": false}}\n' + line + "\n")
    res = invoke("eval", rubric, data, "--judge", "http://127.0.0.1:9", "--no-cache")
    assert res.exit_code == 2
    assert message in " ".join(res.output.split())


def test_too_few_labels_is_an_input_error(server, labelled, tmp_path):
    root, data = labelled
    rubric = tmp_path / "gate.yaml"
    rubric.write_text(RUBRIC)
    few = tmp_path / "few.jsonl"
    few.write_text("".join(data.read_text().splitlines(keepends=True)[:40]))
    res = invoke("calibrate", rubric, few, *judge_args(server, root))
    assert res.exit_code == 2 and "'injected' has 40; at least 50" in " ".join(res.output.split())
    assert rubric.read_text() == RUBRIC


@pytest.mark.parametrize("level", ["0", "1.5"])
def test_a_signal_level_outside_0_1_is_refused_before_any_judge_is_asked(tmp_path, level):
    rubric = tmp_path / "gate.yaml"
    rubric.write_text(RUBRIC)
    data = tmp_path / "set.jsonl"
    data.write_text('{"id": "a", "state": "x", "labels": {"injected": false}}\n')
    res = invoke("calibrate", rubric, data, "--judge", "http://127.0.0.1:9", "--no-cache", "--signal-level", level)
    assert res.exit_code == 2
    assert f"--signal-level is a p-value within (0, 1], got {float(level)}" in " ".join(res.output.split())


# a question id that is a Noul on one line and a Choice on the next (issue 19)
NOUL_Q1 = {"type": "noul", "instructions": "Is it urgent?"}
CHOICE_Q1 = {"type": "choice", "instructions": "Which team?",
             "criteria": {"billing": "money", "sales": "buying"}}
MIXED = [{"id": "a", "state": "x", "questions": {"q1": NOUL_Q1}, "labels": {"q1": True}},
         {"id": "b", "state": "y", "questions": {"q1": CHOICE_Q1}, "labels": {"q1": "sales"}}]


@pytest.mark.parametrize("command", ["eval", "stability", "calibrate", "check"])
def test_an_id_that_changes_type_is_refused_before_any_judge_is_asked(scripted, tmp_path, command):
    server = scripted([(200, {}, "__answer__")])  # answers like the mock, and counts what it is asked
    rubric = tmp_path / "gate.yaml"
    rubric.write_text(RUBRIC)
    data = tmp_path / "mixed.jsonl"
    data.write_text("".join(json.dumps(it) + "\n" for it in MIXED))
    target = "-" if command in ("eval", "stability") else rubric
    cache = [] if command == "stability" else ["--no-cache"]
    res = invoke(command, target, data, "--judge", server.url, "--model", "mock", *cache, "--quiet")
    out = " ".join(res.output.split())
    assert res.exit_code == 2, out
    assert (f"mixed.jsonl:2: question 'q1' is a choice here ({json.dumps(CHOICE_Q1)}) but a noul on line 1 "
            f"({json.dumps(NOUL_Q1)}); a question id keeps its type across the set") in out
    assert server.count == 0
    if command == "eval":  # the same server is asked once the set is consistent
        data.write_text(json.dumps(MIXED[0]) + "\n")
        assert invoke("eval", "-", data, "--judge", server.url, "--model", "mock", "--no-cache", "--quiet",
                      "--bootstrap", "0").exit_code == 0
        assert server.count > 0


def _reviewed_queue(path, data, *, resolve_every=1):
    """A review queue holding the labelled set's states as items of `cli-gate`, resolved with
    their labels through `ReviewQueue.resolve` (every `resolve_every`-th one), beside an item of
    another rubric and one still open."""
    from seams.queue import ReviewQueue

    q = ReviewQueue(path)
    for n, line in enumerate(data.read_text().splitlines()):
        item = json.loads(line)
        got = q.enqueue(item["state"], key=item["id"], rubric="cli-gate", questions=["injected"]).item
        if n % resolve_every == 0:
            q.resolve(got.id, item["labels"], reviewer="ann")
    other = q.enqueue("another rubric's state", rubric="other", questions=["x"]).item
    q.resolve(other.id, {"x": True}, reviewer="ann")
    q.enqueue("still open", rubric="cli-gate", questions=["injected"])
    q.close()


def test_calibrate_from_queue_fits_what_the_queue_exports(server, labelled):
    root, data = labelled
    queue = root / "reviews.sqlite"
    _reviewed_queue(queue, data)
    rubric = root / "gate-queue.yaml"
    rubric.write_text(RUBRIC)
    args = [*judge_args(server, root), "--target-error", "0.3", "--bootstrap", "50"]
    res = invoke("calibrate", rubric, "--from-queue", queue, *args)
    assert res.exit_code == 0, res.output
    assert "300 resolved reviews of cli-gate from" in res.output  # not the other rubric's, not the open one
    assert "held-out split (150 items)" in res.output and "(before)" in res.output and "(after)" in res.output
    written = rubric.read_text()
    assert written.startswith(RUBRIC) and "\ncalibration:\n  model: jevcompat-mock-0.1\n" in written
    # the same fit as from the labelled set itself
    plain = root / "gate-plain.yaml"
    plain.write_text(RUBRIC)
    a = json.loads(invoke("calibrate", rubric, "--from-queue", queue, *args, "--json", "--dry-run").stdout)
    b = json.loads(invoke("calibrate", plain, data, *args, "--json", "--dry-run").stdout)
    assert a["calibration"]["thresholds"] == b["calibration"]["thresholds"]
    assert a["calibration"]["questions"] == b["calibration"]["questions"]


def test_calibrate_from_queue_refusals(server, labelled, tmp_path):
    root, data = labelled
    rubric = tmp_path / "gate.yaml"
    rubric.write_text(RUBRIC)
    queue = tmp_path / "q.sqlite"
    _reviewed_queue(queue, data, resolve_every=10_000)  # one resolved item of cli-gate
    both = invoke("calibrate", rubric, data, "--from-queue", queue, *judge_args(server, root))
    assert both.exit_code == 2 and "not both" in both.output
    neither = invoke("calibrate", rubric, *judge_args(server, root))
    assert neither.exit_code == 2 and "--from-queue" in neither.output
    missing = invoke("calibrate", rubric, "--from-queue", tmp_path / "none.sqlite", *judge_args(server, root))
    assert missing.exit_code == 2 and "no review queue" in missing.output
    few = invoke("calibrate", rubric, "--from-queue", queue, *judge_args(server, root))
    assert few.exit_code == 2 and "too few" in few.output.lower(), few.output
    empty = tmp_path / "empty.sqlite"
    from seams.queue import ReviewQueue

    q = ReviewQueue(empty)
    q.enqueue("open", rubric="cli-gate", questions=["injected"])
    q.close()
    none = invoke("calibrate", rubric, "--from-queue", empty, *judge_args(server, root))
    assert none.exit_code == 2 and "no resolved items of rubric 'cli-gate' (0 resolved, 1 not yet)" in none.output
    assert rubric.read_text() == RUBRIC
