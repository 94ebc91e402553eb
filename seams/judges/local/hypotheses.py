"""How a question becomes the text a yes/no cross-encoder scores against a state.

A local model answers one question: "given this state, is this hypothesis true?". Every question
type is mapped onto that:

* **Noul** → one hypothesis: the instructions, followed by what true and false mean when the
  criteria say so. The model's yes-probability is the answer.
* **Choice** → one hypothesis per option: the instructions with the option's name and its
  description. The options' logits become a distribution with a softmax (at a temperature the
  model's config may carry), so options compete instead of being judged alone.
* **Score** → one hypothesis per level: the instructions with "level i of n" and the level's
  description, turned into a distribution the same way; the answer is its expectation.

A question that names two or more fields of an object state in backticks is asked about those
fields alone (`focus`).

Question ids never reach the text (renaming an id must not change an answer). The training
pipeline builds its examples with these same functions, so what the model saw in training is
exactly what it is asked at run time.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from ...questions import Choice, Noul, Score
from ...state import backtick_refs, render_text


@dataclass(frozen=True)
class Templates:
    """Format strings for hypotheses. A model's config may override any of them."""

    noul: str = "{instructions}"
    noul_empty: str = "The statement holds."
    noul_true: str = "\nTrue means: {text}"
    noul_false: str = "\nFalse means: {text}"
    option: str = "{instructions}\nAnswer: {name}"
    option_description: str = "{instructions}\nAnswer: {name} ({description})"
    level: str = "{instructions}\nLevel {number} of {count}: {description}"

    @classmethod
    def from_config(cls, data: dict[str, Any] | None) -> Templates:
        if not data:
            return cls()
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown template(s) {unknown}; known: {sorted(known)}")
        return cls(**data)


DEFAULT_TEMPLATES = Templates()


def _instructions(value: Any) -> str:
    return render_text(value) if value is not None else ""


def noul_hypothesis(question: Noul, templates: Templates = DEFAULT_TEMPLATES) -> str:
    text = _instructions(question.instructions)
    crit = question.criteria
    if not text:
        text = render_text(crit.true) if crit is not None and crit.true is not None else templates.noul_empty
        crit = crit.model_copy(update={"true": None}) if crit is not None else None
    out = templates.noul.format(instructions=text)
    if crit is not None:
        if crit.true is not None:
            out += templates.noul_true.format(text=render_text(crit.true))
        if crit.false is not None:
            out += templates.noul_false.format(text=render_text(crit.false))
    return out.strip()


def choice_hypotheses(question: Choice, templates: Templates = DEFAULT_TEMPLATES) -> list[str]:
    text = _instructions(question.instructions)
    out = []
    for name, description in question.criteria.items():
        if description is None:
            out.append(templates.option.format(instructions=text, name=name))
        else:
            out.append(
                templates.option_description.format(
                    instructions=text, name=name, description=render_text(description)
                )
            )
    return [h.strip() for h in out]


def score_hypotheses(question: Score, templates: Templates = DEFAULT_TEMPLATES) -> list[str]:
    text = _instructions(question.instructions)
    n = len(question.criteria)
    return [
        templates.level.format(instructions=text, number=i + 1, count=n, description=render_text(level)).strip()
        for i, level in enumerate(question.criteria)
    ]


def hypotheses(question: Noul | Choice | Score, templates: Templates = DEFAULT_TEMPLATES) -> list[str]:
    """The hypotheses of any question: one for a Noul, one per option or level otherwise."""
    if isinstance(question, Noul):
        return [noul_hypothesis(question, templates)]
    if isinstance(question, Choice):
        return choice_hypotheses(question, templates)
    return score_hypotheses(question, templates)


def option_texts(question: Noul | Choice | Score, templates: Templates = DEFAULT_TEMPLATES) -> list[str]:
    """What each option or level says on its own, without the instructions: the texts the
    sentence encoder compares with the state ("name: description", a level's description; a
    Noul's hypothesis, its only text)."""
    if isinstance(question, Noul):
        return [noul_hypothesis(question, templates)]
    if isinstance(question, Score):
        return [render_text(level).strip() for level in question.criteria]
    out = []
    for name, description in question.criteria.items():
        said = render_text(description).strip() if description is not None else ""
        out.append(f"{name.replace('_', ' ')}: {said}" if said else name.replace("_", " "))
    return out


def focus(question: Noul | Choice | Score, state: Any) -> Any:
    """The part of `state` a question is about: the fields it names, when it names two or more.

    A question whose instructions name two or more top-level fields of an object state in
    backticks ("Does the `draft` contradict the `sources`?") is a judgement about those fields,
    and a small cross-encoder reads it best when it sees only them: trained on two-field states,
    it read a third field (the `request` beside `sources` and `draft`) as one side of the pair
    (AUROC 0.55 on the output check's contradiction set with the whole state, 0.81 with the two
    named fields; seams-minilm 0.3). The named fields keep the state's order. A question naming
    one field or none sees the whole state, because such questions often lean on fields they do
    not name ("Does the `action` do what was asked?"); so does any question naming a field the
    state does not have.
    """
    if not isinstance(state, Mapping) or len(state) < 3:
        return state
    named = set(backtick_refs(question.instructions))
    if len(named) < 2 or not named <= set(state) or len(named) == len(state):
        return state
    return {k: v for k, v in state.items() if k in named}


#: Words by which a question refers to two parts of a state that has no named fields: "the
#: second text … the first text", "each other", "both statements", "these two sentences".
_PAIR_REFERENCE = re.compile(
    r"\b(?:each other|one another"
    r"|(?:both|these two|the two|two)\s+(?:texts|statements|sentences|notes|passages|messages|claims"
    r"|entries|paragraphs|versions|documents|facts|memories)"
    r"|the (?:first|former|older|earlier)\b.*\bthe (?:second|latter|newer|later)"
    r"|the (?:second|latter|newer|later)\b.*\bthe (?:first|former|older|earlier))\b",
    re.IGNORECASE | re.DOTALL,
)


def relates_fields(question: Noul | Choice | Score, state: Any) -> bool:
    """Whether `question` relates two parts of `state` to each other: its instructions name at
    least two of an object state's top-level fields in backticks ("Is the `claim` supported by the
    `sources`?"), or, about a state with no fields (a string, a list), refer to two of its parts
    in words ("Does the second text deny what the first text says?", "Do these two statements
    contradict each other?"). Such a judgement is about how the parts relate, not about what the
    state is about, so the cosine of the question with the state says nothing of it: a Noul that
    relates parts is read from the cross-encoder alone (`config.Blend.noul_relational`; on the
    written corpus's held-out groups the cosine cost those Nouls 0.013 AUROC, on the public
    contradiction set, asked over plain two-statement strings, 0.009)."""
    if isinstance(state, Mapping):
        return len(set(backtick_refs(question.instructions)) & set(state)) >= 2
    words = question.instructions
    if words is None:
        return False
    return _PAIR_REFERENCE.search(words if isinstance(words, str) else render_text(words)) is not None


def state_text(state: Any) -> str:
    """The state as the model reads it (objects as `field: value` lines)."""
    return render_text(state)


__all__ = [
    "DEFAULT_TEMPLATES",
    "Templates",
    "choice_hypotheses",
    "focus",
    "hypotheses",
    "noul_hypothesis",
    "option_texts",
    "relates_fields",
    "score_hypotheses",
    "state_text",
]
