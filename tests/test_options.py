"""Parameters are validated where they are defined: the option objects at construction, fitted
state with `check_is_fitted`, and the CLI's choices by typer (its lists the library's own)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from seams.calibration.calibrators import (
    CALIBRATOR_METHODS,
    IsotonicCalibrator,
    PlattCalibrator,
    TemperatureCalibrator,
)
from seams.calibration.fit import FitOptions
from seams.calibration.metrics import Costs
from seams.calibration.thresholds import CostThresholds
from seams.cli import app
from seams.cli._common import CalibratorChoice, FormatChoice, LogLevelChoice
from seams.errors import InputError, OptionError
from seams.lint import FORMATS


@pytest.mark.parametrize("kwargs, message", [
    ({"split": 7}, "FitOptions.split must be within (0, 1), got 7"),
    ({"calibrator": "bogus"}, "FitOptions.calibrator must be auto, platt, isotonic or none, got 'bogus'"),
    ({"delta": -1}, "FitOptions.delta must be within (0, 1), got -1"),
    ({"target": 1.5}, "FitOptions.target must be within (0, 1), got 1.5"),
    ({"capacity": 2.0}, "FitOptions.capacity is a share of items within [0, 1], got 2.0"),
    ({"signal_level": 0}, "FitOptions.signal_level is a p-value within (0, 1], got 0"),
    ({"n_boot": -1}, "FitOptions.n_boot must be a non-negative integer, got -1"),
    ({"method": "guess"}, "FitOptions.method must be 'cost' or 'target', got 'guess'"),
    ({"costs": "act=1"}, "FitOptions.costs must be a Costs"),
])
def test_fit_options_are_checked_where_they_are_built(kwargs, message) -> None:
    with pytest.raises(OptionError) as info:
        FitOptions(**kwargs)
    assert str(info.value).startswith(message)
    assert isinstance(info.value, InputError) and info.value.field == next(iter(kwargs))


def test_the_reported_fit_options_are_refused() -> None:
    with pytest.raises(OptionError, match="calibrator"):  # the first of the three, in field order
        FitOptions(split=7, calibrator="bogus", delta=-1)
    FitOptions()  # the defaults hold


def test_costs_are_checked_where_they_are_built() -> None:
    with pytest.raises(OptionError, match=r"Costs.act must be a non-negative number, got -1"):
        Costs(act=-1)
    assert Costs.parse("act=10") == Costs(act=10)


@pytest.mark.parametrize("estimator, call", [
    (PlattCalibrator(), lambda e: e.predict([0.5])),
    (PlattCalibrator(), lambda e: e.to_block()),
    (IsotonicCalibrator(), lambda e: e.predict([0.5])),
    (TemperatureCalibrator(), lambda e: e.to_block()),
    (CostThresholds(), lambda e: e.predict([0.5])),
])
def test_an_unfitted_estimator_says_so(estimator, call) -> None:
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError, match="is not fitted yet"):
        call(estimator)


def test_the_cli_choices_are_the_librarys() -> None:
    assert tuple(c.value for c in CalibratorChoice) == CALIBRATOR_METHODS
    assert tuple(c.value for c in FormatChoice) == FORMATS
    assert [c.value for c in LogLevelChoice] == ["critical", "error", "warning", "info", "debug"]


def test_a_bad_log_level_is_a_usage_error_before_anything_starts() -> None:
    from seams.cli import _register

    _register()
    res = CliRunner().invoke(app, ["serve", "--log-level", "loud"])
    assert res.exit_code == 2 and "--log-level" in res.output and "loud" in res.output
