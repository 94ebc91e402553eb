"""`ToolSelector`: which tool (or skill) serves a request — or none.

Loading every tool into a model's context costs tokens and accuracy; picking by embedding
similarity always picks *something*, even when nothing fits. The selector asks the `tool-selection`
rubric in three stages:

1. a wide Choice over the whole roster with short descriptions (the shortlist);
2. a Noul gate, "can any of the tools handle the request?", asked of each of the shortlist's top
   tools on its own and read as the **maximum** over them — a Choice always names a winner, so
   the gate decides whether there is one to name. Asked of the whole roster at once, the local
   model read the listing as a blur (BFCL irrelevance AUROC 0.84 against 0.86–0.91 for the max
   over one tool at a time, held-out gate wordings, seams-minilm 0.3); the max is also what
   "any" means, and the same aggregation the rubric's `any:` rules use;
3. a second look: a Choice over the shortlist's top three with their full descriptions, where the
   details that separate near-identical tools are visible.

The policy suggests the second look's winner only when the gate is open and the winner is above
its threshold; otherwise none (or review in the band). Rosters over 255 tools (the protocol's limit for one Choice) are grouped — by each
tool's `group`, else in roster order — and searched with a beam: a Choice over the groups, keep
the best `beam`, and repeat on their members until one Choice can hold them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..answers import Answers, ChoiceAnswer, NoulAnswer
from ..decision import Decision
from ..errors import InputError, JudgeError
from ..judges.base import Judge, JudgeLike, as_judge, judge_problem
from ..questions import MAX_OPTIONS, Choice, Noul
from ..routing import Decider
from ..rubric import Rubric
from ._common import load_rubric


@dataclass(frozen=True)
class Tool:
    """One tool of a roster: a unique name, what it does, and optionally a group for large rosters."""

    name: str
    description: str = ""
    group: str | None = None

    def short(self, words: int) -> str:
        return _words(self.description, words)


def _words(text: str, n: int) -> str:
    parts = text.split()
    return " ".join(parts[:n]) + (" …" if len(parts) > n else "")


def _humanise(name: str) -> str:
    """`get_weather_forecast` → `get weather forecast`: option names are read as words."""
    return re.sub(r"[_.]+", " ", re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name)).strip()


def as_tools(tools: Sequence[Tool | Mapping[str, Any]] | Mapping[str, str | None]) -> list[Tool]:
    """A roster from Tools, {name: description}, or dicts with name/description(/group)."""
    if isinstance(tools, Mapping):
        out = [Tool(str(k), v or "") for k, v in tools.items()]
    else:
        out = []
        for t in tools:
            if isinstance(t, Tool):
                out.append(t)
            elif isinstance(t, Mapping) and isinstance(t.get("name"), str):
                out.append(Tool(t["name"], str(t.get("description") or ""), t.get("group")))
            else:
                raise InputError(f"a tool is a Tool or a mapping with a 'name', got {t!r}")
    names = [t.name for t in out]
    blank = [i for i, n in enumerate(names) if not isinstance(n, str) or not n.strip()]
    if blank:
        raise InputError(f"tool names must be non-empty strings; tools at positions {blank} have none")
    if not out:
        raise InputError("a roster needs at least one tool")
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise InputError(f"tool names must be unique; repeated: {dupes}")
    return out


@dataclass(frozen=True)
class ToolSuggestion:
    """The selector's result. `tool` is None unless the policy suggested one."""

    tool: str | None
    outcome: str
    probability: float | None
    applies: float | None
    shortlist: list[tuple[str, float]]
    second_look: list[tuple[str, float]]
    decision: Decision
    groups: list[str] = field(default_factory=list)

    @property
    def suggested(self) -> bool:
        return self.tool is not None


class ToolSelector:
    """Suggest a tool from a roster for a request.

    Parameters
    ----------
    tools:
        The roster: `Tool`s, `{name: description}`, or dicts with name, description and group.
    rubric:
        Default: built-in `tool-selection`. Its `applies`, `shortlist` and `tool` questions give
        the wording; their options are replaced by the roster.
    judge:
        A judge (None: the shipped local model). The stages ask different states, so this is a
        judge, not a `Cascade`.
    top_k:
        How many shortlisted tools get the second look.
    beam, group_size:
        For rosters over 255 tools: how many groups survive each level, and the most tools a
        group holds (named groups are split into parts of this size). A group is shown to the
        model as the names of its tools, so it stays small enough for every name to be read.
    short_words, full_words:
        Description lengths for the wide stage and the second look. The second look's are
        longer, but still bounded so a hypothesis leaves room for the request in the model's window.
    """

    def __init__(self, tools: Sequence[Tool | Mapping[str, Any]] | Mapping[str, str | None], *,
                 rubric: Rubric | str | None = None, judge: Judge | JudgeLike | None = None, top_k: int = 3,
                 beam: int = 3, group_size: int = 16, short_words: int = 16, full_words: int = 48) -> None:
        if top_k < 1 or beam < 1 or group_size < 2:
            raise InputError("top_k and beam must be at least 1, group_size at least 2")
        if judge is not None:
            problem = judge_problem(judge)
            if problem is not None:
                raise InputError("ToolSelector asks in stages about different states: pass a judge, not a Cascade"
                                 if isinstance(judge, Decider) else problem)
            judge = as_judge(judge)
        self.tools = as_tools(tools)
        self.by_name = {t.name: t for t in self.tools}
        self.rubric = load_rubric(rubric, "tool-selection")
        qs = self.rubric.questions
        for qid, cls in (("applies", Noul), ("shortlist", Choice), ("tool", Choice)):
            if not isinstance(qs.get(qid), cls):
                raise InputError(f"rubric {self.rubric.name!r} needs a {cls.__name__} question {qid!r}")
        self.judge = judge
        self.top_k = top_k
        self.beam = beam
        self.group_size = group_size
        self.short_words = short_words
        self.full_words = full_words

    # -------------------------------------------------------------- questions

    def _judge(self) -> Judge:
        if self.judge is not None:
            return self.judge
        from ..judges import default_judge

        return default_judge()

    def _ask(self, judge: Judge, states: list[dict[str, Any]], questions: Mapping[str, Any]) -> list[Answers]:
        """One stage: `questions` (the rubric's, options replaced) about `states`, asked as the
        rubric asks them (its `asked_alone` views); a failing judge fails the stage."""
        out: list[Answers] = []
        for a in self.rubric.answer_many(states, judge, questions=questions):
            if not isinstance(a, Answers):
                raise a
            out.append(a)
        return out

    def _choice(self, qid: str, options: Mapping[str, str]) -> Choice:
        base = self.rubric.questions[qid]
        return Choice(instructions=base.instructions, criteria=dict(options))

    def _ask_choice(self, judge: Judge, request: str, qid: str, options: Mapping[str, str]) -> ChoiceAnswer:
        """One stage asking the rubric's Choice `qid` over `options` (answered with a ChoiceAnswer)."""
        answer = self._ask(judge, [{"request": request}], {qid: self._choice(qid, options)})[0][qid]
        assert isinstance(answer, ChoiceAnswer)
        return answer

    def listing(self, tools: Sequence[Tool] | None = None) -> list[str]:
        """Tools as the gate reads them: one `name: short description` line per tool."""
        return [f"{t.name}: {t.short(self.short_words)}".rstrip(": ") for t in (tools or self.tools)]

    # -------------------------------------------------------------- stages

    def select(self, request: str) -> ToolSuggestion:
        """Gate, shortlist, second look, then the rubric's policy."""
        if not isinstance(request, str) or not request.strip():
            raise InputError("a request is a non-empty string")
        judge = self._judge()
        try:
            shortlist, groups = self._shortlist(judge, request, self.tools)
            top = [n for n, _ in shortlist.ranked()[: self.top_k]]
            gate = self._gate(judge, request, top)
            if len(top) >= 2:
                full = {n: _words(self.by_name[n].description, self.full_words) or _humanise(n) for n in top}
                look = self._ask_choice(judge, request, "tool", full)
            else:
                look = ChoiceAnswer.from_probabilities({top[0]: 1.0})
        except JudgeError as exc:
            return self._failed(exc, judge)
        answers = Answers(model=gate.model, answers={"applies": gate["applies"], "shortlist": shortlist, "tool": look},
                          latency_ms=gate.latency_ms)
        decision = self.rubric.decide_answers(answers, state={"request": request}, keep_state=False)
        return self._result(decision, gate["applies"], shortlist, look, groups)

    def gate_states(self, request: str, names: Sequence[str]) -> list[dict[str, Any]]:
        """The gate's states: the request beside one tool at a time, listed as `listing` lists it."""
        return [{"request": request, "tools": self.listing([self.by_name[n]])} for n in names]

    def _gate(self, judge: Judge, request: str, top: list[str]) -> Answers:
        """`applies` for each top tool alone; the answer is the most confident yes among them."""
        each = self._ask(judge, self.gate_states(request, top), {"applies": self.rubric.questions["applies"]})
        return max(each, key=lambda a: a["applies"].noul)  # type: ignore[union-attr]

    async def aselect(self, request: str) -> ToolSuggestion:
        """`select` for async code (the judge's stages run in a worker thread)."""
        import asyncio

        return await asyncio.to_thread(self.select, request)

    def _shortlist(self, judge: Judge, request: str, tools: list[Tool]) -> tuple[ChoiceAnswer, list[str]]:
        """A Choice over at most 255 tools; larger rosters are narrowed group by group (beam search)."""
        groups_taken: list[str] = []
        while len(tools) > MAX_OPTIONS:
            groups = self._groups(tools)
            options = {name: _words("tools: " + ", ".join(_humanise(t.name) for t in members), self.full_words)
                       for name, members in groups.items()}
            answer = self._ask_choice(judge, request, "shortlist", options)
            best = [n for n, _ in answer.ranked()[: self.beam]]
            groups_taken.extend(best)
            narrowed = [t for n in best for t in groups[n]]
            if len(narrowed) >= len(tools):  # cannot happen with beam < number of groups; guard anyway
                narrowed = narrowed[:MAX_OPTIONS]
            tools = narrowed
        if len(tools) == 1:
            return ChoiceAnswer.from_probabilities({tools[0].name: 1.0}), groups_taken
        options = {t.name: t.short(self.short_words) or _humanise(t.name) for t in tools}
        return self._ask_choice(judge, request, "shortlist", options), groups_taken

    def _groups(self, tools: list[Tool]) -> dict[str, list[Tool]]:
        """Groups of at most 255, by each tool's `group`, else chunks in roster order; sized so the
        beam always narrows the roster."""
        size = min(self.group_size, max(2, math.ceil(len(tools) / (self.beam + 1))))
        by_group: dict[str, list[Tool]] = {}
        for t in tools:
            by_group.setdefault(t.group or "", []).append(t)
        out: dict[str, list[Tool]] = {}
        for g, members in by_group.items():
            chunks = [members[i:i + size] for i in range(0, len(members), size)]
            for i, chunk in enumerate(chunks):
                label = g or _humanise(chunk[0].name)
                name = label if len(chunks) == 1 else f"{label} ({i + 1})"
                while name in out:
                    name += "'"
                out[name] = chunk
        if len(out) > MAX_OPTIONS:
            # too many groups: merge neighbours until a Choice can hold them
            items = list(out.items())
            per = math.ceil(len(items) / MAX_OPTIONS)
            out = {items[i][0]: [t for _, ms in items[i:i + per] for t in ms] for i in range(0, len(items), per)}
        return out

    def _result(self, decision: Decision, applies: Any, shortlist: ChoiceAnswer, look: ChoiceAnswer,
                groups: list[str]) -> ToolSuggestion:
        tool = decision.option if decision.kind == "act" else None
        return ToolSuggestion(
            tool=tool,
            outcome=decision.outcome,
            probability=look.probability,
            applies=applies.noul if isinstance(applies, NoulAnswer) else None,
            shortlist=shortlist.ranked()[: max(self.top_k, 5)],
            second_look=look.ranked(),
            decision=decision,
            groups=groups,
        )

    def _failed(self, exc: JudgeError, judge: Judge) -> ToolSuggestion:
        """A failing judge never suggests a tool: the policy's `on_error` outcome, fail closed."""
        decision = self.rubric.on_error(exc, judge=judge)
        return ToolSuggestion(None, decision.outcome, None, None, [], [], decision)


__all__ = ["Tool", "ToolSelector", "ToolSuggestion", "as_tools"]
