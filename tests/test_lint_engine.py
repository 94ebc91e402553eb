"""The lint engine with judges whose answers the tests choose: checks first, the judge for the
rest, three zones, failing closed, suppression and the baseline."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from fixed_judge import FixedJudge

from seams.answers import Answers, NoulAnswer
from seams.errors import TransportError
from seams.judges import SyncJudge
from seams.lint import Baseline, lint, load_rules, python_units
from seams.lint.baseline import finding_fingerprint
from seams.questions import Noul

#: The built-in rules are calibrated on the shipped model; these tests run other judges, on which
#: the calibration is stale and (rightly) not applied. The warning that says so is not under test.
pytestmark = pytest.mark.filterwarnings("ignore::seams.rubric.CalibrationWarning")


class KeywordJudge(SyncJudge):
    """P(yes) for every noul from words in the state's code: PLANTED → 0.95, UNSURE → 0.65,
    anything else 0.05. Counts the states it was asked about, batched or not."""

    model_id = "keyword-1"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def _p(self, state) -> float:
        code = state["code"] if isinstance(state, dict) else state
        return 0.95 if "PLANTED" in code else 0.65 if "UNSURE" in code else 0.05

    def ask(self, state, questions):
        self.asked.append(state["name"] if isinstance(state, dict) else "<text>")
        return Answers(model=self.model_id, answers={q: NoulAnswer(noul=self._p(state)) for q in questions
                                                     if isinstance(questions[q], Noul)})

    def ask_many(self, states, questions):
        return [self.ask(s, questions) for s in states]


CODE = textwrap.dedent('''\
    def read(path):
        try:
            return open(path).read()
        except:
            pass


    def fetch(url):
        try:
            return get(url)
        except TimeoutError:
            return None  # PLANTED


    def add(a, b):
        return a + b


    def total(xs):
        # UNSURE
        return sum(xs)


    def ignored(x):  # seams: ignore[name-mismatch]
        return x  # PLANTED
    ''')


def write(tmp_path: Path, code: str = CODE) -> Path:
    (tmp_path / "m.py").write_text(code)
    return tmp_path


def judge_on(rules: list) -> list:
    """The built-in rules with their model half on (they ship with it off: model 0.5 has no
    signal on code), so these tests can exercise the judge path."""
    for r in rules:
        r.meta = r.meta.model_copy(update={"judge_off": None})
    return rules


def test_checks_first_judge_for_the_rest_and_three_zones(tmp_path: Path) -> None:
    rules = judge_on([r for r in load_rules() if r.id in ("swallowed-error", "name-mismatch")])
    judge = KeywordJudge()
    result = lint([write(tmp_path)], rules, judge=judge, root=tmp_path, show_unsure=True)
    got = {(f.rule, f.unit): f for f in result.findings}
    check = got[("swallowed-error", "read")]
    assert check.source == "check" and check.probability == 1.0 and (check.start, check.end) == (4, 5)
    judged = got[("swallowed-error", "fetch")]
    assert judged.source == "judge" and judged.status == "flag" and judged.severity == "error"
    assert judged.probability == 0.95 and judged.threshold == 0.8 and (judged.start, judged.end) == (8, 12)
    band = got[("name-mismatch", "total")]
    assert band.status == "review" and band.severity == "note" and band.threshold == 0.8
    assert ("name-mismatch", "add") not in got  # p=0.05 ≤ low: a pass
    assert ("name-mismatch", "ignored") not in got and result.suppressed == 1
    # swallowed-error asks only about units with an `except`, and not about `read` (the check was sure)
    assert judge.asked.count("read") == 1  # only name-mismatch asked about it
    assert "add" in judge.asked and judge.asked.count("fetch") == 2
    assert result.failing("error") and not [f for f in result.failing("error") if f.status == "review"]
    assert len(result.failing("note")) == len(result.findings)
    hidden = lint([tmp_path], rules, judge=KeywordJudge(), root=tmp_path)
    assert [(f.rule, f.unit) for f in hidden.unsure] == [("name-mismatch", "total")]
    assert len(hidden.findings) == len(result.findings) - 1


def test_a_failing_judge_never_passes(tmp_path: Path) -> None:
    rules = judge_on([r for r in load_rules() if r.id == "name-mismatch"])
    judge = FixedJudge({}, error=TransportError("connection refused"))
    result = lint([write(tmp_path)], rules, judge=judge, root=tmp_path)
    assert {f.unit for f in result.findings} == {"read", "fetch", "add", "total"}
    assert all(f.status == "error" and f.severity == "warning" and "connection refused" in f.message
               for f in result.findings)


def test_a_rule_with_its_judge_off_is_never_asked(tmp_path: Path) -> None:
    rules = load_rules()  # as shipped: every built-in model half is off, with a measured reason
    assert rules and all(not r.asks_judge and "held-out AUC" in (r.meta.judge_off or "") for r in rules)
    judge = KeywordJudge()
    result = lint([write(tmp_path)], rules, judge=judge, root=tmp_path, show_unsure=True)
    assert judge.asked == [] and result.judged == 0
    assert [(f.rule, f.unit, f.source) for f in result.findings] == [("swallowed-error", "read", "check")]
    back_on = judge_on(rules)
    assert all(r.asks_judge for r in back_on)
    lint([tmp_path], back_on, judge=judge, root=tmp_path)
    assert "fetch" in judge.asked


def test_no_judge_runs_checks_only(tmp_path: Path) -> None:
    result = lint([write(tmp_path)], load_rules(), judge=None, root=tmp_path)
    assert [(f.rule, f.unit) for f in result.findings] == [("swallowed-error", "read")]
    assert result.judged == 0 and result.model is None


def test_changed_lines_limit_the_units(tmp_path: Path) -> None:
    write(tmp_path)
    judge = KeywordJudge()
    rules = judge_on([r for r in load_rules() if r.id == "name-mismatch"])
    result = lint([tmp_path], rules, judge=judge, root=tmp_path, changed={(tmp_path / "m.py").resolve(): {16}})
    assert judge.asked == ["add"] and result.findings == []


def test_fingerprints_survive_line_shifts_and_the_baseline_accepts(tmp_path: Path) -> None:
    rules = judge_on(load_rules())
    first = lint([write(tmp_path)], rules, judge=KeywordJudge(), root=tmp_path)
    shifted = lint([write(tmp_path, "import os\n\n\n" + CODE)], rules, judge=KeywordJudge(), root=tmp_path)
    assert [f.fingerprint for f in first.findings] == [f.fingerprint for f in shifted.findings]
    assert [f.start + 3 for f in first.findings] == [f.start for f in shifted.findings]
    Baseline.write(tmp_path / "baseline.json", first.findings)
    accepted = lint([tmp_path / "m.py"], rules, judge=KeywordJudge(), root=tmp_path,
                    baseline=Baseline.load(tmp_path / "baseline.json"))
    assert accepted.findings == [] and len(accepted.baselined) == len(first.findings)
    # an edit to a unit is judged afresh: its fingerprint changes
    edited = CODE.replace("return None  # PLANTED", "return None  # PLANTED again")
    again = lint([write(tmp_path, edited)], rules, judge=KeywordJudge(), root=tmp_path,
                 baseline=Baseline.load(tmp_path / "baseline.json"))
    assert [(f.rule, f.unit) for f in again.findings] == [("name-mismatch", "fetch"), ("swallowed-error", "fetch")]


def test_a_user_rule_with_a_text_state_judges_the_code_alone(tmp_path: Path) -> None:
    rules_dir = tmp_path / "rules"
    rules_dir.mkdir()
    (rules_dir / "no-print.yaml").write_text(textwrap.dedent("""\
        lint: {severity: note, kinds: [function], when: 'print\\('}
        rubric:
          name: team/no-print
          state: text
          questions:
            prints: {type: noul, instructions: The code prints instead of logging.}
          policy:
            outcomes: {flag: refuse, pass: act}
            rules: [{id: prints, question: prints, high: 0.8, low: 0.5, then: flag, else: pass}]
            default: pass
        """))
    (tmp_path / "m.py").write_text("def a():\n    print('PLANTED')\n\n\ndef b():\n    return 1  # PLANTED\n")
    rules = [r for r in load_rules(dirs=[rules_dir]) if r.id == "no-print"]
    judge = KeywordJudge()
    result = lint([tmp_path / "m.py"], rules, judge=judge, root=tmp_path)
    assert judge.asked == ["<text>"]  # b() does not call print: the prefilter kept it from the judge
    assert [(f.rule, f.unit, f.severity) for f in result.findings] == [("no-print", "a", "note")]


def test_fingerprint_ignores_indentation_only() -> None:
    (a,) = python_units("m.py", "def f():\n    return 1\n", kinds=("function",))
    (b,) = python_units("m.py", "\n\ndef f():\n        return 1\n", kinds=("function",))
    (c,) = python_units("m.py", "def f():\n    return 2\n", kinds=("function",))
    assert finding_fingerprint("r", a) == finding_fingerprint("r", b) != finding_fingerprint("r", c)


def _shipped_model_present() -> bool:
    from seams.judges.local import shipped_model_dir

    return (shipped_model_dir() / "config.json").is_file()


@pytest.mark.skipif(not _shipped_model_present(), reason="the shipped model is not in this tree yet")
def test_the_shipped_model_judges_a_few_units(tmp_path: Path, shipped_judge) -> None:
    """The real local model on three units: every judged unit gets a probability and a threshold
    (what it decides is measured in docs/lint.md, not asserted here)."""
    (tmp_path / "m.py").write_text(CODE.split("def add")[0])
    judge = shipped_judge
    result = lint([tmp_path], judge_on(load_rules()), judge=judge, root=tmp_path, show_unsure=True)
    assert result.judged >= 3 and result.model == judge.model_id
    for f in result.findings:
        assert f.source == "check" or (0.0 <= f.probability <= 1.0 and f.threshold is not None)


def test_inline_suppression_in_any_comment_syntax(tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text("db:\n  password: Sup3rS3cretValue  # seams: ignore[secret-or-debug]\n")
    (tmp_path / "other.yaml").write_text("db:\n  password: Sup3rS3cretValue  # seams: ignore[some-other-rule]\n")
    (tmp_path / "m.py").write_text("def f():\n    breakpoint()  # seams: ignore\n")
    result = lint([tmp_path], load_rules(), judge=None, root=tmp_path)
    assert [(f.path, f.start) for f in result.findings] == [("other.yaml", 2)]
    assert result.suppressed == 4  # (unit, rule) pairs: app.yaml once, f() for each of its three rules
