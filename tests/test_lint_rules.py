"""Loading lint rules: built-ins, a rules folder, and `[tool.seams.lint]` in pyproject.toml."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from seams.errors import InputError, RubricError
from seams.lint.rules import glob_match, load_rules, read_config
from seams.rubric import Rubric

BUILTIN = {"irreversible-migration", "name-mismatch", "secret-or-debug", "swallowed-error"}

RUBRIC = """\
name: team/no-print
questions:
  prints:
    type: noul
    instructions: The code prints to standard output instead of logging.
policy:
  outcomes: {flag: refuse, pass: act}
  rules:
    - {id: prints, question: prints, high: 0.7, low: 0.4, then: flag, else: pass}
  default: pass
"""


def test_builtin_rules_are_plain_rubrics() -> None:
    rules = {r.id: r for r in load_rules()}
    assert set(rules) == BUILTIN
    for rid, rule in rules.items():
        # the rubric file stays a plain rubric, so the rubric tools work on it unchanged
        assert Rubric.builtin(f"lint/{rid}").hash == rule.rubric.hash
        assert rule.meta.kinds and rule.meta.files
    assert rules["swallowed-error"].severity == "error" and rules["name-mismatch"].severity == "warning"
    assert rules["secret-or-debug"].meta.check == "secret-or-debug"


def test_wrapper_rule_file_and_lint_toml(tmp_path: Path) -> None:
    wrapped = "lint:\n  severity: note\n  kinds: [function]\nrubric:\n" + textwrap.indent(RUBRIC, "  ")
    (tmp_path / "no-print.yaml").write_text(wrapped)
    (tmp_path / "plain.yaml").write_text(RUBRIC.replace("team/no-print", "team/plain"))
    (tmp_path / "lint.toml").write_text('[plain]\nseverity = "error"\nfiles = ["src/**/*.py"]\n')
    rules = {r.id: r for r in load_rules(dirs=[tmp_path])}
    assert set(rules) == BUILTIN | {"no-print", "plain"}
    assert rules["no-print"].severity == "note" and rules["no-print"].meta.kinds == ["function"]
    assert rules["plain"].severity == "error" and rules["plain"].applies_to_file("src/a/b.py")
    assert not rules["plain"].applies_to_file("tests/b.py")


def test_rule_file_errors_name_file_line_and_field(tmp_path: Path) -> None:
    bad = "lint:\n  severity: fatal\nrubric:\n" + textwrap.indent(RUBRIC, "  ")
    (tmp_path / "r.yaml").write_text(bad)
    with pytest.raises(RubricError) as exc:
        load_rules(dirs=[tmp_path], builtin=False)
    assert exc.value.path.endswith("r.yaml") and exc.value.line == 2 and exc.value.field == "lint.severity"
    bad_rubric = "rubric:\n" + textwrap.indent(RUBRIC.replace("high: 0.7", "high: 1.7"), "  ")
    (tmp_path / "r.yaml").write_text(bad_rubric)
    with pytest.raises(RubricError) as exc:
        load_rules(dirs=[tmp_path], builtin=False)
    assert exc.value.line is not None and exc.value.line > 3 and "high" in str(exc.value)
    (tmp_path / "r.yaml").write_text("rubric:\n" + textwrap.indent(RUBRIC, "  ") + "extra: 1\n")
    with pytest.raises(RubricError, match="unknown key 'extra'"):
        load_rules(dirs=[tmp_path], builtin=False)


def test_pyproject_section(tmp_path: Path) -> None:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "np.yaml").write_text(RUBRIC)
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""
        [tool.seams.lint]
        rule-dirs = ["rules"]
        ignore = ["name-mismatch"]
        fail-on = "warning"
        exclude = ["vendor/**"]

        [tool.seams.lint.rules.swallowed-error]
        severity = "warning"

        [tool.seams.lint.rules.inline]
        severity = "note"
        kinds = ["class"]
        [tool.seams.lint.rules.inline.rubric]
        name = "team/inline"
        questions = {q = {type = "noul", instructions = "The class holds global mutable state."}}
        policy = {outcomes = {flag = "refuse", pass = "act"}, default = "pass", rules = [
            {id = "q", question = "q", high = 0.5, then = "flag"}]}
    """))
    cfg = read_config(tmp_path / "pyproject.toml")
    assert cfg.fail_on == "warning" and cfg.exclude == ["vendor/**"]
    rules = {r.id: r for r in load_rules(config=cfg)}
    assert "name-mismatch" not in rules and {"np", "inline"} <= set(rules)
    assert rules["swallowed-error"].severity == "warning"
    assert rules["inline"].meta.kinds == ["class"] and rules["inline"].rubric.name == "team/inline"


@pytest.mark.parametrize("toml, match", [
    ('[tool.seams.lint]\nselct = ["x"]\n', "unknown key"),
    ('[tool.seams.lint]\nselect = ["nope"]\n', "unknown rule"),
    ('[tool.seams.lint]\nfail-on = "fatal"\n', "fail-on"),
    ('[tool.seams.lint.rules.nope]\nseverity = "note"\n', "names no known rule"),
    ('[tool.seams.lint\n', "invalid TOML"),
])
def test_pyproject_errors(tmp_path: Path, toml: str, match: str) -> None:
    (tmp_path / "pyproject.toml").write_text(toml)
    with pytest.raises(InputError, match=match):
        load_rules(config=read_config(tmp_path / "pyproject.toml"))


def test_globs() -> None:
    assert glob_match("*.py", "a/b/c.py") and not glob_match("*.py", "a/b/c.pyc")
    assert glob_match("**/migrations/**/*.py", "migrations/0001.py")
    assert glob_match("**/migrations/**/*.py", "app/db/migrations/v/0001.py")
    assert not glob_match("src/*.py", "src/a/b.py") and glob_match("src/**", "src/a/b.py")
    assert glob_match(".env.*", "deploy/.env.prod")
