"""The layering in docs/architecture.md, enforced: import-linter's contracts (pyproject.toml), a
check that every module of the package is placed in them, and what importing the core loads."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import seams

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
#: The edge: what a user runs (the CLI, the server, the reviewer's desk), never imported by the core.
EDGE = {"seams.__main__", "seams.cli", "seams.server", "seams.review"}


def _contracts() -> dict[str, dict]:
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["importlinter"]
    return {c["id"]: c for c in config["contracts"]}


def test_import_contracts_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from importlinter.cli import lint_imports

    monkeypatch.chdir(ROOT)
    code = lint_imports(config_filename=str(PYPROJECT), no_cache=True, no_logo=True)
    assert code == 0, "an import breaks the layering in docs/architecture.md (see the report above)"


def test_every_module_is_placed_in_the_layers() -> None:
    """A new top-level module must be given a layer (and, in the core, the forbidden contract),
    or the contracts would silently not cover it."""
    modules = {f"seams.{m.name}" for m in pkgutil.iter_modules(seams.__path__)}
    contracts = _contracts()
    layered = {name.strip() for layer in contracts["layers"]["layers"] for name in layer.split("|")}
    assert modules - layered == set(), "modules missing from the `layers` contract"
    assert layered - modules == set(), "the `layers` contract names modules that do not exist"
    assert set(contracts["core"]["source_modules"]) == modules - EDGE


def _loaded_after(code: str) -> set[str]:
    """Top-level packages in sys.modules after running `code` in a fresh interpreter."""
    probe = f"{code}\nimport json, sys; print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} | set(sys.modules))))"
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True, cwd=ROOT)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "code",
    [
        "import seams",
        "import seams.rubric",
        "import seams.policy",
        "import seams.decision",
        "from seams import Rubric\nRubric.builtin('passage-gate')",
    ],
)
def test_the_core_loads_no_client_server_or_fitting_stack(code: str) -> None:
    """Deciding with a rubric needs pydantic and YAML: not the HTTP client, a server framework,
    the CLI, the fitting code or training."""
    loaded = _loaded_after(code)
    heavy = {"httpx", "zstandard", "fastapi", "uvicorn", "starlette", "typer", "sklearn", "scipy", "training",
             "seams.cli", "seams.server", "seams.calibration", "seams.judges.remote"}
    assert loaded & heavy == set()


def _imports_from() -> list[tuple[str, int, str, str]]:
    """(module, line, absolute module imported from, name) for every `from X import name` in the
    package, relative imports resolved, imports under `TYPE_CHECKING` included."""
    import ast

    out = []
    for path in sorted((ROOT / "seams").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        package = ".".join(parts[:-1])  # what `.` means in this file
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            out += [(module, node.lineno, source, alias.name) for alias in node.names]
    return out


def test_no_module_imports_another_modules_private_name() -> None:
    """`_name` is private to the module that defines it: another module that needs it is told to
    make it public (and say so), not to reach in. Private *modules* (`seams.judges._wire`) may be
    imported inside their package; their public names are what is imported."""
    found = [f"{m}:{line}: from {src} import {name}" for m, line, src, name in _imports_from()
             if name.startswith("_") and not name.startswith("__") and src != m]
    assert found == [], "imports of another module's private name:\n" + "\n".join(found)


def test_no_module_imports_the_package_root() -> None:
    """`seams/__init__.py` is the curated surface at the top of the layers, so nothing below it
    imports from it (a submodule imported by name, `from . import app`, is not the root)."""
    modules = {f"seams.{m.name}" for m in pkgutil.iter_modules(seams.__path__)}
    found = []
    for m, line, src, name in _imports_from():
        if m == "seams":
            continue
        if src == "seams" and f"seams.{name}" not in modules:
            found.append(f"{m}:{line}: from seams import {name}")
    assert found == [], "imports of the package root:\n" + "\n".join(found)
