"""`seams ask`: answer a rubric or one inline question about a state."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ..answers import Answers, ChoiceAnswer, NoulAnswer, ScoreAnswer
from ..decision import Decision
from ..errors import InputError
from ..questions import Choice, Noul, Score
from . import app
from ._common import (
    EXIT_FAILED,
    EXIT_JUDGE,
    console,
    err_console,
    errors_to_exit,
    escape,
    fmt_p,
    make_judge,
    print_json,
    read_state,
)


def _load_rubric(ref: str):
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
            return Score(instructions=text, criteria=[lv.strip() for lv in levels.split(",") if lv.strip()])
    except ValueError as exc:
        raise InputError(str(exc).splitlines()[-2].strip() if "\n" in str(exc) else str(exc)) from None
    return Noul(instructions=text)


@app.command()
def ask(
    rubric: Annotated[str | None, typer.Argument(help="A rubric file or a built-in rubric name. Omit it to ask one --question.")] = None,
    question: Annotated[str | None, typer.Option("--question", "-q", help="An inline question (a yes/no noul unless --options or --levels).")] = None,
    options: Annotated[str | None, typer.Option(help="Comma-separated option names: makes --question a choice.")] = None,
    levels: Annotated[str | None, typer.Option(help="Comma-separated level descriptions, lowest first: makes --question a score.")] = None,
    state: Annotated[str | None, typer.Option("--state", "-s", help="The state as text ('-' reads stdin).")] = None,
    state_file: Annotated[Path | None, typer.Option("--state-file", "-f", help="Read the state from a file (.json files are parsed as JSON).")] = None,
    json_state: Annotated[bool, typer.Option("--json-state", help="Parse the state as JSON (an object or array).")] = False,
    judge: Annotated[str, typer.Option(help="'local' (the shipped model) or the base URL of a System One server.")] = "local",
    model: Annotated[str | None, typer.Option(help="Model id for a remote judge (default: $TYPESAFE_DEFAULT_MODEL, else jev-latest).")] = None,
    api_key: Annotated[str | None, typer.Option(help="Bearer key for a remote judge (default: $TYPESAFE_API_KEY).", show_default=False)] = None,
    model_dir: Annotated[Path | None, typer.Option(help="A local model directory instead of the shipped model (default: $SEAMS_MODEL_DIR).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print answers and decision as JSON.")] = False,
    keep_state: Annotated[bool, typer.Option(help="Include the raw state in --json output.")] = False,
    exit_code: Annotated[bool, typer.Option("--exit-code", help="Exit 1 unless the decision's outcome is an 'act' outcome.")] = False,
) -> None:
    """Answer a rubric's questions about a state and apply its policy, or ask one inline question."""
    with errors_to_exit():
        if (rubric is None) == (question is None):
            raise InputError("give a rubric or --question (exactly one)")
        the_state = read_state(state, state_file, json_state)
        j = make_judge(judge, model=model, api_key=api_key, model_dir=model_dir)
        if rubric is not None:
            r = _load_rubric(rubric)
            r.check_state(the_state)
            _announce(j, the_state, r.questions)
            decision = r.decide(the_state, judge=j, keep_state=keep_state)
            if as_json:
                data = decision.model_dump(mode="json")
                if keep_state:
                    data["state"] = the_state
                print_json(data)
            else:
                _print_decision(decision)
            if decision.zone == "error":  # the policy failed closed because the judge failed
                err_console.print(f"[red]judge failed:[/red] {escape(decision.error or '')}", highlight=False)
                raise typer.Exit(EXIT_JUDGE)
            if exit_code and decision.kind != "act":
                raise typer.Exit(EXIT_FAILED)
            return
        q = _inline_question(question or "", options, levels)
        _announce(j, the_state, {"q": q})
        answers = j.ask(the_state, {"q": q})
        if as_json:
            print_json(answers.model_dump(mode="json"))
        else:
            _print_answers(answers)


#: Model runs past which `seams ask` says, before starting, how much work a state will take.
ANNOUNCE_RUNS = 64


def _announce(judge: object, state: object, questions: dict) -> None:
    """One line on stderr before long local work: a long state is many windows, each a model run
    per hypothesis, and minutes of silence read as a hang."""
    from ..judges.local import LocalJudge

    if not isinstance(judge, LocalJudge):
        return
    windows, runs = judge.cost(state, questions)
    if runs > ANNOUNCE_RUNS:
        err_console.print(f"seams ask: the state is judged in {windows} window(s); {runs:,} model runs "
                          f"({len(questions)} question(s)) on the local model — this can take a while",
                          highlight=False)


def _answer_cells(a: NoulAnswer | ChoiceAnswer | ScoreAnswer) -> tuple[str, str, str]:
    if isinstance(a, NoulAnswer):
        return "noul", f"{a.noul:.3f}", ""
    if isinstance(a, ChoiceAnswer):
        top = ", ".join(f"{n} {p:.2f}" for n, p in a.ranked()[:3])
        return "choice", a.choice, f"confidence {a.confidence:.2f}; {top}"
    return "score", f"{a.score:.2f}", f"level {a.level} of 0–{a.n_levels - 1}; confidence {a.confidence:.2f}"


def _print_answers(answers: Answers) -> None:
    table = Table(title=f"answers ({answers.model}, {answers.latency_ms:.1f} ms)")
    for col in ("question", "type", "answer", "detail"):
        table.add_column(col)
    for qid, a in answers.answers.items():
        table.add_row(*(escape(c) for c in (qid, *_answer_cells(a))))
    console.print(table)
    if answers.windows > 1:
        console.print(f"[yellow]the state was longer than the model's window: judged in {answers.windows} windows[/yellow]")


def _print_decision(d: Decision) -> None:
    table = Table(title=escape(f"{d.rubric} v{d.rubric_version} ({d.model}, {d.latency_ms:.1f} ms)"))
    for col in ("question", "type", "answer", "detail"):
        table.add_column(col)
    for qid, a in d.answers.items():
        table.add_row(*(escape(c) for c in (qid, *_answer_cells(a))))
    console.print(table)
    colour = {"act": "green", "refuse": "red", "review": "yellow"}[d.kind]
    why = "no rule decided: default" if d.rule is None else f"rule {d.rule}"
    if d.probability is not None:
        why += f", {d.question}{'=' + d.option if d.option else ''} p={fmt_p(d.probability)} ({d.zone}, threshold {fmt_p(d.threshold)})"
    if d.error:
        why += f"; judge error: {d.error}"
    console.print(f"decision: [bold {colour}]{escape(d.outcome)}[/bold {colour}] ({d.kind}) — {escape(why)}", highlight=False)
    if d.windows > 1:
        console.print(f"[yellow]the state was judged in {d.windows} windows[/yellow]")
