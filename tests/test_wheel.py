"""The built wheel: the runtime package and its data, and nothing of the repository around it
(no training pipeline, no builder scripts, no paths of the machine it was built on)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MACHINE_PATH = re.compile(r"/(?:work|root|home)/")
IMPORTS_TRAINING = re.compile(r"^\s*(?:from|import)\s+(?:seams\.)?training\b", re.MULTILINE)
#: The shipped model's files are written by the training pipeline (`training/`), not by hand.
MODEL_DIR = "seams/models/"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[zipfile.ZipFile]:
    """Build the wheel as a user's pip would, offline: no index, the installed hatchling."""
    out = tmp_path_factory.mktemp("wheel")
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        check=True, capture_output=True, text=True, env=env,
    )
    (built,) = out.glob("seams-*.whl")
    with zipfile.ZipFile(built) as zf:
        yield zf


def _texts(wheel: zipfile.ZipFile) -> dict[str, str]:
    texts = {}
    for name in wheel.namelist():
        try:
            texts[name] = wheel.read(name).decode("utf-8")
        except UnicodeDecodeError:  # the ONNX weights
            continue
    return texts


def test_wheel_holds_the_package_its_rubrics_and_type_marker(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    tops = {n.split("/", 1)[0] for n in names}
    assert tops == {"seams", "seams-0.1.0.dist-info"}
    model = "seams/models/seams-minilm/"
    assert {"seams/py.typed", "seams/_rubrics/passage-gate.yaml", model + "model.onnx", model + "encoder.onnx",
            model + "towers.npz"} <= names
    rubrics = {p.relative_to(ROOT / "rubrics").as_posix() for p in (ROOT / "rubrics").rglob("*.yaml")}
    assert {n.removeprefix("seams/_rubrics/") for n in names if n.startswith("seams/_rubrics/")} >= rubrics


def test_wheel_holds_the_review_desks_templates_script_and_style(wheel: zipfile.ZipFile) -> None:
    """`seams review` serves its pages from the package alone: nothing comes from a CDN."""
    names = set(wheel.namelist())
    desk = ROOT / "seams" / "review"
    shipped = {p.relative_to(ROOT).as_posix() for d in ("templates", "static") for p in (desk / d).iterdir()}
    assert {"seams/review/templates/item.html", "seams/review/static/desk.js", "seams/review/static/desk.css"} <= shipped
    assert shipped <= names
    pages = [wheel.read(n).decode() for n in shipped]
    assert [p for p in pages if re.search(r"(?:src|href)=\"(?:https?:)?//", p)] == []


def test_wheel_has_no_training_code_or_scripts(wheel: zipfile.ZipFile) -> None:
    names = wheel.namelist()
    assert [n for n in names if re.search(r"(^|/)(training|scripts)/", n)] == []
    assert [n for n, text in _texts(wheel).items() if n.endswith(".py") and IMPORTS_TRAINING.search(text)] == []


def test_wheel_code_and_rubrics_hold_no_machine_paths(wheel: zipfile.ZipFile) -> None:
    found = {n: MACHINE_PATH.findall(t) for n, t in _texts(wheel).items() if not n.startswith(MODEL_DIR)}
    assert {n: hits for n, hits in found.items() if hits} == {}


def test_shipped_model_files_hold_no_machine_paths(wheel: zipfile.ZipFile) -> None:
    found = {n: MACHINE_PATH.findall(t) for n, t in _texts(wheel).items() if n.startswith(MODEL_DIR)}
    assert {n: hits for n, hits in found.items() if hits} == {}
