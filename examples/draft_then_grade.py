"""Draft, grade, escalate: a cascade that pays for the strong side only when it must.

    python examples/draft_then_grade.py

Two cascades, both runnable on the shipped model with no key:

1. **Models.** A cheap model drafts an answer; the output check grades the draft against the
   request and the sources; any flag over its threshold (max over flags, never the mean) sends the
   request to a stronger model. The two "models" here are stand-ins (a first-sentence drafter and
   a best-matching-sentence drafter) so the example runs offline: replace `small_model` and
   `strong_model` with your LLM calls.
2. **Judges.** `Cascade(weak, strong)` asks the weak judge first and the strong one only when the
   weak decision lands in the policy's uncertain band. Here the strong side is a callable — where
   a stronger LLM (or a remote System One judge: `RemoteJudge(...)`) would go.
"""

from __future__ import annotations

from seams import Cascade, OutputCheck
from seams.builtin.memory import lexical_similarity

TASKS = [
    {
        "request": "When was the Eiffel Tower completed?",
        "sources": ["The Eiffel Tower is a wrought-iron lattice tower in Paris.",
                    "It was completed in 1889 as the entrance to the World's Fair."],
    },
    {
        "request": "How tall is Mount Kilimanjaro?",
        "sources": ["Mount Kilimanjaro is about 5,895 metres tall, the highest mountain in Africa."],
    },
]


def small_model(request: str, sources: list[str]) -> str:
    """A cheap drafter: the first sentence of the first source, whatever was asked."""
    return sources[0]


def strong_model(request: str, sources: list[str]) -> str:
    """A better drafter: the source sentence that best matches the request."""
    return max(sources, key=lambda s: lexical_similarity(request, s))


def stronger_judge(rubric, state, decision) -> str:
    """Stands in for a stronger LLM asked to grade the draft when the local judge is unsure."""
    overlap = lexical_similarity(state["request"], state["draft"])
    return "ship" if overlap > 0.2 else "escalate"


def main() -> None:
    check = OutputCheck()
    for task in TASKS:
        draft = small_model(task["request"], task["sources"])
        grade = check.grade(task["request"], draft, sources=task["sources"])
        flags = ", ".join(f"{k} {v:.2f}" for k, v in grade.flags.items())
        print(f"{task['request']}\n  small draft: {draft!r}\n  grade: {grade.outcome} ({flags})")
        if not grade.ship:
            draft = strong_model(task["request"], task["sources"])
            print(f"  escalated -> strong draft: {draft!r}")
        print(f"  ships: {draft!r}\n")

    cascade = Cascade(None, stronger_judge)  # weak: the shipped model; strong: only in the band
    graded = OutputCheck(judge=cascade)
    for task in TASKS:
        g = graded.grade(task["request"], strong_model(task["request"], task["sources"]), sources=task["sources"])
        print(f"cascade grade for {task['request']!r}: {g.outcome} (decided by {g.decision.model})")
    print(f"strong side paid for {cascade.strong_calls} of {cascade.weak_calls} decisions")


if __name__ == "__main__":
    main()
