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

Question ids never reach the text (renaming an id must not change an answer). The training
pipeline builds its examples with these same functions, so what the model saw in training is
exactly what it is asked at run time.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from ...questions import Choice, Noul, Score
from ...state import render_text


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


def state_text(state: Any) -> str:
    """The state as the model reads it (objects as `field: value` lines)."""
    return render_text(state)


__all__ = [
    "DEFAULT_TEMPLATES",
    "Templates",
    "choice_hypotheses",
    "hypotheses",
    "noul_hypothesis",
    "score_hypotheses",
    "state_text",
]
