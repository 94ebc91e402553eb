"""seams' pytest plugin: a local judge, cassettes, and assertions that pin a rubric's behaviour.

Registered through the `pytest11` entry point, so it is active wherever seams is installed.
pytest imports this module at start-up in every project, so it imports nothing of seams until a
fixture or an assertion is used.

Fixtures
--------
``seams_judge``
    The local judge (session-wide, loaded once): the shipped model, or ``--seams-model-dir DIR``.
``seams_cassette``
    A factory ``seams_cassette(name=None, judge=None) -> Cassette`` of record/replay cassettes
    stored under ``cassettes/<test module>/<name>.jsonl`` beside the test file. By default a test
    only replays (offline, no model needed); ``--seams-record=new`` records what is missing against
    the judge (``seams_judge`` unless one is passed), ``--seams-record=all`` records afresh.

Assertions (``from seams.pytest_plugin import ...``)
----------------------------------------------------
``assert_calibration_holds(rubric, data, judge)``
    What ``seams check`` asserts — the calibration is not stale, no metric fell beyond its stored
    interval, the answers did not flip significantly, the error rate on automated decisions is
    within its stored interval — failing with the findings and the items behind them.
``assert_error_rate(rubric, data, judge, at_most=...)``
    The error rate on automated decisions (act or refuse) of each thresholded rule is at most a
    bound, failing with the items decided wrongly.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .calibration.dataset import LabelledSet
    from .calibration.run import RunResult
    from .judges.base import Judge
    from .judges.cassette import Cassette
    from .rubric import Rubric

RECORD_MODES = {"none": "replay", "new": "auto", "all": "record"}
#: How many items a failure message names before it says "and N more".
SHOWN = 10


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("seams")
    group.addoption("--seams-model-dir", default=None,
                    help="model directory for the seams_judge fixture (default: the shipped model)")
    group.addoption("--seams-record", default="none", choices=sorted(RECORD_MODES),
                    help="seams cassettes: none = replay only (default), new = record missing "
                         "interactions, all = record every cassette afresh")
    parser.addini("seams_model_dir", "model directory for the seams_judge fixture", default=None)
    parser.addini("seams_cassette_dir", "cassette folder, relative to each test file (default: cassettes)",
                  default="cassettes")


@pytest.fixture(scope="session")
def seams_judge(pytestconfig: pytest.Config) -> Judge:
    """The local judge, loaded once for the session."""
    from .judges.local import LocalJudge

    model_dir = pytestconfig.getoption("--seams-model-dir") or pytestconfig.getini("seams_model_dir")
    return LocalJudge(model_dir) if model_dir else LocalJudge()


@pytest.fixture
def seams_cassette(request: pytest.FixtureRequest) -> Callable[..., Cassette]:
    """A factory of cassettes for this test (see the module docstring)."""
    from .errors import CassetteError
    from .judges.cassette import Cassette

    mode = RECORD_MODES[request.config.getoption("--seams-record")]
    folder = Path(request.path).parent / request.config.getini("seams_cassette_dir") / Path(request.path).stem

    def make(name: str | None = None, judge: Judge | None = None) -> Cassette:
        path = folder / f"{_safe(name or request.node.name)}.jsonl"
        if mode == "replay":
            if not path.exists():
                pytest.fail(f"seams cassette {path} does not exist: record it once against a real judge "
                            f"with `pytest --seams-record=new`", pytrace=False)
            return Cassette(path, mode="replay", model_id=judge.model_id if judge is not None else None)
        recorder = judge if judge is not None else request.getfixturevalue("seams_judge")
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            return Cassette(path, recorder, mode=mode)  # type: ignore[arg-type]
        except CassetteError as exc:  # pragma: no cover - only a damaged file gets here
            pytest.fail(str(exc), pytrace=False)

    return make


def _safe(name: str) -> str:
    """A test id as a file name: parametrised ids carry brackets, slashes and spaces."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "cassette"


# --------------------------------------------------------------------------- assertions


def _inputs(rubric: Rubric | str | Path, data: LabelledSet | str | Path) -> tuple[Rubric, LabelledSet]:
    from .calibration.dataset import LabelledSet, load
    from .rubric import Rubric

    rubric = Rubric.resolve(rubric)
    if not isinstance(data, LabelledSet):
        data = load(data, rubric.questions)
    return rubric, data


def _run(rubric: Rubric, dataset: LabelledSet, judge: Judge | None) -> RunResult:
    """Every item asked once; an item the judge failed on fails the assertion (never skipped)."""
    from .calibration.run import run_set
    from .judges import default_judge

    run = run_set(dataset, judge if judge is not None else default_judge(), rubric=rubric)
    if run.errors:
        pytest.fail(f"rubric {rubric.name!r}: the judge failed on {len(run.errors)} of {len(dataset)} items:\n"
                    + _listing([f"{i}: {e}" for i, e in run.errors.items()]), pytrace=False)
    return run


def _listing(lines: list[str]) -> str:
    shown = [f"    {line}" for line in lines[:SHOWN]]
    if len(lines) > SHOWN:
        shown.append(f"    ... and {len(lines) - SHOWN} more")
    return "\n".join(shown)


def _flipped_items(rubric: Rubric, dataset: LabelledSet, run: RunResult, qid: str) -> list[str]:
    """The items whose discrete answer to `qid` differs from the stored run, by id."""
    from .calibration.extract import current_answers, decode_answers, ids_hash, question_data

    answers = rubric.calibration.metrics.answers if rubric.calibration else None
    stored = (answers or {}).get(qid)
    qd = question_data(dataset, run, qid)
    if stored is None or stored.ids != ids_hash(qd.keys):
        return []
    before, after = decode_answers(stored), current_answers(qd)
    names = sorted(qd.ids)

    def shown(v: int) -> str:  # a Noul's stored answer is yes/no; a Choice's or Score's an index
        return ("no", "yes")[v] if qd.kind == "noul" else f"#{v}"

    return [f"{names[i]}: {shown(int(before[i]))} -> {shown(int(after[i]))}"
            for i in range(len(names)) if before[i] != after[i]]


def _rule_errors(rubric: Rubric, dataset: LabelledSet, run: RunResult) -> dict[str, tuple[dict[str, Any], list[str], bool]]:
    """Per thresholded rule (and gate): its zone metrics, the items it decided wrongly, whether it is a gate.

    The thresholds are the calibrated ones when the calibration applies, else the rubric's own —
    the ones the rubric decides with."""
    from .calibration.check import served_model
    from .calibration.extract import rule_data, rules_and_gates
    from .calibration.metrics import zone_metrics

    cal = rubric.calibration
    applies = cal is not None and not rubric.stale_reasons(served_model(run))
    transform = cal.transform if applies else None  # type: ignore[union-attr]
    out = {}
    for unit, rule, is_gate in rules_and_gates(rubric.policy.rules):
        rt = (cal.gates if is_gate else cal.thresholds).get(rule.id) if applies else None  # type: ignore[union-attr]
        high, low = (rt.high, rt.low) if rt is not None else (rule.high, rule.effective_low)
        ids, p, y = rule_data(rule, rubric.questions, dataset, run, transform)
        if not len(ids):
            continue
        wrong = [f"{i}: p = {pi:.3f} {f'>= high {high:.3f}' if pi >= high else f'<= low {low:.3f}'}, labelled {yi}"
                 for i, pi, yi in zip(ids, p, y) if (pi >= high and not yi) or (low >= pi < high and yi)]
        out[unit] = (zone_metrics(p, y, high, low), wrong, is_gate)
    return out


def assert_calibration_holds(rubric: Rubric | str | Path, data: LabelledSet | str | Path,
                             judge: Judge | None = None, *, alpha: float = 0.01) -> None:
    """Fail the test the way `seams check` fails CI, naming the items behind each failure.

    `rubric` is a `Rubric`, a file or a built-in name; `data` a `LabelledSet` or a labelled file;
    `judge` the judge to check (default the shipped model) — a `seams_cassette` replays offline.
    """
    from .calibration.check import check_calibration

    rubric, dataset = _inputs(rubric, data)
    run = _run(rubric, dataset, judge)
    result = check_calibration(rubric, dataset, run, alpha=alpha)
    if result.ok:
        return
    lines = [f"calibration of rubric {rubric.name!r} does not hold on {len(dataset)} items:"]
    errors: dict[str, tuple[dict[str, Any], list[str], bool]] | None = None
    listed: set[str] = set()
    for f in result.findings:
        if f.level != "fail":
            continue
        lines.append(f"  {f.where}: {f.message}")
        if "flipped" in f.message and f.where not in listed:  # two flip tests, one list of items
            listed.add(f.where)
            lines.append(_listing(_flipped_items(rubric, dataset, run, f.where)))
        elif f.where.startswith("rule ") and "error rate" in f.message:
            errors = errors if errors is not None else _rule_errors(rubric, dataset, run)
            lines.append(_listing(errors.get(f.where.removeprefix("rule "), ({}, [], False))[1]))
    pytest.fail("\n".join(lines), pytrace=False)


def assert_error_rate(rubric: Rubric | str | Path, data: LabelledSet | str | Path, judge: Judge | None = None,
                      *, at_most: float) -> None:
    """Fail when any rule's error rate on automated decisions exceeds `at_most`.

    The error rate is the share of wrong decisions among those the rule made automatically (its
    `then` outcome at or above `high`, its `else` at or below `low`; the band is a person's),
    measured on every item of `data` with the thresholds the rubric decides with. Gates are not
    measured: a gate only passes a case on to its rule, which makes the decision. A rule that
    automates nothing passes.
    """
    if not 0.0 <= at_most <= 1.0:
        raise ValueError(f"at_most is an error rate between 0 and 1, got {at_most}")
    rubric, dataset = _inputs(rubric, data)
    run = _run(rubric, dataset, judge)
    failed = []
    for unit, (z, wrong, is_gate) in _rule_errors(rubric, dataset, run).items():
        rate = z.get("error_rate")
        if not is_gate and rate is not None and rate > at_most:
            failed.append(f"  rule {unit}: {z['errors']} wrong of {z['automated']} automated decisions "
                          f"(error rate {rate:.4f} > {at_most}):\n{_listing(wrong)}")
    if failed:
        pytest.fail(f"rubric {rubric.name!r} on {len(dataset)} items:\n" + "\n".join(failed), pytrace=False)


__all__ = ["assert_calibration_holds", "assert_error_rate"]
