"""`seams distill`: make the local model answer a rubric the way a remote judge does.

A remote judge (TypeSafe, OpenRouter, another `seams serve`) that answers a rubric well costs a
request per decision. Distilling asks it once about a set of unlabelled states, keeps its
answers as labels (a Noul's P ≥ 0.5, a Choice's winner, a Score's nearest level), and fits the
local model's heads and calibration against them (`calibrate_with_heads`), with the rubric's
cut-points fitted for a target *error against the teacher* on the decisions the local model
makes alone (1 − `agreement`, `TargetErrorThresholds`). The band between them is what a
`Cascade(local with heads, teacher)` sends back to the teacher.

What it reports, on the held-out part of the states (never fitted on): per question, how often
the local answer (heads and calibration) agrees with the teacher's label; and for the cascade
itself, run decision by decision over those states, the share answered locally and how often
its outcome agrees with the outcome the teacher alone reaches.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..answers import Answers, ChoiceAnswer, NoulAnswer, ScoreAnswer
from ..errors import InputError, LabelledSetError, StateError
from ..judges.base import Judge
from ..judges.local.headed import HeadedJudge
from ..judges.local.judge import LocalJudge
from ..routing import Cascade
from ..rubric import Rubric
from ..state import check_state
from .dataset import LabelledItem, LabelledSet, json_lines
from .fit import FitOptions
from .head_fitting import HeadsResult, calibrate_with_heads
from .metrics import clopper_pearson
from .run import Progress, run_set


def read_states(path: str | Path) -> list[tuple[str, Any]]:
    """(id, state) per line of a JSONL file: `{"state": ...}` with an optional `"id"` (the line
    number when absent); any `"labels"` on the line are ignored (the teacher labels it)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise LabelledSetError(f"cannot read: {exc.strerror or exc}", path=str(path)) from None
    out: list[tuple[str, Any]] = []
    seen: set[str] = set()
    for lineno, raw in json_lines(text, str(path)):
        if not isinstance(raw, dict) or "state" not in raw:
            raise LabelledSetError("each line is an object with a 'state' (and optionally an 'id')", path=str(path),
                                   line=lineno)
        ident = str(raw.get("id", f"line-{lineno}"))
        if ident in seen:
            raise LabelledSetError(f"duplicate id {ident!r}", path=str(path), line=lineno)
        seen.add(ident)
        try:
            out.append((ident, check_state(raw["state"])))
        except StateError as exc:
            raise LabelledSetError(str(exc), path=str(path), line=lineno) from None
    if not out:
        raise LabelledSetError("empty: no states", path=str(path))
    return out


def answer_label(answer: NoulAnswer | ChoiceAnswer | ScoreAnswer) -> bool | str | int:
    """An answer as a label: a Noul's P ≥ 0.5, a Choice's winner, a Score's nearest level."""
    if isinstance(answer, NoulAnswer):
        return answer.noul >= 0.5
    if isinstance(answer, ChoiceAnswer):
        return answer.choice
    return int(min(answer.n_levels - 1, max(0, round(answer.score))))


def labelled_from(answers: dict[str, Answers], states: Sequence[tuple[str, Any]], rubric: Rubric,
                  path: str | None = None) -> LabelledSet:
    """The teacher's answers as a labelled set, in the states' order (failed items left out)."""
    items = [LabelledItem(ident, state, {qid: answer_label(a) for qid, a in answers[ident].answers.items()
                                         if qid in rubric.questions})
             for ident, state in states if ident in answers]
    return LabelledSet(items, dict(rubric.questions), path)


def write_labelled(dataset: LabelledSet, path: str | Path) -> None:
    """Write a labelled set as JSONL (the project's format), replacing the file atomically."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for it in dataset.items:
            f.write(json.dumps({"id": it.id, "state": it.state, "labels": it.labels}, ensure_ascii=False) + "\n")
    tmp.replace(path)


@dataclass
class DistillResult:
    """The teacher's labels, the heads and calibration fitted on them, and the held-out report."""

    labelled: LabelledSet
    fitted: HeadsResult
    rubric: Rubric  #: the rubric with the fitted block (in memory; written back by the caller)
    agreement: dict[str, dict[str, Any]]
    cascade: dict[str, Any]
    teacher_errors: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def ask_teacher(rubric: Rubric, states: Sequence[tuple[str, Any]], teacher: Judge, *, concurrency: int = 8,
                progress: Progress | None = None) -> tuple[dict[str, Answers], dict[str, str]]:
    """Every state's answers from the teacher (wrap it in a `CachedJudge` so a re-run is free)."""
    blank = LabelledSet([LabelledItem(i, s, {}) for i, s in states], dict(rubric.questions))
    run = run_set(blank, teacher, concurrency=concurrency, progress=progress, rubric=rubric)
    return run.answers, run.errors


def distill(rubric: Rubric, states: Sequence[tuple[str, Any]], teacher: Judge, student: LocalJudge, *,
            agreement: float = 0.95, options: FitOptions | None = None, concurrency: int = 8,
            teacher_progress: Progress | None = None, progress: Progress | None = None,
            labelled_path: str | Path | None = None) -> DistillResult:
    """Label `states` with `teacher`, fit `student`'s heads and calibration on the labels, and
    measure agreement and the cascade on the held-out part (see the module doc).
    `teacher_progress` and `progress` see the teacher's and the local model's passes."""
    if not 0.5 < agreement < 1:
        raise InputError(f"the agreement target must be within (0.5, 1), got {agreement}")
    # the agreement is the cascade's: the teacher answers the band, so the local model's errors
    # are counted over every decision, not only over the ones it makes
    options = replace(options or FitOptions(), method="target", target=round(1 - agreement, 6), target_over="all")
    answers, errors = ask_teacher(rubric, states, teacher, concurrency=concurrency, progress=teacher_progress)
    if not answers:
        first = next(iter(errors.items()), ("", "no states"))
        raise InputError(f"the teacher answered none of the {len(states)} states (first error: {first[0]}: {first[1]})")
    labelled = labelled_from(answers, states, rubric, str(labelled_path) if labelled_path else None)
    if labelled_path is not None:
        write_labelled(labelled, labelled_path)
    fitted = calibrate_with_heads(rubric, labelled, student, options, progress=progress)
    tuned = Rubric(rubric.spec.model_copy(update={"calibration": fitted.calibration.block}), path=rubric.path,
                   source=rubric.source)
    held = [it for it in labelled.items if it.id in fitted.calibration.report_ids]
    result = DistillResult(labelled, fitted, tuned, _agreement(tuned, held, fitted), {}, errors,
                           list(fitted.calibration.notes))
    result.cascade = _cascade(tuned, held, HeadedJudge(student, fitted.heads), teacher, agreement)
    return result


def _agreement(rubric: Rubric, held: list[LabelledItem], fitted: HeadsResult) -> dict[str, dict[str, Any]]:
    """Per question: how often the headed, calibrated local answer's label is the teacher's."""
    cal = rubric.calibration
    assert cal is not None  # the rubric distill built with the fitted block
    out = {}
    for qid in rubric.questions:
        same = [answer_label(cal.transform(qid, fitted.headed.answers[it.id][qid])) == it.labels[qid]
                for it in held if qid in it.labels]
        if same:
            lo, hi = clopper_pearson(int(np.sum(same)), len(same))
            out[qid] = {"n": len(same), "agreement": float(np.mean(same)), "agreement_ci": [float(lo), float(hi)]}
    return out


def _cascade(rubric: Rubric, held: list[LabelledItem], local: HeadedJudge, teacher: Judge,
             target: float) -> dict[str, Any]:
    """Run `Cascade(local with heads, teacher)` over the held-out states, decision by decision."""
    cascade = Cascade(local, teacher)
    agree = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the teacher's decisions use the thresholds as written
        for it in held:
            routed = cascade.route(rubric, it.state)
            alone = routed.decision if routed.escalated else rubric.decide(it.state, judge=teacher)
            agree += routed.decision.outcome == alone.outcome
    n = len(held)
    local_n = cascade.weak_calls - cascade.strong_calls
    return {"n": n, "target": target, "weak": local.model_id, "local": local_n, "local_share": local_n / n if n else None,
            "agreement": agree / n if n else None}


__all__ = ["DistillResult", "answer_label", "ask_teacher", "distill", "labelled_from", "read_states",
           "write_labelled"]
