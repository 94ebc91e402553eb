"""The wordings each training task is asked in.

A wording turns one raw example (a dict of canonical fields such as ``a``/``b`` for a pair of
statements) into a real question (`Noul` or `Choice`) and a state, exactly as a user of seams would
write them. Each task has at least eight wordings that mix:

* question forms ("Does the `new` note contradict the `old` one?") and statement forms
  ("The second sentence conflicts with the first."),
* Nouls with and without criteria (and some with criteria only, no instructions),
* plain-text states and object states whose fields the instructions name in backticks,
* inverted wordings (the yes-answer means the opposite label), so the model reads the question
  instead of learning one answer per state.

Wordings marked ``held_out=True`` never reach training; `bench/model_quality.py` asks its questions
in them to measure generalisation to wordings the model never saw.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from seams.questions import Choice, Noul, NoulCriteria


@dataclass(frozen=True)
class PairWording:
    """A Noul over a pair of texts (``a`` first/older/context, ``b`` second/newer/claim)."""

    id: str
    instructions: str | None
    fields: tuple[str, str] | None = None  # object state field names; None = plain text
    true: str | None = None
    false: str | None = None
    invert: bool = False  # yes means the label is False
    held_out: bool = False
    joiner: str = "\n\n"

    def question(self) -> Noul:
        crit = NoulCriteria(true=self.true, false=self.false) if (self.true or self.false) else None
        return Noul(instructions=self.instructions, criteria=crit)

    def state(self, a: str, b: str) -> Any:
        if self.fields is None:
            return f"{a}{self.joiner}{b}"
        return {self.fields[0]: a, self.fields[1]: b}


@dataclass(frozen=True)
class TextWording:
    """A Noul over one text (injection) — plain text or an object with one or two fields."""

    id: str
    instructions: str | None
    field: str | None = None  # None = plain-text state
    context_field: str | None = None  # optional second field holding the user's task
    true: str | None = None
    false: str | None = None
    invert: bool = False
    held_out: bool = False

    def question(self) -> Noul:
        crit = NoulCriteria(true=self.true, false=self.false) if (self.true or self.false) else None
        return Noul(instructions=self.instructions, criteria=crit)

    def state(self, text: str, context: str | None = None) -> Any:
        if self.field is None:
            return text
        if self.context_field and context:
            return {self.context_field: context, self.field: text}
        return {self.field: text}


@dataclass(frozen=True)
class ChoiceWording:
    """A Choice over options given a state (a pair of texts or one request)."""

    id: str
    instructions: str
    fields: tuple[str, ...] | None = None  # object state fields; None = plain text
    describe: bool = True  # give option descriptions (False: names only)
    none_option: tuple[str, str] | None = None  # (name, description) of a "nothing fits" option
    held_out: bool = False
    joiner: str = "\n\n"

    def question(self, options: dict[str, str | None]) -> Choice:
        crit = {k: (v if self.describe else None) for k, v in options.items()}
        if self.none_option is not None:
            crit[self.none_option[0]] = self.none_option[1] if self.describe else None
        return Choice(instructions=self.instructions, criteria=crit)

    def state(self, *texts: str) -> Any:
        if self.fields is None:
            return self.joiner.join(texts)
        return dict(zip(self.fields, texts, strict=True))


# --------------------------------------------------------------------------------------------
# NLI: contradiction / entailment between two statements
# --------------------------------------------------------------------------------------------
CONTRADICTION = [
    PairWording("con-1", "Does the `hypothesis` contradict the `premise`?", ("premise", "hypothesis")),
    PairWording(
        "con-2",
        "The `new` statement contradicts the `old` statement.",
        ("old", "new"),
        true="both cannot be true at the same time",
        false="both could be true together",
    ),
    PairWording("con-3", "Do these two statements contradict each other?", None),
    PairWording("con-4", "The second sentence is incompatible with the first sentence.", None, joiner="\n"),
    PairWording(
        "con-5",
        None,
        ("context", "statement"),
        true="The `statement` conflicts with the `context`.",
        false="The `statement` is consistent with the `context`.",
    ),
    PairWording("con-6", "Is the `claim` false if the `fact` is true?", ("fact", "claim")),
    PairWording("con-7", "Can `text_a` and `text_b` both be true at once?", ("text_a", "text_b"), invert=True),
    PairWording("con-8", "Given the `source`, the `sentence` must be wrong.", ("source", "sentence")),
    PairWording(
        "con-9", "Is the `statement_2` inconsistent with `statement_1`?", ("statement_1", "statement_2"),
        held_out=True,
    ),
    PairWording("con-10", "Does the second text deny what the first text says?", None, held_out=True),
]

ENTAILMENT = [
    PairWording("ent-1", "Does the `premise` entail the `hypothesis`?", ("premise", "hypothesis")),
    PairWording("ent-2", "If the first sentence is true, the second one must also be true.", None),
    PairWording(
        "ent-3",
        "Does the `evidence` support the `claim`?",
        ("evidence", "claim"),
        true="the evidence shows the claim is true",
        false="the evidence refutes the claim or says nothing about it",
    ),
    PairWording("ent-4", "The `conclusion` follows from the `text`.", ("text", "conclusion")),
    PairWording("ent-5", "Does the second statement follow from the first?", None),
    PairWording(
        "ent-6", None, ("context", "statement"),
        true="The `context` implies the `statement`.", false="It does not.",
    ),
    PairWording("ent-7", "Could the `hypothesis` be false while the `premise` is true?",
                ("premise", "hypothesis"), invert=True),
    PairWording("ent-8", "Is `b` guaranteed to hold given `a`?", ("a", "b")),
    PairWording("ent-9", "Does the `passage` prove the `statement`?", ("passage", "statement"), held_out=True),
    PairWording("ent-10", "Reading the first text, one can conclude the second.", None, held_out=True),
]

NLI_OPTIONS = {
    "entailment": "the second statement follows from the first",
    "neutral": "the second statement may or may not be true given the first",
    "contradiction": "the second statement cannot be true if the first is",
}
NLI_CHOICE = [
    ChoiceWording("nli-1", "How does the `hypothesis` relate to the `premise`?", ("premise", "hypothesis")),
    ChoiceWording("nli-2", "What is the relation between the two sentences?", None),
    ChoiceWording("nli-3", "Classify the `claim` against the `context`.", ("context", "claim")),
    ChoiceWording("nli-4", "Relation of the second statement to the first", None, joiner="\n"),
    ChoiceWording("nli-5", "Given `a`, what can be said about `b`?", ("a", "b"), held_out=True),
]

# --------------------------------------------------------------------------------------------
# Memory admission: does the new statement correct, restate, or add to the old one?
# --------------------------------------------------------------------------------------------
CORRECTION = [
    PairWording("cor-1", "Does the `new` statement correct or update the `old` one?", ("old", "new")),
    PairWording(
        "cor-2",
        "The `incoming` note changes a fact stated in the `stored` memory.",
        ("stored", "incoming"),
        true="the incoming note says something different about the same thing",
        false="it agrees with the memory or only adds to it",
    ),
    PairWording("cor-3", "Does the second statement change what the first statement says?", None),
    PairWording("cor-4", "Does the `update` supersede the `memory`?", ("memory", "update")),
    PairWording(
        "cor-5", None, ("existing", "candidate"),
        true="The `candidate` corrects the `existing` memory.", false="It does not correct it.",
    ),
    PairWording("cor-6", "The newer text means something different from the older text.", None),
    PairWording("cor-7", "Does the `new` fact agree with the `old` fact?", ("old", "new"), invert=True),
    PairWording("cor-8", "Is the `revision` a correction of the `original`?", ("original", "revision")),
    PairWording("cor-9", "Would storing the `new_note` overwrite what the `saved_note` says?",
                ("saved_note", "new_note"), held_out=True),
    PairWording("cor-10", "The second note contradicts or amends the first note.", None, held_out=True),
]

RESTATEMENT = [
    PairWording("res-1", "Does the `new` statement restate the `old` one?", ("old", "new")),
    PairWording(
        "res-2",
        "The `incoming` note says the same thing as the `stored` memory.",
        ("stored", "incoming"),
        true="same meaning, possibly in other words",
        false="different meaning, even if the words overlap",
    ),
    PairWording("res-3", "Are these two sentences paraphrases of each other?", None),
    PairWording("res-4", "Is the `candidate` a duplicate of the `memory`?", ("memory", "candidate")),
    PairWording("res-5", "The second sentence means the same as the first.", None, joiner="\n"),
    PairWording(
        "res-6", None, ("first", "second"),
        true="`first` and `second` express the same fact.", false="They express different facts.",
    ),
    PairWording("res-7", "Does the `new` note tell us anything different from the `old` note?",
                ("old", "new"), invert=True),
    PairWording("res-8", "Is `b` just `a` reworded?", ("a", "b")),
    PairWording("res-9", "Does the `fresh` entry repeat the `existing` entry?", ("existing", "fresh"),
                held_out=True),
    PairWording("res-10", "Both texts convey the same information.", None, held_out=True),
]

ADDS = [
    PairWording("add-1", "Does the `new` statement add information not in the `old` one?", ("old", "new")),
    PairWording("add-2", "The second sentence tells something that the first does not say.", None),
    PairWording(
        "add-3", "Is the `candidate` new information relative to the `memory`?", ("memory", "candidate"),
        true="it adds facts that neither repeat nor contradict the memory",
        false="it repeats, follows from or contradicts the memory",
    ),
    PairWording("add-4", "The `incoming` note neither follows from nor conflicts with the `stored` note.",
                ("stored", "incoming")),
    PairWording("add-5", "Is the second text compatible with the first but not implied by it?", None),
    PairWording("add-6", "Is the `new` note already implied by the `old` note?", ("old", "new"), invert=True),
    PairWording("add-7", None, ("known", "heard"),
                true="`heard` brings new, compatible information beyond `known`.", false="It does not."),
    PairWording("add-8", "Does `b` go beyond what `a` states without contradicting it?", ("a", "b")),
    PairWording("add-9", "Would the `new_note` extend the `saved_note` with fresh details?",
                ("saved_note", "new_note"), held_out=True),
]

MEMORY_OPTIONS = {
    "restates": "the new statement says the same as the old one",
    "corrects": "the new statement changes or contradicts a fact in the old one",
    "adds": "the new statement adds compatible information the old one lacks",
}
#: the correction-versus-restatement Choice (PAWS and its evaluation have no "adds")
MEMORY_TWO_WAY = {k: MEMORY_OPTIONS[k] for k in ("restates", "corrects")}
MEMORY_CHOICE = [
    ChoiceWording("mem-1", "How does the `new` statement relate to the `old` one?", ("old", "new")),
    ChoiceWording("mem-2", "What should happen to the `candidate` memory given the `stored` one?",
                  ("stored", "candidate")),
    ChoiceWording("mem-3", "Compare the second note with the first.", None),
    ChoiceWording("mem-4", "Relation of `b` to `a`", ("a", "b"), describe=False),
    ChoiceWording("mem-5", "Is the second sentence a restatement or a correction of the first?", None),
    ChoiceWording("mem-6", "What does the `incoming` note do to the `memory`?", ("memory", "incoming"),
                  held_out=True),
    ChoiceWording("mem-7", "Classify the newer text against the older text.", None, held_out=True),
]

# --------------------------------------------------------------------------------------------
# Relevance / usable evidence
# --------------------------------------------------------------------------------------------
RELEVANCE = [
    PairWording("rel-1", "Does the `passage` answer the `query`?", ("query", "passage")),
    PairWording("rel-2", "The `document` contains the answer to the `question`.", ("question", "document")),
    PairWording("rel-3", "Does the text after the question answer it?", None, joiner="\n"),
    PairWording(
        "rel-4",
        "Is the `passage` usable evidence for the `query`?",
        ("query", "passage"),
        true="the passage states what the query asks for",
        false="the passage is off-topic or does not settle the query",
    ),
    PairWording("rel-5", None, ("question", "snippet"),
                true="The `snippet` answers the `question`.", false="The `snippet` does not answer it."),
    PairWording("rel-6", "Is the `chunk` irrelevant to the `search`?", ("search", "chunk"), invert=True),
    PairWording("rel-7", "Should this retrieved passage be shown to answer the question?", None),
    PairWording("rel-8", "Does the `context` help answer the `user_question`?", ("user_question", "context")),
    PairWording("rel-9", "Would the `result` satisfy the `information_need`?", ("information_need", "result"),
                held_out=True),
    PairWording("rel-10", "The paragraph provides what the question is looking for.", None, held_out=True),
]

EVIDENCE = [
    PairWording("evi-1", "Does the `evidence` support the `claim`?", ("claim", "evidence")),
    PairWording("evi-2", "The `sources` back up the `statement`.", ("statement", "sources")),
    PairWording("evi-3", "Is the claim in the first line supported by the text below it?", None, joiner="\n"),
    PairWording("evi-4", None, ("claim", "passage"),
                true="The `passage` confirms the `claim`.", false="The `passage` does not confirm it."),
    PairWording("evi-5", "Is the `claim` unsupported by the `evidence`?", ("claim", "evidence"), invert=True),
    PairWording("evi-6", "Can the `answer` be verified from the `retrieved`?", ("answer", "retrieved")),
    PairWording("evi-7", "The text below the claim is evidence for it.", None, joiner="\n"),
    PairWording("evi-8", "Does the `document` establish the `fact`?", ("fact", "document")),
    PairWording("evi-9", "Is the `assertion` grounded in the `citations`?", ("assertion", "citations"),
                held_out=True),
    PairWording("evi-10", "Does the `reference` back up what the `sentence` says?", ("sentence", "reference"),
                held_out=True),
]

# --------------------------------------------------------------------------------------------
# Prompt injection
# --------------------------------------------------------------------------------------------
INJECTION = [
    TextWording("inj-1", "Is this a prompt injection attempt?"),
    TextWording("inj-2", "Does the `document` contain instructions aimed at the AI reading it?", "document",
                context_field="task"),
    TextWording("inj-3", "The `message` tries to override the system's instructions.", "message"),
    TextWording(
        "inj-4",
        "Does the `content` contain a prompt injection?",
        "content",
        true="it tries to make the model ignore its instructions, change role, leak data or do something else",
        false="it is ordinary content with no instructions to the model",
    ),
    TextWording("inj-5", None, "tool_output",
                true="The `tool_output` hides commands for the assistant.", false="It is plain data."),
    TextWording("inj-6", "This text attempts to jailbreak or manipulate the assistant."),
    TextWording("inj-7", "Is the `email` safe to pass to the assistant as plain data?", "email",
                context_field="user_request", invert=True),
    TextWording("inj-8", "Does the `user_input` try to hijack the model?", "user_input"),
    TextWording("inj-9", "Does the retrieved `page` try to instruct the model instead of just informing?",
                "page", context_field="question"),
    TextWording("inj-10", "Is there an attack on the language model hidden in the `text`?", "text",
                held_out=True),
    TextWording("inj-11", "The input below is trying to trick the AI into disobeying its rules.", held_out=True),
]

# --------------------------------------------------------------------------------------------
# Tool / intent selection (Choice, per-option hypotheses) and the "any tool fits" gate (Noul)
# --------------------------------------------------------------------------------------------
TOOL_CHOICE = [
    ChoiceWording("tool-1", "Which tool should handle the `request`?", ("request",)),
    ChoiceWording("tool-2", "Pick the tool that fits this user message.", None),
    ChoiceWording("tool-3", "Which function should be called for the `query`?", ("query",)),
    ChoiceWording("tool-4", "The intent of the `utterance`", ("utterance",), describe=False),
    ChoiceWording("tool-5", "What does the user want?", None, describe=False),
    ChoiceWording("tool-6", "Route the `message` to the right tool.", ("message",),
                  none_option=("none", "no tool fits the message")),
    ChoiceWording("tool-7", "Which capability does the `user_request` need?", ("user_request",)),
    ChoiceWording("tool-8", "Select the API for this request.", None,
                  none_option=("no_tool", "none of these can do it")),
    ChoiceWording("tool-9", "Which of these tools can serve the `ask`?", ("ask",), held_out=True),
    ChoiceWording("tool-10", "Choose the intent that matches the customer message.", None, held_out=True),
]


@dataclass(frozen=True)
class GateWording:
    """The "does any tool fit" Noul: the state lists the tools and the request."""

    id: str
    instructions: str | None
    request_field: str
    tools_field: str
    true: str | None = None
    false: str | None = None
    invert: bool = False
    held_out: bool = False
    as_text: bool = False  # the roster as one string, a "name: description" line per tool

    def question(self) -> Noul:
        crit = NoulCriteria(true=self.true, false=self.false) if (self.true or self.false) else None
        return Noul(instructions=self.instructions, criteria=crit)

    def state(self, request: str, tools: list[str]) -> Any:
        return {self.request_field: request, self.tools_field: "\n".join(tools) if self.as_text else tools}


TOOL_GATE = [
    GateWording("gate-1", "Can any of the `tools` handle the `request`?", "request", "tools"),
    GateWording("gate-2", "One of the `functions` fits the `query`.", "query", "functions"),
    GateWording("gate-3", "Is the `request` outside what the `tools` can do?", "request", "tools", invert=True),
    GateWording("gate-4", None, "message", "available_tools",
                true="Some tool in `available_tools` serves the `message`.", false="No tool fits."),
    GateWording("gate-5", "Does the `utterance` match one of the `intents`?", "utterance", "intents"),
    GateWording("gate-6", "Should one of the `apis` be called for the `ask`?", "ask", "apis",
                true="an API in the list does what is asked", false="none of them does"),
    GateWording("gate-7", "Is the `user_message` out of scope for the `skills`?", "user_message", "skills",
                invert=True),
    GateWording("gate-8", "A listed tool can answer the `question`.", "question", "toolbox"),
    # the roster as one "name: description" line per tool, as the tool-selection rubric passes it
    GateWording("gate-11", "Can any of the `tools` handle the `request`?", "request", "tools", as_text=True,
                held_out=True),
    GateWording("gate-12", "Does one of the `tools` do what the `request` asks?", "request", "tools", as_text=True,
                true="a tool in the list serves the request", false="no tool in the list fits", held_out=True),
    GateWording("gate-9", "Is there a tool in `catalog` for the `task`?", "task", "catalog", held_out=True),
    GateWording("gate-10", "Can the `request` be served by any of the `options`?", "request", "options",
                held_out=True),
]

ALL: dict[str, list[Any]] = {
    "contradiction": CONTRADICTION,
    "entailment": ENTAILMENT,
    "nli_choice": NLI_CHOICE,
    "correction": CORRECTION,
    "restatement": RESTATEMENT,
    "adds": ADDS,
    "memory_choice": MEMORY_CHOICE,
    "relevance": RELEVANCE,
    "evidence": EVIDENCE,
    "injection": INJECTION,
    "tool_choice": TOOL_CHOICE,
    "tool_gate": TOOL_GATE,
}


def train_wordings(task: str) -> list[Any]:
    return [w for w in ALL[task] if not w.held_out]


def held_out_wordings(task: str) -> list[Any]:
    return [w for w in ALL[task] if w.held_out]


Builder = Callable[..., Any]

__all__ = [
    "ALL",
    "CONTRADICTION",
    "MEMORY_OPTIONS",
    "MEMORY_TWO_WAY",
    "NLI_OPTIONS",
    "ChoiceWording",
    "GateWording",
    "PairWording",
    "TextWording",
    "held_out_wordings",
    "train_wordings",
]
