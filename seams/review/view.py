"""What the reviewer's desk shows of one queued item, and how a submitted form becomes labels.

Kept apart from the web app so the page's content (the questions, the judge's raw and calibrated
answers, the rule that routed the item and the numbers it read) is plain data that tests can read
without a browser, and so the templates hold layout only. Everything here treats the state as
untrusted text: it is passed to the templates as strings, which Jinja escapes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from ..decision import Decision
from ..errors import InputError, SeamsError
from ..questions import Choice, Noul, Score
from ..queue import Label, ReviewItem
from ..rubric import Rubric

Kind = Literal["noul", "choice", "score", "unknown"]
#: Form fields that carry a label are named this prefix and the question id.
LABEL_FIELD = "label-"


def text_of(value: Any) -> str:
    """A state field, a description or a legend entry as one string (JSON for objects/arrays)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2)


@dataclass(frozen=True)
class Option:
    """One control value of a question: what is submitted, what is shown, and its shortcut key."""

    value: str
    name: str
    description: str = ""
    key: str = ""
    raw: float | None = None
    calibrated: float | None = None


@dataclass(frozen=True)
class QuestionView:
    """One question of an item: its wording, the judge's answer raw and calibrated, its control."""

    id: str
    kind: Kind
    instructions: str
    options: list[Option]
    summary_raw: str
    summary_calibrated: str
    label: str | None = None


@dataclass(frozen=True)
class TraceRow:
    """One rule as the policy evaluated it: the number it read and where that fell."""

    rule: str
    description: str
    question: str
    probability: str
    zone: str
    outcome: str
    decided: bool


@dataclass(frozen=True)
class ItemView:
    """Everything the item page shows."""

    item: ReviewItem
    fields: list[tuple[str, str]]
    questions: list[QuestionView]
    outcome: str = ""
    rule: str = ""
    probability: str = ""
    threshold: str = ""
    zone: str = ""
    model: str = ""
    calibrated: bool = False
    trace: list[TraceRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _fmt(p: float | None) -> str:
    return "—" if p is None else f"{p:.3f}"


def state_fields(state: Any, declared: list[str] | None = None) -> list[tuple[str, str]]:
    """The state as (field, text) rows: an object's fields, those the rubric declares first in
    its order (the queue stores states canonically, keys sorted); a string or array as one row."""
    if isinstance(state, dict):
        order = [k for k in declared or [] if k in state] + [k for k in state if k not in (declared or [])]
        return [(str(k), text_of(state[k])) for k in order]
    return [("state", text_of(state))]


def _decision(item: ReviewItem) -> tuple[Decision | None, str | None]:
    if not item.decision:
        return None, None
    try:
        return Decision.model_validate(item.decision), None
    except ValidationError as exc:
        return None, f"the stored decision could not be read ({exc.error_count()} problem(s)); answers not shown"


def _calibrator(rubric: Rubric | None, decision: Decision | None) -> tuple[Any, bool, str | None]:
    """The calibration block to show calibrated answers with (None: show the raw answers as the
    calibrated ones), whether there are none to show (a stale calibration), and why."""
    if rubric is None or decision is None:
        return None, False, None
    cal = rubric.calibration
    if cal is None:
        return None, False, f"rubric {rubric.name!r} has no calibration: the calibrated answers are the raw ones"
    reasons = rubric.stale_reasons(decision.model)
    if reasons:
        return None, True, (f"the rubric's calibration is stale for {decision.model}, so no calibrated answers "
                            f"are shown: {'; '.join(reasons)}")
    return cal, False, None


def _winner(answer: Any) -> str:
    """A Choice answer in a few words: its winner, the winner's probability and the confidence."""
    if answer is None:
        return "—"
    return f"{answer.choice} {_fmt(answer.probabilities.get(answer.choice))} (confidence {_fmt(answer.confidence)})"


def _question(qid: str, q: Noul | Choice | Score | None, answer: Any, calibrated: Any,
              label: Label | None) -> QuestionView:
    kind: Kind = q.type if q is not None else (answer.type if answer is not None else "unknown")
    instructions = text_of(q.instructions) if q is not None else ""
    shown = None if label is None else str(label).lower() if isinstance(label, bool) else str(label)
    if kind == "noul":
        raw_p = answer.noul if answer is not None else None
        cal_p = calibrated.noul if calibrated is not None else None
        crit = q.criteria if isinstance(q, Noul) else None
        options = [Option("true", "yes", text_of(crit.true) if crit else "", "y", raw_p, cal_p),
                   Option("false", "no", text_of(crit.false) if crit else "", "n",
                          None if raw_p is None else 1 - raw_p, None if cal_p is None else 1 - cal_p)]
        return QuestionView(qid, kind, instructions, options, f"p(yes) {_fmt(raw_p)}", f"p(yes) {_fmt(cal_p)}", shown)
    if kind == "choice":
        names = q.options if isinstance(q, Choice) else list(answer.probabilities)
        descriptions = q.criteria if isinstance(q, Choice) else {}
        raw_d = answer.probabilities if answer is not None else {}
        cal_d = calibrated.probabilities if calibrated is not None else {}
        options = [Option(n, n, text_of(descriptions.get(n)), str(i + 1) if i < 9 else "", raw_d.get(n), cal_d.get(n))
                   for i, n in enumerate(names)]
        return QuestionView(qid, kind, instructions, options, _winner(answer), _winner(calibrated), shown)
    if kind == "score":
        levels = [text_of(v) for v in q.levels] if isinstance(q, Score) else [text_of(v) for v in answer.legend.values()]
        raw_d = answer.probabilities if answer is not None else {}
        cal_d = calibrated.probabilities if calibrated is not None else {}
        options = [Option(str(i), f"level {i}", lv, str(i), raw_d.get(str(i)), cal_d.get(str(i)))
                   for i, lv in enumerate(levels)]
        return QuestionView(qid, kind, instructions, options,
                            f"expected level {answer.score:.2f}" if answer is not None else "—",
                            f"expected level {calibrated.score:.2f}" if calibrated is not None else "—", shown)
    return QuestionView(qid, "unknown", instructions, [], "—", "—", shown)


def item_view(item: ReviewItem, rubric: Rubric | None) -> ItemView:
    """The page's content for `item`, read with `rubric` (its questions' wording and options, its
    rules' descriptions, its calibration) when one is known for the item."""
    decision, note = _decision(item)
    notes = [note] if note else []
    if rubric is not None and decision is not None and decision.rubric_hash != rubric.hash:
        notes.append(f"rubric {rubric.name!r} changed since this item was decided (hash {decision.rubric_hash} "
                     f"then, {rubric.hash} now): wording and options are today's")
    cal, stale, why = _calibrator(rubric, decision)
    if why:
        notes.append(why)
    answers = decision.answers if decision is not None else {}
    qids = list(item.questions) or list(answers)
    questions = []
    for qid in qids:
        q = rubric.questions.get(qid) if rubric is not None else None
        answer = answers.get(qid)
        if q is not None and answer is not None and answer.type != q.type:
            notes.append(f"question {qid!r} is a {q.type} in the rubric but was answered as a {answer.type}")
            q = None
        calibrated = None
        if answer is not None and not stale:
            try:
                calibrated = cal.transform(qid, answer) if cal is not None else answer
            except (SeamsError, ValueError):  # a calibrator fitted on other options
                calibrated = None
        questions.append(_question(qid, q, answer, calibrated, (item.labels or {}).get(qid)))
    fields = state_fields(item.state, list(rubric.spec.state.fields) if rubric is not None else None)
    if decision is None:
        return ItemView(item, fields, questions, notes=notes)
    rules = {r.id: r for r in rubric.spec.policy.rules} if rubric is not None else {}
    trace = [TraceRow(t.rule, text_of(getattr(rules.get(t.rule), "description", None)), t.question or "",
                      _fmt(t.probability), t.zone, t.outcome or "next", t.rule == decision.rule)
             for t in decision.trace]
    return ItemView(item, fields, questions, outcome=decision.outcome, rule=decision.rule or "default",
                    probability=_fmt(decision.probability), threshold=_fmt(decision.threshold), zone=decision.zone,
                    model=decision.model or "", calibrated=decision.calibrated, trace=trace, notes=notes)


def labels_from_form(form: Mapping[str, str], view: ItemView) -> dict[str, Label]:
    """The labels a submitted form gives, typed per question (Noul → bool, Score → level index,
    Choice → option name); unanswered questions are left out. Values are not checked against the
    options here: `ReviewQueue.resolve` does that, so the desk refuses exactly what the queue does."""
    kinds = {q.id: q.kind for q in view.questions}
    out: dict[str, Label] = {}
    for name, value in form.items():
        if not name.startswith(LABEL_FIELD) or value == "":
            continue
        qid = name.removeprefix(LABEL_FIELD)
        kind = kinds.get(qid, "unknown")
        if kind == "noul" or (kind == "unknown" and value in ("true", "false")):
            if value not in ("true", "false"):
                raise InputError(f"the label for {qid!r} must be yes or no (a Noul), got {value!r}")
            out[qid] = value == "true"
        elif kind == "score" or (kind == "unknown" and value.lstrip("-").isdigit()):
            try:
                out[qid] = int(value)
            except ValueError:
                raise InputError(f"the label for {qid!r} must be a level index (a Score), got {value!r}") from None
        else:
            out[qid] = value
    return out


__all__ = [
    "LABEL_FIELD",
    "ItemView",
    "Option",
    "QuestionView",
    "TraceRow",
    "item_view",
    "labels_from_form",
    "state_fields",
    "text_of",
]
