"""Type-checked, never run: what a type checker sees of the public surface.

mypy checks this file in `.ci/run` and in tests/test_typed_surface.py; each `assert_type` fails
the check when a public name degrades to `Any` (a lazy import without its `TYPE_CHECKING` mirror)
or changes type.
"""

from __future__ import annotations

from typing import assert_type

import seams
from seams.calibration import LabelledSet
from seams.decision import Decision
from seams.errors import InputError, JudgeError, SeamsError
from seams.judges import Judge, LocalJudge, RemoteJudge
from seams.rubric import Rubric
from seams.rubric.calibration import CalibrationBlock


async def surface(judge: Judge) -> None:
    gate = seams.Rubric.builtin("passage-gate")
    assert_type(gate, Rubric)
    assert_type(gate.decide({"query": "q", "passage": "p"}, judge=judge), Decision)
    assert_type(await gate.adecide({"query": "q", "passage": "p"}, judge=judge), Decision)
    assert_type(seams.Decision, type[Decision])
    assert_type(seams.SeamsError, type[SeamsError])
    assert_type(seams.JudgeError, type[JudgeError])
    assert_type(seams.InputError, type[InputError])
    assert_type(seams.LocalJudge, type[LocalJudge])
    assert_type(seams.RemoteJudge, type[RemoteJudge])
    assert_type(gate.calibration, CalibrationBlock | None)
    assert_type(LabelledSet, type[LabelledSet])
