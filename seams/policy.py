"""Policy: rules in a declared priority order that turn answers into one outcome.

Each rule reads one number and compares it with a three-zone threshold:

* at or above `high` → the rule's `then` outcome (act on the signal),
* at or below `low`  → its `else` outcome (often `next`: let a later rule decide),
* between            → its `review` outcome (a person or a stronger judge).

The number comes from one question (a Noul's probability, a Score's normalised level, one
option of a Choice), from the **maximum** over several flags (`any:`; one confident red flag is
the whole signal — a mean would let three quiet flags hide a loud one), or from a Choice's
winner (`choice:`), which maps the winning option to an outcome. A Choice always names a winner,
so a rule may carry a **gate**: a Noul that must open before the Choice counts. A rule may also
say **when** it applies — the form of a state field, decided in code (`when: {field: query, is:
statement}`): a question has no truth value to contradict, whatever a model reads.

Outcomes are declared with a kind (`act`, `refuse`, `review`) so code around a rubric knows
what each means; `on_error` names the outcome when the judge fails and may never be an `act`
outcome: a failing judge never becomes a pass.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .answers import ChoiceAnswer, NoulAnswer, ScoreAnswer
from .decision import OutcomeKind, RuleTrace, Verdict, Zone
from .forms import is_question
from .questions import Choice, Noul, Score

NEXT = "next"
RAISE = "raise"

AnswerT = NoulAnswer | ChoiceAnswer | ScoreAnswer
QuestionT = Noul | Choice | Score


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def _check_zones(high: float, low: float | None, where: str) -> None:
    if not 0.0 <= high <= 1.0:
        raise ValueError(f"{where}high must be within [0, 1], got {high}")
    if low is not None:
        if not 0.0 <= low <= 1.0:
            raise ValueError(f"{where}low must be within [0, 1], got {low}")
        if low > high:
            raise ValueError(f"{where}low ({low}) must not be greater than high ({high})")


class RuleCosts(_Spec):
    """What a wrong decision in this rule costs, where it differs from the calibration's `--costs`.

    Thresholds scaled to consequence: a rule that runs an irreversible action can say a wrong act
    costs 20 while the rest of the rubric prices it at 5, and `seams calibrate` fits its zones
    with those prices. Unset entries keep the calibration's.
    """

    act: float | None = Field(default=None, ge=0)
    refuse: float | None = Field(default=None, ge=0)
    review: float | None = Field(default=None, ge=0)


class GateCosts(_Spec):
    """What a gate's mistakes cost when `seams calibrate` fits it: opening when it should have
    stayed closed, closing when it should have opened, and the band. Unset entries price the gate
    like its rule (opening like the rule's `then`, closing like its `else`)."""

    open: float | None = Field(default=None, ge=0)
    closed: float | None = Field(default=None, ge=0)
    review: float | None = Field(default=None, ge=0)


class Gate(_Spec):
    """A Noul that must open (p ≥ high) before its rule counts; closed (p ≤ low) → `closed`."""

    question: str
    high: float = 0.5
    low: float | None = None
    closed: str = NEXT
    costs: GateCosts | None = None

    @model_validator(mode="after")
    def _zones(self) -> Gate:
        _check_zones(self.high, self.low, "gate ")
        return self

    @property
    def effective_low(self) -> float:
        """The refuse cut-point: `low`, or `high` when none is written (one threshold, no band)."""
        return self.high if self.low is None else self.low


class When(_Spec):
    """The form a state field must take for its rule to run, decided in code (`seams.forms`).

    `when: {field: query, is: statement}` skips the rule for a question: a question has no truth
    value, so "the passage contradicts the query" cannot hold of one, whatever a model reads.
    """

    field: str = Field(min_length=1)
    is_: Literal["question", "statement"] = Field(alias="is")

    def holds(self, state: Any) -> bool:
        value = state.get(self.field) if isinstance(state, Mapping) else None
        if not isinstance(value, str):
            return True  # nothing to read: the rule runs as written
        return is_question(value) == (self.is_ == "question")


def applies(rule: Rule, state: Any) -> bool:
    """Whether `rule` runs for `state`; always, for a rule without `when` or without a state."""
    return rule.when is None or state is None or rule.when.holds(state)


class Rule(_Spec):
    """One rule: a source of one number, a three-zone threshold, and an outcome per zone."""

    id: str = Field(min_length=1)
    description: str | None = None
    question: str | None = None
    option: str | None = None
    any: list[str] | None = Field(default=None, min_length=1)
    choice: str | None = None
    options: dict[str, str] | None = None
    gate: Gate | None = None
    when: When | None = None
    high: float
    low: float | None = None
    then: str | None = None
    review: str = "review"
    else_: str = Field(default=NEXT, alias="else")
    costs: RuleCosts | None = None

    @model_validator(mode="after")
    def _shape(self) -> Rule:
        sources = [s for s in ("question", "any", "choice") if getattr(self, s) is not None]
        if len(sources) != 1:
            raise ValueError(f"a rule reads exactly one of question, any, choice; got {sources or 'none'}")
        if self.option is not None and self.question is None:
            raise ValueError("option applies to a `question:` that is a Choice")
        if self.choice is not None:
            if self.options is None and self.then is None:
                raise ValueError("a choice rule needs `options` (winner → outcome) or `then`")
        elif self.then is None:
            raise ValueError("a rule needs `then`: the outcome at or above `high`")
        elif self.options is not None:
            raise ValueError("`options` applies only to a `choice:` rule")
        _check_zones(self.high, self.low, "")
        return self

    @property
    def effective_low(self) -> float:
        """The refuse cut-point: `low`, or `high` when none is written (one threshold, no band)."""
        return self.high if self.low is None else self.low

    def questions(self) -> list[str]:
        """Every question id the rule reads (gate first)."""
        ids = [self.gate.question] if self.gate else []
        if self.question:
            ids.append(self.question)
        if self.choice:
            ids.append(self.choice)
        ids.extend(self.any or [])
        return ids

    def outcomes(self) -> list[str]:
        names = [self.review, self.else_]
        if self.then is not None:
            names.append(self.then)
        if self.options:
            names.extend(self.options.values())
        if self.gate:
            names.append(self.gate.closed)
        return names


class Policy(_Spec):
    """Declared outcomes, the rules in priority order, the default and the failure outcome."""

    outcomes: dict[str, OutcomeKind]
    rules: list[Rule] = Field(default_factory=list)
    default: str
    on_error: str | None = None

    @model_validator(mode="after")
    def _check(self) -> Policy:
        ids = [r.id for r in self.rules]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"rule ids must be unique; repeated: {dupes}")
        declared = set(self.outcomes)
        for rule in self.rules:
            for name in rule.outcomes():
                if name != NEXT and name not in declared:
                    raise ValueError(
                        f"rule {rule.id!r} names outcome {name!r}, which is not declared in outcomes "
                        f"(declared: {sorted(declared)})"
                    )
        if self.default not in declared:
            raise ValueError(f"default outcome {self.default!r} is not declared (declared: {sorted(declared)})")
        on_error = self.on_error_outcome
        if on_error != RAISE:
            if on_error not in declared:
                raise ValueError(f"on_error names {on_error!r}, which is not declared (declared: {sorted(declared)})")
            if self.outcomes[on_error] == "act":
                raise ValueError(
                    f"on_error must not be an 'act' outcome ({on_error!r}): a failing judge never becomes a pass"
                )
        return self

    @model_validator(mode="before")
    @classmethod
    def _implicit_review(cls, data: Any) -> Any:
        # `review` is every rule's default band outcome; declare it implicitly when it is used.
        if isinstance(data, Mapping) and isinstance(data.get("outcomes"), Mapping):
            outcomes = dict(data["outcomes"])
            rules = data.get("rules") or []
            uses_review = any(isinstance(r, Mapping) and r.get("review", "review") == "review" for r in rules)
            if uses_review and "review" not in outcomes:
                outcomes["review"] = "review"
                data = {**data, "outcomes": outcomes}
        return data

    @property
    def on_error_outcome(self) -> str:
        """The declared `on_error`, else the first `refuse` outcome, else the first `review` one.

        Failing closed by default: a judge error refuses (or asks for review), never acts.
        """
        if self.on_error is not None:
            return self.on_error
        for kind in ("refuse", "review"):
            for name, k in self.outcomes.items():
                if k == kind:
                    return name
        return RAISE

    def check_questions(self, questions: Mapping[str, QuestionT]) -> list[tuple[str, str]]:
        """Problems with the questions the rules name, as (rule id, message) pairs."""
        problems: list[tuple[str, str]] = []
        for rule in self.rules:
            for qid in rule.questions():
                if qid not in questions:
                    problems.append((rule.id, f"names question {qid!r}, which the rubric does not define"))
            if problems:
                continue
            if rule.gate and not isinstance(questions[rule.gate.question], Noul):
                problems.append((rule.id, f"gate {rule.gate.question!r} must be a noul"))
            if rule.choice is not None:
                q = questions[rule.choice]
                if not isinstance(q, Choice):
                    problems.append((rule.id, f"choice {rule.choice!r} must be a choice question, not a {q.type}"))
                else:
                    unknown = sorted(set(rule.options or {}) - set(q.criteria))
                    if unknown:
                        problems.append((rule.id, f"options {unknown} are not options of {rule.choice!r} ({q.options})"))
            if rule.question is not None:
                q = questions[rule.question]
                if isinstance(q, Choice):
                    if rule.option is None:
                        problems.append((rule.id, f"question {rule.question!r} is a choice: name an `option`"))
                    elif rule.option not in q.criteria:
                        problems.append((rule.id, f"option {rule.option!r} is not an option of {rule.question!r}"))
                elif rule.option is not None:
                    problems.append((rule.id, f"option applies to a choice; {rule.question!r} is a {q.type}"))
            for qid in rule.any or []:
                if isinstance(questions[qid], Choice):
                    problems.append((rule.id, f"any: {qid!r} is a choice; max-aggregation reads nouls and scores"))
        return problems


# --------------------------------------------------------------------------- evaluation


def _value(answer: AnswerT, option: str | None = None) -> float:
    if isinstance(answer, NoulAnswer):
        return answer.noul
    if isinstance(answer, ScoreAnswer):
        return answer.normalized
    return answer.probabilities[option] if option is not None else answer.probability


Thresholds = Mapping[str, tuple[float, float]]


def evaluate(
    policy: Policy,
    answers: Mapping[str, AnswerT],
    *,
    thresholds: Thresholds | None = None,
    gates: Thresholds | None = None,
    transform: Callable[[str, AnswerT], AnswerT] | None = None,
    state: Any = None,
) -> Verdict:
    """Run the rules in order over `answers`.

    `thresholds` overrides a rule's (high, low) by rule id — fitted cut-points from a rubric's
    calibration; `gates` does the same for the rules' gates. `transform` maps each answer before
    it is read (a fitted recalibration). `state` is what was judged: a rule whose `when` does not
    hold for it is skipped (without a state every rule runs).
    """
    thresholds = thresholds or {}
    gates = gates or {}
    read: dict[str, AnswerT] = {}

    def get(qid: str) -> AnswerT:
        if qid not in read:
            read[qid] = transform(qid, answers[qid]) if transform else answers[qid]
        return read[qid]

    trace: list[RuleTrace] = []
    for rule in policy.rules:
        if not applies(rule, state):
            trace.append(RuleTrace(rule=rule.id, zone="skipped"))
            continue
        if rule.gate is not None:
            g = _value(get(rule.gate.question))
            g_high, g_low = gates.get(rule.id, (rule.gate.high, rule.gate.effective_low))
            if g <= g_low and g < g_high:
                trace.append(RuleTrace(rule=rule.id, question=rule.gate.question, probability=g, zone="gate",
                                       outcome=None if rule.gate.closed == NEXT else rule.gate.closed))
                if rule.gate.closed == NEXT:
                    continue
                return _verdict(policy, rule.gate.closed, rule.id, rule.gate.question, None, g,
                                g_low, "gate", trace)
            if g < g_high:
                trace.append(RuleTrace(rule=rule.id, question=rule.gate.question, probability=g, zone="band",
                                       outcome=rule.review))
                return _verdict(policy, rule.review, rule.id, rule.gate.question, None, g,
                                g_high, "band", trace)
        option: str | None = rule.option
        if rule.any is not None:
            values = {qid: _value(get(qid)) for qid in rule.any}
            qid = max(values, key=lambda k: values[k])
            p = values[qid]
        elif rule.choice is not None:
            qid = rule.choice
            ans = get(qid)
            assert isinstance(ans, ChoiceAnswer)
            option = ans.choice
            p = ans.probability
        else:
            assert rule.question is not None  # the spec's validation: a rule reads any, choice or question
            qid = rule.question
            p = _value(get(qid), option)
        high, low = thresholds.get(rule.id, (rule.high, rule.effective_low))
        if p >= high:
            zone: Zone = "high"
            outcome = (rule.options or {}).get(option, rule.then) if rule.choice and option is not None else rule.then
            cut = high
        elif p <= low:
            zone, outcome, cut = "low", rule.else_, low
        else:
            zone, outcome, cut = "band", rule.review, high
        if outcome is None:  # a choice winner without a mapping and no `then`
            outcome = NEXT
        trace.append(RuleTrace(rule=rule.id, question=qid, probability=p, zone=zone,
                               outcome=None if outcome == NEXT else outcome))
        if outcome != NEXT:
            return _verdict(policy, outcome, rule.id, qid, option if rule.choice or rule.option else None,
                            p, cut, zone, trace)
    return Verdict(outcome=policy.default, kind=policy.outcomes[policy.default], zone="default", trace=trace)


def _verdict(policy: Policy, outcome: str, rule: str, qid: str | None, option: str | None, p: float,
             cut: float, zone: Zone, trace: list[RuleTrace]) -> Verdict:
    return Verdict(outcome=outcome, kind=policy.outcomes[outcome], rule=rule, question=qid, option=option,
                   probability=p, threshold=cut, zone=zone, trace=trace)


__all__ = ["NEXT", "RAISE", "Gate", "Policy", "Rule", "Verdict", "When", "applies", "evaluate"]
