"""Lint rules: a rubric plus what code it applies to, how severe a finding is, and its message.

A rule IS a rubric: its questions, policy and calibration live in an ordinary rubric file, so
`seams rubric check`, `seams calibrate` and `seams check` work on it unchanged. The lint-only
part (unit kinds, file globs, a prefilter, severity, message) lives beside it, in one of:

* a `lint.toml` in the rules folder, one table per rule id (how the built-in rules in
  `rubrics/lint/` are described — their rubric files stay plain rubrics);
* a rule file that wraps both, for user rules that prefer one file::

      lint: {severity: warning, kinds: [function, method], files: ["*.py"]}
      rubric: {name: ..., questions: ..., policy: ...}

* `[tool.seams.lint.rules.<id>]` in `pyproject.toml`, which may also point at a rubric
  (`rubric = "path.yaml"`) or hold one inline (`[tool.seams.lint.rules.<id>.rubric]`).

Later sources override earlier ones field by field: built-ins, then rule folders, then
`pyproject.toml`. A user rule with a built-in's id replaces it.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..errors import InputError, RubricError, validation_problems
from ..rubric import Rubric, RubricSpec
from ..rubric.loader import located_error, parse_yaml, plain, position, read_text
from .units import KINDS

Severity = Literal["error", "warning", "note"]
#: Order of severities, for `--fail-on`: a finding fails the run at or above the chosen one.
SEVERITY_RANK: dict[str, int] = {"note": 0, "warning": 1, "error": 2}
#: The fields a lint rubric's object state may declare: what `Unit.state()` provides.
STATE_FIELDS = ("kind", "name", "path", "code")
META_FILE = "lint.toml"


class LintMeta(BaseModel):
    """The lint-only part of a rule. Unknown keys are rejected, like a rubric's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    severity: Severity = "warning"
    kinds: list[str] = Field(default_factory=lambda: ["function", "method"], min_length=1)
    files: list[str] = Field(default_factory=lambda: ["*.py"], min_length=1)
    exclude: list[str] = Field(default_factory=list)
    #: A regular expression a unit's text must match before the judge is asked: a cheap
    #: relevance filter (no `except` → nothing can swallow an error).
    when: str | None = None
    message: str | None = None
    #: A deterministic check (see `checks.CHECKS`) run before the judge; certain hits skip it.
    check: str | None = None
    enabled: bool = True
    #: Why the judge is not asked for this rule (its deterministic check still runs): a rule whose
    #: model half was measured to carry no signal is switched off here, with the measurement, so
    #: it costs no judge calls and `seams lint` says why once per run. `""` turns the judge back on
    #: (say, for a System One judge measured to read code).
    judge_off: str | None = None

    @field_validator("kinds")
    @classmethod
    def _kinds(cls, value: list[str]) -> list[str]:
        bad = [k for k in value if k not in KINDS]
        if bad:
            raise ValueError(f"unknown unit kind(s) {bad}; known: {list(KINDS)}")
        return value

    @field_validator("when")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"`when` is not a valid regular expression: {exc}") from None
        return value

    @field_validator("judge_off")
    @classmethod
    def _reason(cls, value: str | None) -> str | None:
        return value.strip() or None if value is not None else None

    @field_validator("check")
    @classmethod
    def _known_check(cls, value: str | None) -> str | None:
        from .checks import CHECKS

        if value is not None and value not in CHECKS:
            raise ValueError(f"unknown check {value!r}; known: {sorted(CHECKS)}")
        return value


@dataclass
class Rule:
    """A loaded lint rule: its id, its rubric, its lint metadata and where it came from."""

    id: str
    rubric: Rubric
    meta: LintMeta
    source: str
    _when: re.Pattern[str] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self._when = re.compile(self.meta.when) if self.meta.when else None

    @property
    def severity(self) -> str:
        return self.meta.severity

    @property
    def message(self) -> str:
        return self.meta.message or self.rubric.spec.description or self.id

    def applies_to_file(self, rel_path: str) -> bool:
        return any(glob_match(g, rel_path) for g in self.meta.files) and not any(
            glob_match(g, rel_path) for g in self.meta.exclude
        )

    @property
    def asks_judge(self) -> bool:
        """False when the rule's model half is switched off (`judge_off`)."""
        return self.meta.judge_off is None

    def wants(self, text: str) -> bool:
        """Whether a unit goes to the judge: the rule asks one, and the unit's text passes its
        prefilter (always, without one)."""
        return self.asks_judge and (self._when is None or self._when.search(text) is not None)

    def state_for(self, unit_state: dict[str, str]) -> Any:
        """The unit's state in the shape the rubric declares (text: the code alone)."""
        spec = self.rubric.spec.state
        if spec.type == "text":
            return unit_state["code"]
        if spec.fields:
            return {k: unit_state[k] for k in spec.fields}
        return unit_state


@dataclass
class LintConfig:
    """`[tool.seams.lint]` of a `pyproject.toml`, paths resolved against its folder."""

    root: Path
    rule_dirs: list[Path] = field(default_factory=list)
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    fail_on: str | None = None
    baseline: Path | None = None
    judge: str | None = None
    cache: Path | None = None
    rules: dict[str, dict[str, Any]] = field(default_factory=dict)
    path: Path | None = None


_CONFIG_KEYS = {"rules", "rule-dirs", "select", "ignore", "exclude", "fail-on", "baseline", "judge", "cache"}


def find_pyproject(start: Path) -> Path | None:
    """The nearest `pyproject.toml` at or above `start`."""
    for folder in [start, *start.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def read_config(pyproject: Path | None) -> LintConfig:
    """Read `[tool.seams.lint]`; an empty config when there is no file or no section."""
    if pyproject is None:
        return LintConfig(root=Path.cwd())
    where = str(pyproject)
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{where}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{where}: invalid TOML: {exc}") from None
    section = data.get("tool", {}).get("seams", {}).get("lint", {})
    root = pyproject.parent.resolve()
    cfg = LintConfig(root=root, path=pyproject)
    if not isinstance(section, dict):
        raise InputError(f"{where}: [tool.seams.lint] must be a table")
    unknown = sorted(set(section) - _CONFIG_KEYS)
    if unknown:
        raise InputError(f"{where}: [tool.seams.lint] has unknown key(s) {unknown}; known: {sorted(_CONFIG_KEYS)}")

    def strings(key: str) -> list[str]:
        value = section.get(key, [])
        value = [value] if isinstance(value, str) else value
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise InputError(f"{where}: [tool.seams.lint] {key} must be a string or a list of strings")
        return value

    cfg.rule_dirs = [root / d for d in strings("rule-dirs")]
    cfg.select = strings("select") if "select" in section else None
    cfg.ignore = strings("ignore")
    cfg.exclude = strings("exclude")
    for key in ("fail-on", "baseline", "judge", "cache"):
        value = section.get(key)
        if value is not None and not isinstance(value, str):
            raise InputError(f"{where}: [tool.seams.lint] {key} must be a string")
    fail_on = section.get("fail-on")
    if fail_on is not None and fail_on not in SEVERITY_RANK:
        raise InputError(f"{where}: [tool.seams.lint] fail-on must be one of {list(SEVERITY_RANK)}, got {fail_on!r}")
    cfg.fail_on = fail_on
    cfg.baseline = root / section["baseline"] if section.get("baseline") else None
    cfg.cache = root / section["cache"] if section.get("cache") else None
    cfg.judge = section.get("judge")
    rules = section.get("rules", {})
    if not isinstance(rules, dict) or not all(isinstance(v, dict) for v in rules.values()):
        raise InputError(f"{where}: [tool.seams.lint.rules] must hold one table per rule id")
    cfg.rules = rules
    return cfg


# --------------------------------------------------------------------------- loading


def builtin_dir() -> Path:
    """The folder of the built-in lint rules (in the wheel or the source tree)."""
    from ..rubric import builtin_path

    return builtin_path("lint/swallowed-error").parent


def load_rules(*, dirs: Sequence[Path] = (), config: LintConfig | None = None, builtin: bool = True) -> list[Rule]:
    """Every enabled rule: built-ins, then each folder, then `pyproject.toml`, in that order.

    Raises `RubricError` (naming the file, line and field) for a bad rule, `InputError` for a
    missing folder or an unknown rule id in `select`/`ignore`.
    """
    cfg = config or LintConfig(root=Path.cwd())
    rules: dict[str, Rule] = {}
    if builtin:
        rules.update(load_dir(builtin_dir()))
    for d in [*cfg.rule_dirs, *dirs]:
        if not Path(d).is_dir():
            raise InputError(f"no such rules folder: {d}")
        rules.update(load_dir(Path(d)))
    where = str(cfg.path or "pyproject.toml")
    for rid, table in cfg.rules.items():
        table = dict(table)
        rubric_ref = table.pop("rubric", None)
        if rubric_ref is not None:
            rubric = _config_rubric(rubric_ref, cfg.root, where, rid)
            base = rules[rid].meta.model_dump() if rid in rules else {}
            rules[rid] = Rule(rid, rubric, _meta({**base, **table}, where, rid), where)
        elif rid in rules:
            rule = rules[rid]
            rule.meta = _meta({**rule.meta.model_dump(), **table}, where, rid)
            rule.__post_init__()
        else:
            raise InputError(f"{where}: [tool.seams.lint.rules.{rid}] names no known rule and gives no `rubric`; "
                             f"known: {sorted(rules)}")
    for key, ids in (("select (or --rule)", cfg.select or []), ("ignore", cfg.ignore)):
        unknown = sorted(set(ids) - set(rules))
        if unknown:
            raise InputError(f"{key} names unknown rule(s) {unknown}; known: {sorted(rules)}")
    chosen = [r for r in rules.values() if r.meta.enabled and r.id not in cfg.ignore]
    if cfg.select is not None:
        chosen = [r for r in chosen if r.id in cfg.select]
    return sorted(chosen, key=lambda r: r.id)


def load_dir(folder: Path) -> dict[str, Rule]:
    """The rules of one folder: each `*.yaml`, with its metadata from `lint.toml` if any."""
    metas = _read_meta_file(folder / META_FILE)
    rules: dict[str, Rule] = {}
    for path in sorted(folder.glob("*.y*ml")):
        rule = load_rule_file(path, metas.get(path.stem))
        rules[rule.id] = rule
    unused = sorted(set(metas) - set(rules))
    if unused:
        raise InputError(f"{folder / META_FILE}: table(s) {unused} name no rule file in {folder}")
    return rules


def load_rule_file(path: Path, meta: Mapping[str, Any] | None = None) -> Rule:
    """One rule file: a plain rubric (metadata given) or a `lint:` + `rubric:` wrapper."""
    text = read_text(path)
    doc = parse_yaml(text, str(path))
    if "rubric" in doc:
        extra = sorted(str(k) for k in doc if k not in ("rubric", "lint", "id"))
        if extra:
            line, col = position(doc, [extra[0]])
            raise RubricError(f"unknown key {extra[0]!r} in a lint rule file (keys: id, lint, rubric)",
                              path=str(path), line=line, column=col)
        node = doc["rubric"]
        try:
            RubricSpec.model_validate(plain(node))  # first, for an error that names its line
        except ValidationError as exc:
            raise located_error(exc, node, str(path)) from None
        rubric = _semantics(plain(node), str(path), text)
        raw_meta = {**(meta or {}), **plain(doc.get("lint") or {})}
        rid = str(doc.get("id") or path.stem)
        try:
            lint_meta = LintMeta.model_validate(raw_meta)
        except ValidationError as exc:
            first = validation_problems(exc)[0]
            line, col = position(doc, ["lint", *first.loc])
            raise RubricError(first.message, path=str(path), line=line, column=col,
                              field=f"lint.{first.field}" if first.field else "lint") from None
    else:
        rubric = Rubric.loads(text, path=str(path))
        rid = path.stem
        lint_meta = _meta(meta or {}, str(path.parent / META_FILE), rid)
    _check_state(rubric, str(path))
    return Rule(rid, rubric, lint_meta, str(path))


def _semantics(data: dict[str, Any], path: str, text: str) -> Rubric:
    try:
        rubric = Rubric.from_dict(data)
    except RubricError as exc:
        raise RubricError(exc.message, path=path, field=f"rubric.{exc.field}" if exc.field else "rubric") from None
    rubric.path, rubric.source = path, text
    return rubric


def _config_rubric(ref: Any, root: Path, where: str, rid: str) -> Rubric:
    if isinstance(ref, str):
        return Rubric.load(root / ref)
    if isinstance(ref, dict):
        try:
            return Rubric.from_dict(ref)
        except RubricError as exc:
            raise RubricError(exc.message, path=where, field=f"tool.seams.lint.rules.{rid}.rubric.{exc.field}") from None
    raise InputError(f"{where}: [tool.seams.lint.rules.{rid}] rubric must be a path or a table")


def _meta(data: Mapping[str, Any], where: str, rid: str) -> LintMeta:
    try:
        return LintMeta.model_validate(dict(data))
    except ValidationError as exc:
        first = validation_problems(exc)[0]
        raise RubricError(first.message, path=where, field=f"{rid}.{first.field}") from None


def _read_meta_file(path: Path) -> dict[str, dict[str, Any]]:
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise RubricError(f"invalid TOML: {exc}", path=str(path)) from None
    bad = [k for k, v in data.items() if not isinstance(v, dict)]
    if bad:
        raise RubricError(f"every top-level entry must be a table named after a rule; {bad} are not", path=str(path))
    return data


def _check_state(rubric: Rubric, path: str) -> None:
    spec = rubric.spec.state
    if spec.type == "array":
        raise RubricError("a lint rubric judges a code unit: its state is `text` (the code) or an object",
                          path=path, field="state")
    unknown = sorted(set(spec.fields) - set(STATE_FIELDS))
    if unknown:
        raise RubricError(f"a lint rubric's state may declare only {list(STATE_FIELDS)}; {unknown} are not "
                          "provided by a code unit", path=path, field="state.fields")


# --------------------------------------------------------------------------- globs


_GLOB_CACHE: dict[str, re.Pattern[str]] = {}


def glob_match(pattern: str, rel_path: str) -> bool:
    """Match a path (posix, relative) against a glob.

    A pattern without `/` matches the file name in any folder (`*.py`); one with `/` matches
    the whole relative path, `**` spanning any number of folders (`**/migrations/*.py`).
    """
    if "/" not in pattern:
        target = rel_path.rsplit("/", 1)[-1]
    else:
        target = rel_path
    rx = _GLOB_CACHE.get(pattern)
    if rx is None:
        rx = _GLOB_CACHE[pattern] = re.compile(_glob_regex(pattern))
    return rx.fullmatch(target) is not None


def _glob_regex(pattern: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 1)
            if j == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j]
                out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


__all__ = [
    "SEVERITY_RANK",
    "STATE_FIELDS",
    "LintConfig",
    "LintMeta",
    "Rule",
    "Severity",
    "builtin_dir",
    "find_pyproject",
    "glob_match",
    "load_dir",
    "load_rule_file",
    "load_rules",
    "read_config",
]
