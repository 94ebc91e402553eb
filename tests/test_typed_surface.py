"""The public surface is typed: the lazy names have `TYPE_CHECKING` mirrors, and mypy sees the
real types through them (tests/typing/surface.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import seams

ROOT = Path(__file__).resolve().parent.parent
#: Packages whose names are imported on first use through a module `__getattr__`.
LAZY_PACKAGES = ["seams", "seams.judges", "seams.calibration"]


def _mirror_and_lazy(package: str) -> tuple[dict[str, str], dict[str, str]]:
    """(names imported under `if TYPE_CHECKING:`, the `_LAZY` table), each as name -> last module part."""
    path = ROOT / package.replace(".", "/") / "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    mirror: dict[str, str] = {}
    lazy: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module
                mirror.update({alias.name: imp.module.rsplit(".", 1)[-1] for alias in imp.names})
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_LAZY" for t in node.targets):
            lazy = {k: v.rsplit(".", 1)[-1] for k, v in ast.literal_eval(node.value).items()}
    return mirror, lazy


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_lazy_name_has_a_type_checking_mirror(package: str) -> None:
    mirror, lazy = _mirror_and_lazy(package)
    assert lazy, f"{package} has no _LAZY table"
    assert mirror == lazy


def test_base_errors_are_exported() -> None:
    from seams.errors import InputError, JudgeError, SeamsError

    assert (seams.SeamsError, seams.JudgeError, seams.InputError) == (SeamsError, JudgeError, InputError)
    assert {"SeamsError", "JudgeError", "InputError"} <= set(seams.__all__)


def test_mypy_sees_the_public_types() -> None:
    """`seams.Rubric.builtin(...).decide(...)` is a `Decision` to mypy, not `Any`."""
    from mypy import api

    out, err, code = api.run(
        ["--config-file", str(ROOT / "pyproject.toml"), "--follow-imports=silent", str(ROOT / "tests/typing/surface.py")]
    )
    assert code == 0, out + err
