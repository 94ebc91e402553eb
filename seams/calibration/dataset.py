"""Labelled sets: JSONL (one item a line) and a CSV adapter, validated line by line.

A line is ``{"id": ..., "state": ..., "labels": {qid: true|false | "option" | level}}`` and may
carry its own ``"questions"`` (same shape as a rubric's) for seams whose options vary per item.
A line's questions are its own (their wording, options and ladder may differ from line to line),
but a question id keeps its type across the set: every figure is pooled by id. Every problem is
reported with the file and line it is on; nothing is skipped silently (blank lines are not items
and are passed over).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import InputError, LabelledSetError, StateError, validation_problems
from ..questions import Choice, Noul, Score, parse_questions
from ..state import canonical_json, check_state

Label = bool | str | int
QuestionT = Noul | Choice | Score


@dataclass(frozen=True)
class LabelledItem:
    """One labelled state. `questions` holds the line's own questions (None when it has none)."""

    id: str
    state: Any
    labels: dict[str, Label]
    questions: dict[str, QuestionT] | None = None
    line: int | None = None


@dataclass
class LabelledSet:
    """Items in file order, the questions they were checked against, and a content hash."""

    items: list[LabelledItem]
    questions: dict[str, QuestionT] = field(default_factory=dict)
    path: str | None = None

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[LabelledItem]:
        return iter(self.items)

    @property
    def hash(self) -> str:
        """sha256 (16 hex) of the items sorted by id: reordering lines keeps it, any edit changes it."""
        return data_hash(self.items)

    def questions_for(self, item: LabelledItem) -> dict[str, QuestionT]:
        """The questions asked about `item`: the set's, with the line's own ones overriding."""
        if item.questions is None:
            return dict(self.questions)
        return {**self.questions, **item.questions}

    def label_counts(self) -> dict[str, int]:
        """How many items carry a label for each question id."""
        counts: dict[str, int] = {}
        for item in self.items:
            for qid in item.labels:
                counts[qid] = counts.get(qid, 0) + 1
        return counts

    def subset(self, indices: Iterable[int]) -> LabelledSet:
        return LabelledSet([self.items[i] for i in indices], self.questions, self.path)


def data_hash(items: Iterable[LabelledItem]) -> str:
    rows = sorted(
        canonical_json([it.id, it.state, it.labels,
                         {k: q.wire() for k, q in (it.questions or {}).items()}]) for it in items
    )
    h = hashlib.sha256()
    for row in rows:
        h.update(row.encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()[:16]


# --------------------------------------------------------------------------- validation


def check_label(question: QuestionT, qid: str, value: Any) -> Label:
    """`value` as a label of `question`, or a ValueError saying what a label must be."""
    if isinstance(question, Noul):
        if not isinstance(value, bool):
            raise ValueError(f"label of noul {qid!r} must be true or false, got {value!r}")  # noqa: TRY004
        return value
    if isinstance(question, Choice):
        if not isinstance(value, str) or value not in question.criteria:
            shown = question.options if len(question.options) <= 12 else question.options[:12] + ["…"]
            raise ValueError(f"label {value!r} of choice {qid!r} is not one of its options {shown}")
        return value
    n = len(question.criteria)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"label of score {qid!r} must be a level index 0–{n - 1}, got {value!r}")  # noqa: TRY004
    if not 0 <= value < n:
        raise ValueError(f"label {value} of score {qid!r} is out of range: its levels are 0–{n - 1}")
    return value


def parse_item(raw: Any, questions: Mapping[str, QuestionT] | None, *, path: str | None = None,
               line: int | None = None) -> LabelledItem:
    """Validate one item (a decoded JSON object) against `questions` and its own questions."""

    def fail(msg: str) -> LabelledSetError:
        return LabelledSetError(msg, path=path, line=line)

    if not isinstance(raw, Mapping):
        raise fail(f"an item is a JSON object, got {type(raw).__name__}")
    unknown = sorted(set(raw) - {"id", "state", "labels", "questions"})
    if unknown:
        raise fail(f"unknown key(s) {unknown}; an item has id, state, labels and optionally questions")
    if "id" not in raw:
        raise fail("missing 'id'")
    ident = raw["id"]
    if isinstance(ident, bool) or not isinstance(ident, (str, int)) or (isinstance(ident, str) and not ident.strip()):
        raise fail(f"'id' must be a non-empty string or an integer, got {ident!r}")
    if "state" not in raw:
        raise fail("missing 'state'")
    try:
        state = check_state(raw["state"])
    except StateError as exc:
        raise fail(str(exc)) from None
    own: dict[str, QuestionT] | None = None
    if raw.get("questions") is not None:
        if not isinstance(raw["questions"], Mapping) or not raw["questions"]:
            raise fail("'questions' must be a non-empty object of question id → question")
        try:
            own = parse_questions(raw["questions"])
        except ValidationError as exc:
            first = validation_problems(exc)[0]
            raise fail(f"questions.{first.field}: {first.message}") from None
        except ValueError as exc:
            raise fail(f"questions: {exc}") from None
    asked = {**(questions or {}), **(own or {})}
    if not asked:
        raise fail("no questions: give a rubric, or a 'questions' object on the line")
    labels = raw.get("labels")
    if labels is None:
        raise fail("missing 'labels'")
    if not isinstance(labels, Mapping):
        raise fail(f"'labels' must be an object of question id → label, got {type(labels).__name__}")
    checked: dict[str, Label] = {}
    for qid, value in labels.items():
        if qid not in asked:
            raise fail(f"label for unknown question id {qid!r}; known: {sorted(asked)}")
        try:
            checked[qid] = check_label(asked[qid], qid, value)
        except ValueError as exc:
            raise fail(str(exc)) from None
    return LabelledItem(str(ident), state, checked, own, line)


def _shown(question: QuestionT, limit: int = 200) -> str:
    """A question's definition as compact JSON, cut at `limit` characters (a roster can be long)."""
    text = json.dumps(question.wire(), ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_question_types(items: Iterable[LabelledItem], questions: Mapping[str, QuestionT] | None = None, *,
                         path: str | None = None) -> None:
    """Raise when a question id is one type on one line and another on a later line (or in the rubric).

    A line's questions are its own: it may reword an id, or give it other options or another
    ladder (a tool roster differs per request). But everything measured or fitted for an id pools
    its items (metrics, a calibrator, a rule's cut-points, test–retest spread), and a Noul's
    probability, a Choice's winner and a Score's level do not pool. So an id keeps its type, and
    the first line that breaks that is named with both definitions, before any judge is asked.
    """
    first: dict[str, tuple[QuestionT, str]] = {q: (d, "in the rubric") for q, d in (questions or {}).items()}
    for it in items:
        for qid, q in (it.questions or {}).items():
            where = f"on line {it.line}" if it.line is not None else f"on item {it.id!r}"
            seen, seen_where = first.setdefault(qid, (q, where))
            if seen.type != q.type:
                raise LabelledSetError(
                    f"question {qid!r} is a {q.type} here ({_shown(q)}) but a {seen.type} {seen_where} "
                    f"({_shown(seen)}); a question id keeps its type across the set (its wording, options "
                    f"and levels may change from line to line), so give one of them another id",
                    path=path, line=it.line)


def _finish(items: list[LabelledItem], questions: Mapping[str, QuestionT] | None, path: str | None) -> LabelledSet:
    if not items:
        raise LabelledSetError("empty: no labelled items", path=path)
    check_question_types(items, questions, path=path)
    seen: dict[str, int | None] = {}
    for it in items:
        if it.id in seen:
            raise LabelledSetError(f"duplicate id {it.id!r} (first on line {seen[it.id]})", path=path, line=it.line)
        seen[it.id] = it.line
    return LabelledSet(items, dict(questions or {}), path)


def loads_jsonl(text: str, questions: Mapping[str, QuestionT] | None = None, *, path: str | None = None) -> LabelledSet:
    """Parse JSONL text; `questions` (a rubric's) may be None when every line has its own."""
    items = [parse_item(raw, questions, path=path, line=lineno) for lineno, raw in json_lines(text, path)]
    return _finish(items, questions, path)


def json_lines(text: str, path: str | None = None) -> Iterator[tuple[int, Any]]:
    """(1-based line number, decoded value) for every non-blank line of JSONL text; a line that is
    not JSON is a `LabelledSetError` naming the file, line and column."""
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield lineno, json.loads(line)
        except json.JSONDecodeError as exc:
            raise LabelledSetError(f"not valid JSON: {exc.msg} at column {exc.colno}", path=path, line=lineno) from None


def load_jsonl(path: str | Path, questions: Mapping[str, QuestionT] | None = None) -> LabelledSet:
    """Read a JSONL labelled set, checking every line against `questions`."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LabelledSetError("no such file", path=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LabelledSetError(f"cannot read: {exc}", path=str(path)) from None
    return loads_jsonl(text, questions, path=str(path))


# --------------------------------------------------------------------------- CSV

_TRUE = {"1", "true", "yes", "y", "t"}
_FALSE = {"0", "false", "no", "n", "f"}


def _csv_label(question: QuestionT, text: str) -> Any:
    if isinstance(question, Noul):
        low = text.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        return text
    if isinstance(question, Score):
        try:
            return int(text.strip())
        except ValueError:
            return text
    return text.strip()


def parse_columns(spec: str) -> dict[str, str]:
    """`"id=ID,state=text,injection=label"` → mapping; `state=a+b` names an object state's columns."""
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        key, sep, col = part.partition("=")
        if not sep or not key.strip() or not col.strip():
            raise InputError(f"column mapping {part!r} must be KEY=COLUMN (e.g. state=text,injection=label)")
        out[key.strip()] = col.strip()
    if "state" not in out:
        raise InputError("the column mapping needs state=COLUMN (or state=COL1+COL2 for an object state)")
    return out


def load_csv(path: str | Path, columns: Mapping[str, str], questions: Mapping[str, QuestionT]) -> LabelledSet:
    """Read a CSV labelled set through a column mapping.

    `columns` maps ``id`` (optional; the row number otherwise), ``state`` (one column for a text
    state, ``a+b`` for an object state with those fields) and each question id to its label
    column. Noul labels accept 1/0, true/false, yes/no; an empty cell means "not labelled".
    Line numbers in errors are the file's (the header is line 1).
    """
    p = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LabelledSetError(f"cannot read: {exc}", path=p) from None
    with io.StringIO(text, newline="") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        state_cols = columns["state"].split("+")
        wanted = state_cols + [c for k, c in columns.items() if k != "state"]
        missing = [c for c in wanted if c not in header]
        if missing:
            raise LabelledSetError(f"no column(s) {missing} in the header {header}", path=p, line=1)
        label_cols = {k: c for k, c in columns.items() if k not in ("id", "state")}
        for qid in label_cols:
            if qid not in questions:
                raise LabelledSetError(f"column mapping names unknown question id {qid!r}; known: {sorted(questions)}",
                                       path=p, line=1)
        items = []
        for row in reader:
            line = reader.line_num
            state: Any = row[state_cols[0]] if len(state_cols) == 1 else {c: row[c] for c in state_cols}
            labels = {qid: _csv_label(questions[qid], row[c]) for qid, c in label_cols.items() if (row[c] or "").strip()}
            ident = row[columns["id"]] if "id" in columns else str(line)
            items.append(parse_item({"id": ident, "state": state, "labels": labels}, questions, path=p, line=line))
    return _finish(items, questions, p)


def load(path: str | Path, questions: Mapping[str, QuestionT] | None = None, *, columns: str | None = None) -> LabelledSet:
    """A labelled set from a .jsonl file, or a .csv file with a column mapping."""
    if str(path).endswith(".csv"):
        if columns is None:
            raise InputError(f"{path}: a CSV labelled set needs a column mapping (--columns state=COL,QID=COL)")
        if not questions:
            raise InputError(f"{path}: a CSV labelled set needs a rubric for its questions")
        return load_csv(path, parse_columns(columns), questions)
    return load_jsonl(path, questions)


def dump_jsonl(items: Iterable[Mapping[str, Any]]) -> str:
    """Items (plain dicts) as JSONL text, one canonical line each."""
    return "".join(json.dumps(it, ensure_ascii=False) + "\n" for it in items)


__all__ = ["Label", "LabelledItem", "LabelledSet", "LabelledSetError", "check_label", "check_question_types",
           "data_hash", "dump_jsonl", "load", "load_csv", "load_jsonl", "loads_jsonl", "parse_columns",
           "parse_item"]
