"""`seams ask`: answer a rubric or one inline question about a state."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.table import Table

from ..answers import Answers, ChoiceAnswer, NoulAnswer, ScoreAnswer
from ..calibration.cutpoints import fmt_cut, rule_cutpoints
from ..decision import Decision
from ..errors import InputError, StateError
from ..questions import Choice, Noul, Score
from . import app
from ._common import (
    EXIT_FAILED,
    EXIT_JUDGE,
    JudgeOptions,
    console,
    err_console,
    errors_to_exit,
    escape,
    fmt_p,
    plural,
    print_json,
    read_state,
)
from .progress import judging


def load_rubric(ref: str):
    from ..rubric import Rubric

    return Rubric.resolve(ref)


def _inline_question(text: str, options: str | None, levels: str | None) -> Noul | Choice | Score:
    if options and levels:
        raise InputError("--options and --levels are exclusive: a question is a choice or a score")
    try:
        if options:
            return Choice.model_validate({"instructions": text,
                                          "criteria": [o.strip() for o in options.split(",") if o.strip()]})
        if levels:
            return Score.model_validate({"instructions": text,
                                         "criteria": [lv.strip() for lv in levels.split(",") if lv.strip()]})
    except ValidationError as exc:
        flag = "--options" if options else "--levels"
        msgs = "; ".join(e["msg"].removeprefix("Value error, ") for e in exc.errors(include_url=False))
        raise InputError(f"{flag}: {msgs}") from None
    return Noul(instructions=text)


def _state_hint(exc: StateError, state: object, rubric) -> StateError:
    """A state that is text but looks like JSON, for a rubric that wants an object or array:
    the user almost certainly forgot `--json-state`."""
    if isinstance(state, str) and rubric.spec.state.type != "text" and state.lstrip()[:1] in ("{", "["):
        return StateError(f"{exc}; the state looks like JSON: add --json-state to parse it")
    return exc


def _absent_fields(rubric, state: object) -> dict[str, list[str]]:
    """Question id → the declared state fields its wording names in backticks that `state` lacks.

    Such a question is still asked (an optional field may be absent on purpose), but the model
    then reads a wording about something that is not there; `seams ask` says so on stderr.
    """
    from ..state import backtick_refs

    if not isinstance(state, dict):
        return {}
    out: dict[str, list[str]] = {}
    for qid, q in rubric.questions.items():
        texts = [q.instructions]
        criteria = getattr(q, "criteria", None)
        if criteria is not None:
            texts.append(criteria.model_dump() if hasattr(criteria, "model_dump") else criteria)
        missing = sorted({ref for t in texts for ref in backtick_refs(t) if ref not in state})
        if missing:
            out[qid] = missing
    return out


@app.command()
def ask(
    rubric: Annotated[str | None, typer.Argument(help="A rubric file or a built-in rubric name. Omit it to ask one --question.")] = None,
    question: Annotated[str | None, typer.Option("--question", "-q", help="An inline question (a yes/no noul unless --options or --levels).")] = None,
    options: Annotated[str | None, typer.Option(help="Comma-separated option names: makes --question a choice.")] = None,
    levels: Annotated[str | None, typer.Option(help="Comma-separated level descriptions, lowest first: makes --question a score.")] = None,
    state: Annotated[str | None, typer.Option("--state", "-s", help="The state as text ('-' reads stdin).")] = None,
    state_file: Annotated[Path | None, typer.Option("--state-file", "-f", help="Read the state from a file (.json files are parsed as JSON).")] = None,
    json_state: Annotated[bool, typer.Option("--json-state", help="Parse the state as JSON (an object or array).")] = False,
    judge: Annotated[str, typer.Option(help="'local' (the shipped model), 'local-once' (it, reading the state once) or the base URL of a System One server.")] = "local",
    model: Annotated[str | None, typer.Option(help="Model id for a remote judge (default: $TYPESAFE_DEFAULT_MODEL, else jev-latest).")] = None,
    api_key: Annotated[str | None, typer.Option(help="Bearer key for a remote judge (default: $TYPESAFE_API_KEY).", show_default=False)] = None,
    model_dir: Annotated[Path | None, typer.Option(help="A local model directory instead of the shipped model (default: $SEAMS_MODEL_DIR).")] = None,
    batch_size: Annotated[int | None, typer.Option(
        "--batch-size", min=1,
        help="Local judge: pairs (windows × hypotheses) per model run. Default: the model's own, one a run for "
             "the shipped int8 model, whose answers move slightly with their batch mates; 32 runs a long "
             "state's windows several times faster at that price (docs/local-judge.md, \"Batching\").")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print answers and decision as JSON.")] = False,
    keep_state: Annotated[bool, typer.Option(help="Include the raw state in --json output.")] = False,
    exit_code: Annotated[bool, typer.Option("--exit-code", help="Exit 1 unless the decision's outcome is an 'act' outcome.")] = False,
) -> None:
    """Answer a rubric's questions about a state and apply its policy, or ask one inline question."""
    with errors_to_exit():
        if (rubric is None) == (question is None):
            raise InputError("give a rubric or --question (exactly one)")
        the_state = read_state(state, state_file, json_state)
        j = JudgeOptions(judge, model, api_key, model_dir).make(batch_size=batch_size)
        if rubric is not None:
            r = load_rubric(rubric)
            decision = _decide(r, the_state, j, as_json=as_json, keep_state=keep_state)
            if decision.zone == "error":  # the policy failed closed because the judge failed
                err_console.print(f"[red]judge failed:[/red] {escape(decision.error or '')}", highlight=False)
                raise typer.Exit(EXIT_JUDGE)
            if exit_code and decision.kind != "act":
                raise typer.Exit(EXIT_FAILED)
            return
        q = _inline_question(question or "", options, levels)
        _announce(j, the_state, {"q": q})
        with judging(the_state):
            answers = j.ask(the_state, {"q": q})
        if as_json:
            print_json(answers.model_dump(mode="json"))
        else:
            _print_answers(answers)


def _decide(r, state: Any, judge: Any, *, as_json: bool, keep_state: bool) -> Decision:
    """Decide `state` with rubric `r` and print the decision (a table, or JSON)."""
    try:
        r.check_state(state)
    except StateError as exc:
        raise _state_hint(exc, state, r) from None
    for qid, fields in _absent_fields(r, state).items():
        names = ", ".join(f"`{f}`" for f in fields)
        err_console.print(f"[yellow]warning:[/yellow] question {qid!r} names {escape(names)}, which the state "
                          "does not have: it was asked about the state as it is", highlight=False)
    _announce(judge, state, r.questions)
    with judging(state):
        decision = r.decide(state, judge=judge, keep_state=keep_state)
    if not as_json:
        _print_decision(decision, r)
        return decision
    data = decision.model_dump(mode="json")
    data["cutpoints"] = [c.as_dict() for c in rule_cutpoints(r, decision.calibrated)]
    if decision.calibrated:  # `answers` are the judge's own; these are what the rules read
        data["calibrated_answers"] = {qid: r.calibration.transform(qid, a).model_dump(mode="json")
                                      for qid, a in decision.answers.items()}
    if keep_state:
        data["state"] = state
    print_json(data)
    return decision


#: Model runs past which `seams ask` says, before starting, how much work a state will take.
ANNOUNCE_RUNS = 64


def _announce(judge: object, state: object, questions: dict) -> None:
    """One line on stderr before long local work: a long state is many windows, each a model run
    per hypothesis, and minutes of silence read as a hang."""
    from ..judges.local import LocalJudge

    if not isinstance(judge, LocalJudge):
        return
    windows, pairs = judge.cost(state, questions)
    runs = -(-pairs // judge.max_batch_size)  # at most this many pairs share a run
    if runs > ANNOUNCE_RUNS:
        hint = " (--batch-size 32 runs them in fewer)" if judge.max_batch_size == 1 else ""
        err_console.print(f"seams ask: the state is judged in {plural(windows, 'window')}; {pairs:,} pairs in "
                          f"{runs:,} model runs{hint} ({plural(len(questions), 'question')}) on the local model "
                          "— this can take a while", highlight=False)


def _cells(a: NoulAnswer | ChoiceAnswer | ScoreAnswer) -> tuple[str, str]:
    """(the answer in one cell, the detail) of one answer."""
    if isinstance(a, NoulAnswer):
        return f"{a.noul:.3f}", ""
    if isinstance(a, ChoiceAnswer):
        rest = ", ".join(f"{n} {p:.2f}" for n, p in a.ranked()[1:3])
        return f"{a.choice} {a.probability:.2f}", f"confidence {a.confidence:.2f}" + (f"; {rest}" if rest else "")
    return f"{a.score:.2f}", f"level {a.level} of 0–{a.n_levels - 1}; confidence {a.confidence:.2f}"


def _header(what: str, model: str | None, latency_ms: float) -> None:
    # A line of its own, never a table title: a title wraps to the table's width and cuts the
    # model id at 80 columns.
    console.print(f"{escape(what)} · model {escape(str(model))} · {latency_ms:.1f} ms", highlight=False,
                  soft_wrap=True)


def _print_answers(answers: Answers) -> None:
    _header("answers", answers.model, answers.latency_ms)
    table = Table()
    for col in ("question", "type", "raw answer", "detail"):
        table.add_column(col)
    for qid, a in answers.answers.items():
        table.add_row(*(escape(c) for c in (qid, a.type, *_cells(a))))
    console.print(table)
    console.print("(an inline question has no calibration: these are the model's raw probabilities)", style="dim")
    if answers.windows > 1:
        console.print(f"[yellow]the state was longer than the model's window: judged in {answers.windows} windows[/yellow]")


def _print_decision(d: Decision, r) -> None:
    _header(f"{d.rubric} v{d.rubric_version}", d.model, d.latency_ms)
    cal = r.calibration
    stale = r.stale_reasons(d.model) if cal is not None else []
    if d.calibrated:
        console.print(f"calibration: fitted on {escape(cal.model)}; rules read the calibrated probabilities "
                      "against the fitted cut-points", highlight=False, soft_wrap=True)
    elif cal is not None:
        console.print(f"[yellow]calibration stale, not applied ({escape('; '.join(stale))}): rules read the raw "
                      "probabilities against the written cut-points[/yellow]", highlight=False, soft_wrap=True)
    else:
        console.print("not calibrated: rules read the raw probabilities against the written cut-points",
                      highlight=False, soft_wrap=True)
    table = Table(title="answers")
    table.add_column("question", no_wrap=True)
    for col in ("type", "raw", "calibrated", "detail (raw)"):
        table.add_column(col, overflow="fold")
    for qid, a in d.answers.items():
        raw, detail = _cells(a)
        calibrated = _cells(cal.transform(qid, a))[0] if d.calibrated else "—"
        table.add_row(*(escape(c) for c in (qid, a.type, raw, calibrated, detail)))
    console.print(table)
    console.print(_rules_table(d, r))
    colour = {"act": "green", "refuse": "red", "review": "yellow"}[d.kind]
    why = "no rule decided: default" if d.rule is None else f"rule {d.rule}"
    if d.probability is not None:
        which = "calibrated" if d.calibrated else "raw"
        rel = {"high": "≥", "low": "≤", "gate": "≤"}.get(d.zone, "<")
        why += (f": {which} {d.question}{'=' + d.option if d.option else ''} p={fmt_p(d.probability)} {rel} "
                f"{fmt_p(d.threshold)} ({d.zone} zone)")
    if d.error:
        why += f"; judge error: {d.error}"
    console.print(f"decision: [bold {colour}]{escape(d.outcome)}[/bold {colour}] ({d.kind}) — {escape(why)}",
                  highlight=False, soft_wrap=True)
    if d.windows > 1:
        console.print(f"[yellow]the state was judged in {d.windows} windows[/yellow]")


def _read(d: Decision, r, qid: str) -> float | None:
    """The number a gate read, as the policy read it (calibrated when the calibration applies)."""
    a = d.answers.get(qid)
    if not isinstance(a, NoulAnswer):
        return None
    return (r.calibration.transform(qid, a) if d.calibrated else a).noul


def _rules_table(d: Decision, r) -> Table:
    """The rules in priority order: what each reads, its written and fitted cut-points (the
    applied ones marked), the number it read and what it did."""
    rules = {x.id: x for x in r.policy.rules}
    traced: dict[str, Any] = {}
    for t in d.trace:
        gate = rules[t.rule].gate
        # A gate that closed or stayed in its band is traced under the rule's id, reading the
        # gate's question; a gate that opened leaves no trace but lets its rule read.
        if gate is not None and t.zone in ("gate", "band") and t.question == gate.question:
            traced[f"{t.rule} (gate)"] = t
            continue
        traced[t.rule] = t
        if gate is not None and t.zone != "skipped":
            traced[f"{t.rule} (gate)"] = "open"
    table = Table(title="rules, in priority order (* = the cut-points applied)")
    table.add_column("rule", no_wrap=True)  # ids are read whole; the other cells fold on a narrow terminal
    for col in ("reads", "written high / low", "fitted high / low", "p", "result"):
        table.add_column(col, overflow="fold")
    for c in rule_cutpoints(r, d.calibrated):
        t = traced.get(c.rule)
        if t is None:
            p, result = "", "not reached"
        elif t == "open":
            p, result = fmt_p(_read(d, r, c.reads)), "open"
        elif t.zone == "skipped":
            p, result = "", "skipped (`when` does not hold)"
        else:
            p, result = fmt_p(t.probability), f"{t.zone} → {t.outcome or 'next'}"
        written = fmt_cut(c.written, compact=True) + (" *" if c.source == "written" else "")
        fitted = fmt_cut(c.fitted, compact=True) + (" *" if c.source == "fitted" else "")
        table.add_row(*(escape(x) for x in (c.rule, c.reads, written, fitted, p, result)))
    return table
