"""`Rubric`: a loaded rubric file — questions, policy and calibration in one reviewed place."""

from __future__ import annotations

import functools
import time
import warnings
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, overload

from pydantic import ValidationError

from ..answers import Answer, Answers, ChoiceAnswer, NoulAnswer, ScoreAnswer
from ..decision import Decision
from ..errors import (
    CalibrationWarning,
    InputError,
    JudgeError,
    RubricError,
    StateError,
    error_summary,
    validation_problems,
)
from ..judges.aliases import warn_if_moving_alias
from ..judges.base import Answered, JudgeLike, Questions, aanswers_or_errors, answers_or_errors, as_judge
from ..judges.head import Head
from ..policy import RAISE, Policy, Verdict, evaluate
from ..questions import Choice, Noul, Score
from ..state import backtick_refs, check_state, fingerprint
from .alone import AskedAlone
from .calibration import CalibrationBlock
from .loader import check_sendable, located_error, parse_yaml, plain, position, read_text
from .schema import RubricSpec

if TYPE_CHECKING:
    from ..judges.base import Judge

#: Answers that code knows for certain, by question id: a float is a Noul's probability.
Known = Mapping[str, "float | Answer"]


def question_fingerprint(question: Noul | Choice | Score, asked_alone: Mapping[str, str | None] | None = None) -> str:
    """What a question's calibration was fitted against: its wording, and the fields replaced when
    it is asked alone (a different view of the state is a different question)."""
    if not asked_alone:
        return question.fingerprint
    return fingerprint({"question": question.wire(), "asked_alone": dict(asked_alone)})


class Rubric:
    """A validated rubric. Build one with `Rubric.load(path)`, `Rubric.loads(text)` or
    `Rubric.builtin(name)`; decide with `rubric.decide(state, judge=...)`."""

    def __init__(self, spec: RubricSpec, *, path: str | None = None, source: str | None = None) -> None:
        self._spec = spec
        self.path = path
        self.source = source
        self._stale_warned: set[str] = set()
        self._last_headed: tuple[Judge, Judge] | None = None
        # What the frozen spec decides, computed once and kept: nothing on the decision path
        # re-hashes the rubric (`hash`, `policy_fingerprint`, the staleness of its calibration).
        self._stale_by_model: dict[str | None, list[str]] = {}
        # The caller's cut-points (`with_cuts`), by rule id: a setting of this copy, not of the file.
        self._cuts: Mapping[str, tuple[float, float]] = MappingProxyType({})

    @property
    def spec(self) -> RubricSpec:
        """The validated rubric (frozen; a rubric is never edited in place, so what is derived
        from it is computed once)."""
        return self._spec

    # ------------------------------------------------------------------ construction

    @classmethod
    def load(cls, path: str | Path) -> Rubric:
        """Read and validate a rubric file; every error names the file, line, column and field."""
        text = read_text(path)
        return cls.loads(text, path=str(path))

    @classmethod
    def loads(cls, text: str, *, path: str | None = None) -> Rubric:
        doc = parse_yaml(text, path)
        data = plain(doc)
        check_sendable(data, doc, path)
        try:
            spec = RubricSpec.model_validate(data)
        except ValidationError as exc:
            raise located_error(exc, doc, path) from None
        _check_semantics(spec, doc, path)
        return cls(spec, path=path, source=text)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Rubric:
        check_sendable(dict(data), None, None)
        try:
            spec = RubricSpec.model_validate(dict(data))
        except ValidationError as exc:
            first = validation_problems(exc)[0]
            raise RubricError(first.message, field=first.field or None) from None
        _check_semantics(spec, None, None)
        return cls(spec)

    @classmethod
    def resolve(cls, ref: Rubric | str | Path) -> Rubric:
        """A rubric reference as every entry point takes one (`gate(...)`, a seam's `rubric=`, the
        CLI): a `Rubric` as it is, a path to a rubric file, or a built-in rubric's name
        (`passage-gate`, `lint/swallowed-error`). A file that exists wins over a built-in of the
        same name; a reference that is neither is one `RubricError`, whichever was meant."""
        if isinstance(ref, Rubric):
            return ref
        if not isinstance(ref, (str, Path)) or not str(ref).strip():
            raise RubricError(f"a rubric is a Rubric, a rubric file's path or a built-in rubric's name, got {ref!r}")
        if Path(ref).is_file():
            return cls.load(ref)
        try:
            path = builtin_path(str(ref))
        except RubricError:
            raise RubricError(f"no such rubric file, and no built-in rubric named {str(ref)!r}; "
                              f"built-in rubrics: {builtin_names()}") from None
        return cls.load(path)

    @classmethod
    def builtin(cls, name: str) -> Rubric:
        """A rubric shipped with seams, by name (`memory-admission`, `lint/swallowed-error`)."""
        path = builtin_path(name)
        return cls.load(path)

    def with_cuts(self, cuts: Mapping[str, float | tuple[float, float]]) -> Rubric:
        """This rubric with these rules' cut-points in place of the fitted or written ones: the
        operating point a deployment chooses on the trade-off the calibration measured (each
        fitted rule's curve is in its docs), without editing the reviewed file.

        `cuts` maps a rule id to one cut (the rule fires at or above it; no review band) or a
        `(high, low)` pair (fires at or above `high`, routes to review from `low`). Only rules
        that read a probability take a cut; each value is a finite probability with `high >= low`.
        The cuts are part of `hash`, so decisions made at another operating point are told apart.
        """
        if not isinstance(cuts, Mapping):
            raise InputError(f"cuts is a mapping of rule id to a cut-point, got {type(cuts).__name__}")
        rules = {r.id: r for r in self.spec.policy.rules}
        checked: dict[str, tuple[float, float]] = {}
        for rule_id, value in cuts.items():
            rule = rules.get(rule_id) if isinstance(rule_id, str) else None
            if rule is None:
                raise InputError(f"cuts names rule {rule_id!r}, which rubric {self.name!r} does not have; "
                                 f"its rules: {', '.join(rules)}")
            pair = (value, value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value
            if not (isinstance(pair, tuple) and len(pair) == 2
                    and all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0.0 <= v <= 1.0 for v in pair)
                    and pair[0] >= pair[1]):
                raise InputError(f"the cut of rule {rule_id!r} is a probability in [0, 1] or a (high, low) pair "
                                 f"of them with high >= low, got {value!r}")
            checked[rule_id] = (float(pair[0]), float(pair[1]))
        out = Rubric(self.spec, path=self.path, source=self.source)
        out._cuts = MappingProxyType({**self._cuts, **checked})
        return out

    @property
    def cuts(self) -> Mapping[str, tuple[float, float]]:
        """The cut-points set with `with_cuts`, by rule id, as (high, low)."""
        return self._cuts

    def thresholds(self, calibration: CalibrationBlock | None) -> dict[str, tuple[float, float]]:
        """(high, low) by rule id where they are not the policy's written ones: the calibration's
        fitted cut-points (when it is in force), then the cuts set with `with_cuts`."""
        return {**(calibration.threshold_overrides() if calibration is not None else {}), **self._cuts}

    # ------------------------------------------------------------------ identity

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def version(self) -> str:
        return self.spec.version

    @property
    def questions(self) -> dict[str, Noul | Choice | Score]:
        return dict(self.spec.questions)

    @property
    def policy(self) -> Policy:
        return self.spec.policy

    @property
    def calibration(self) -> CalibrationBlock | None:
        return self.spec.calibration

    @functools.cached_property
    def hash(self) -> str:
        """Content hash for audit: name, version, state, questions and policy.

        Description, comments, layout and the calibration block do not change it, so a
        decision's hash identifies the judgement that was asked, not how the file looks; cuts
        set with `with_cuts` do (they move what the policy decides).
        """
        return fingerprint(
            {
                "name": self.spec.name,
                "version": self.spec.version,
                "state": self.spec.state.model_dump(mode="json"),
                "questions": {qid: q.wire() for qid, q in self.spec.questions.items()},
                "policy": self.policy_fingerprint(),
                **({"asked_alone": self.spec.asked_alone} if self.spec.asked_alone else {}),
                **({"cuts": {k: list(v) for k, v in sorted(self._cuts.items())}} if self._cuts else {}),
            }
        )

    def asking(self, judge: Judge | JudgeLike) -> Judge:
        """`judge` as this rubric asks it (every path that asks the rubric's questions goes through
        here, and nothing else stacks wrappers on a judge): a duck-typed judge given the
        contract's defaults (`as_judge`), with the rubric's fitted heads when they were fitted on
        this very local model (`Judge.with_heads`; any other judge is left as it is), and wrapped
        so the `asked_alone` questions see their view of the state."""
        if isinstance(judge, AskedAlone):
            return judge
        judge = as_judge(judge)
        if self.current_heads:
            judge = self._headed(judge)
        if not self.spec.asked_alone:
            return judge
        return AskedAlone(judge, self.spec.asked_alone)

    def _headed(self, judge: Judge) -> Judge:
        """`judge.with_heads(...)`, built once per judge: a rubric is asked with the same judge
        call after call, and the headed judge hashes its heads when it is built."""
        last = self._last_headed
        if last is not None and last[0] is judge:
            return last[1]
        headed = judge.with_heads(self.current_heads)
        self._last_headed = (judge, headed)
        return headed

    @functools.cached_property
    def stored_heads(self) -> Mapping[str, Head]:
        """The heads stored in the calibration block, by question id."""
        cal = self.spec.calibration
        if cal is None:
            return MappingProxyType({})
        return MappingProxyType({qid: qc.head for qid, qc in cal.questions.items() if qc.head is not None})

    @functools.cached_property
    def current_heads(self) -> Mapping[str, Head]:
        """The stored heads whose question is asked as it was when they were fitted (same
        wording, same `asked_alone` view of the state): the ones laid over a judge."""
        cal = self.spec.calibration
        asked = self.spec.questions
        return MappingProxyType({
            qid: h for qid, h in self.stored_heads.items() if cal is not None and qid in asked
            and cal.questions[qid].fingerprint == question_fingerprint(asked[qid], self.spec.asked_alone.get(qid))})

    def policy_fingerprint(self) -> str:
        """What a calibration was fitted against. Unset optional fields are left out, so a field
        added to the format later does not make every existing calibration stale."""
        return self._policy_fingerprint

    @functools.cached_property
    def _policy_fingerprint(self) -> str:
        return fingerprint(self.spec.policy.model_dump(mode="json", by_alias=True, exclude_none=True))

    def stale_reasons(self, model_id: str | None) -> list[str]:
        """Why the calibration block does not apply (empty when it does, or when there is none).
        Worked out once per model id: the rubric is frozen."""
        got = self._stale_by_model.get(model_id)
        if got is None:
            got = self._stale_by_model[model_id] = self._stale_reasons(model_id)
        return list(got)

    def _stale_reasons(self, model_id: str | None) -> list[str]:
        cal = self.spec.calibration
        if cal is None:
            return []
        reasons = []
        if model_id is not None and cal.model != model_id:
            reasons.append(f"fitted on model {cal.model!r}, running on {model_id!r}")
        if cal.policy_fingerprint != self.policy_fingerprint():
            reasons.append("the policy changed since it was fitted")
        for qid, qc in cal.questions.items():
            q = self.spec.questions.get(qid)
            if q is None:
                reasons.append(f"question {qid!r} no longer exists")
            elif qc.fingerprint != question_fingerprint(q, self.spec.asked_alone.get(qid)):
                if qc.fingerprint == question_fingerprint(q) or qid in self.spec.asked_alone:
                    reasons.append(f"question {qid!r} changed wording or `asked_alone` fields since it was fitted")
                else:
                    reasons.append(f"question {qid!r} changed wording since it was fitted")
        return reasons

    # ------------------------------------------------------------------ deciding

    def check_state(self, state: Any) -> Any:
        """Validate a state against the rubric's declared shape; raise `StateError`."""
        check_state(state)
        spec = self.spec.state
        expected = {"text": str, "object": dict, "array": list}[spec.type]
        if not isinstance(state, expected):
            article = {"text": "a text", "object": "an object", "array": "an array"}[spec.type]
            raise StateError(f"rubric {self.name!r} expects {article} state, got {type(state).__name__}")
        if spec.type == "object":
            missing = [f for f, fs in spec.fields.items() if fs.required and f not in state]
            if missing:
                raise StateError(
                    f"rubric {self.name!r}: state is missing required field(s) {missing}; "
                    f"declared fields: {list(spec.fields)}"
                )
        return state

    def decide(self, state: Any, judge: Judge | JudgeLike | None = None, *, keep_state: bool = False,
               known: Known | None = None) -> Decision:
        """Ask every question about `state` and apply the policy.

        `known` holds answers that code knows for certain (`{"irreversible": 1.0}`: a float is a
        Noul's probability; an answer object stands for itself). Those questions are not asked;
        the judge answers the rest, and the policy reads both.

        Input errors (a bad state, an unknown question in `known`) raise before anything is sent.
        A judge error becomes the policy's `on_error` outcome (never an `act` outcome), or
        propagates when it is `raise`.
        """
        return self.decide_many([state], judge, keep_state=keep_state, known=known)[0]

    async def adecide(self, state: Any, judge: Judge | JudgeLike | None = None, *, keep_state: bool = False,
                      known: Known | None = None) -> Decision:
        """`decide` for async code: the judge's `aask`, never blocking the event loop."""
        return (await self.adecide_many([state], judge, keep_state=keep_state, known=known))[0]

    # Without `return_exceptions` every slot is a Decision: the overloads say so to a type checker.
    @overload
    def decide_many(self, states: Sequence[Any], judge: Judge | JudgeLike | None = None, *, keep_state: bool = False,
                    known: Known | None = None, return_exceptions: Literal[False] = False) -> list[Decision]: ...
    @overload
    def decide_many(self, states: Sequence[Any], judge: Judge | JudgeLike | None = None, *, keep_state: bool = False,
                    known: Known | None = None, return_exceptions: bool) -> list[Decision | StateError]: ...

    def decide_many(self, states: Sequence[Any], judge: Judge | JudgeLike | None = None, *, keep_state: bool = False,
                    known: Known | None = None,
                    return_exceptions: bool = False) -> list[Decision] | list[Decision | StateError]:
        """One decision per state, in order: `decide` for many states at once.

        The judge is asked once for all of them (`ask_many`: a local model batches the pairs);
        when that fails, it is asked state by state, so each state gets its own answers or the
        policy's `on_error` outcome. `known` applies to every state. With `return_exceptions`, a
        state the judge refuses as input (a `StateError`, such as one over its token budget) gives
        that error in its slot; otherwise it is raised.
        """
        if not states:
            return []
        given = self._checked_known(known)
        judge = as_judge(judge) if judge is not None else _default_judge()
        started = time.perf_counter()
        answered = self.answer_many(states, judge, questions=self._unknown(given))
        return self._decisions(states, answered, given, judge, started, keep_state, return_exceptions)

    @overload
    async def adecide_many(self, states: Sequence[Any], judge: Judge | JudgeLike | None = None, *, keep_state: bool = False,
                           known: Known | None = None,
                           return_exceptions: Literal[False] = False) -> list[Decision]: ...
    @overload
    async def adecide_many(self, states: Sequence[Any], judge: Judge | JudgeLike | None = None, *, keep_state: bool = False,
                           known: Known | None = None, return_exceptions: bool) -> list[Decision | StateError]: ...

    async def adecide_many(self, states: Sequence[Any], judge: Judge | JudgeLike | None = None, *, keep_state: bool = False,
                           known: Known | None = None,
                           return_exceptions: bool = False) -> list[Decision] | list[Decision | StateError]:
        """`decide_many` for async code: the judge's `aask_many`, never blocking the event loop."""
        if not states:
            return []
        given = self._checked_known(known)
        judge = as_judge(judge) if judge is not None else _default_judge()
        started = time.perf_counter()
        answered = await self.aanswer_many(states, judge, questions=self._unknown(given))
        return self._decisions(states, answered, given, judge, started, keep_state, return_exceptions)

    def answer_many(self, states: Sequence[Any], judge: Judge | JudgeLike | None = None, *,
                    questions: Questions | None = None) -> list[Answered]:
        """The rubric's questions about each state, asked as this rubric asks them (its `asked_alone`
        views): one `ask_many`, falling back to one `ask` per state, so each slot holds that state's
        answers or the error it met. States are checked before anything is sent.

        `questions` replaces the rubric's for one stage of a seam (the tool selector's Choices, whose
        options are the roster); their ids are the rubric's, so `asked_alone` still applies.
        """
        states, judge, qs = self._prepare(states, judge, questions)
        if not qs:
            return [Answers(model=judge.model_id, answers={}) for _ in states]
        return answers_or_errors(judge, states, qs)

    async def aanswer_many(self, states: Sequence[Any], judge: Judge | JudgeLike | None = None, *,
                           questions: Questions | None = None) -> list[Answered]:
        """`answer_many` for async code: `aask_many`, falling back to one `aask` per state."""
        states, judge, qs = self._prepare(states, judge, questions)
        if not qs:
            return [Answers(model=judge.model_id, answers={}) for _ in states]
        return await aanswers_or_errors(judge, states, qs)

    def _prepare(self, states: Sequence[Any], judge: Judge | JudgeLike | None,
                 questions: Questions | None) -> tuple[list[Any], Judge, Questions]:
        """Check every state before anything is sent; the judge as this rubric asks it."""
        if isinstance(states, (str, bytes, Mapping)):
            raise StateError("give a sequence of states; use decide() for one state")
        checked = [self.check_state(s) for s in states]
        judge = self.asking(judge if judge is not None else _default_judge())
        return checked, judge, self.spec.questions if questions is None else questions

    def _unknown(self, given: Mapping[str, Any]) -> dict[str, Noul | Choice | Score]:
        """The questions left to ask when `given` are known."""
        return {qid: q for qid, q in self.spec.questions.items() if qid not in given}

    def _checked_known(self, known: Known | None) -> dict[str, Any]:
        """`known` as answer objects, each checked against the question it answers."""
        out: dict[str, Any] = {}
        for qid, value in (known or {}).items():
            q = self.spec.questions.get(qid)
            if q is None:
                raise InputError(f"known answer for {qid!r}, which is not a question of rubric {self.name!r}; "
                                 f"questions: {list(self.spec.questions)}")
            if isinstance(value, bool | int | float) and isinstance(q, Noul):
                if not 0.0 <= float(value) <= 1.0:
                    raise InputError(f"known answer for {qid!r} must be a probability in [0, 1], got {value!r}")
                out[qid] = NoulAnswer(noul=float(value))
            elif isinstance(value, NoulAnswer | ChoiceAnswer | ScoreAnswer) and value.type == q.type:
                out[qid] = value
            else:
                raise InputError(f"known answer for {q.type} question {qid!r} must be "
                                 f"{'a probability or ' if isinstance(q, Noul) else ''}a {q.type} answer, got {value!r}")
        return out

    def _decisions(self, states: Sequence[Any], answered: Sequence[Answered], given: dict[str, Any], judge: Judge,
                   started: float, keep_state: bool, return_exceptions: bool) -> list[Decision | StateError]:
        """The policy applied to each state's answers (the known ones merged in), or `on_error`."""
        ms = _ms(started) / max(1, len(states))
        out: list[Decision | StateError] = []
        for state, got in zip(states, answered, strict=True):
            if isinstance(got, StateError):
                if not return_exceptions:
                    raise got
                out.append(got)
            elif isinstance(got, JudgeError):
                out.append(self.on_error(got, judge=judge, state=state, latency_ms=ms, keep_state=keep_state,
                                         known=given))
            else:
                if given:
                    merged = {**got.answers, **given}
                    got = got.model_copy(update={"answers": {q: merged[q] for q in self.spec.questions if q in merged}})
                out.append(self.decide_answers(got, state=state, keep_state=keep_state, latency_ms=ms,
                                               requested_model=judge.model_id))
        return out

    def decide_answers(
        self,
        answers: Answers,
        *,
        state: Any = None,
        keep_state: bool = True,
        latency_ms: float | None = None,
        requested_model: str | None = None,
    ) -> Decision:
        """Apply the policy to answers already in hand (replays, calibration, tests).

        `state`, when given, decides the rules' `when` conditions and is recorded in the decision
        unless `keep_state` is false (the audit log keeps no raw state unless asked).
        """
        # Staleness reads the model that answered (a served, versioned id); the alias warning
        # reads the model that was asked for, since only that can silently move.
        stored = self.spec.calibration
        cal = stored if stored is not None and not self._stale(answers.model) else None  # in force
        calibrated = cal is not None
        if calibrated and requested_model is not None:
            warn_if_moving_alias(requested_model, rubric=self.name, stacklevel=3)
        verdict: Verdict = evaluate(
            self.spec.policy,
            answers.answers,
            thresholds=self.thresholds(cal),
            gates=cal.gate_overrides() if cal is not None else None,
            transform=cal.transform if cal is not None else None,
            state=state,
        )
        return Decision(
            **verdict.model_dump(),
            answers=answers.answers,
            rubric=self.name,
            rubric_version=self.version,
            rubric_hash=self.hash,
            model=answers.model,
            calibrated=calibrated,
            latency_ms=latency_ms if latency_ms is not None else answers.latency_ms,
            windows=answers.windows,
            state=state if keep_state else None,
        )

    def _stale(self, model_id: str) -> bool:
        reasons = self.stale_reasons(model_id)
        if reasons and model_id not in self._stale_warned:
            self._stale_warned.add(model_id)
            warnings.warn(
                f"calibration of rubric {self.name!r} is stale and was not applied: {'; '.join(reasons)}",
                CalibrationWarning,
                stacklevel=4,
            )
        return bool(reasons)

    def on_error(self, exc: JudgeError, *, judge: Judge, state: Any = None, latency_ms: float | None = None,
                 keep_state: bool = False, known: Known | None = None) -> Decision:
        """The decision for a judge that failed: the policy's `on_error` outcome (fail closed,
        never an act outcome), or `exc` raised when the policy says `raise`.

        `known` answers (see `decide`) are the decision's `answers`: what code knows for certain
        holds when the judge fails too, so whatever reads the decision next (a `Cascade`'s strong
        side, an audit log) sees them."""
        given = self._checked_known(known)
        policy = self.spec.policy
        outcome = policy.on_error_outcome
        if outcome == RAISE:
            raise exc
        return Decision(
            outcome=outcome,
            kind=policy.outcomes[outcome],
            rule="on_error",
            zone="error",
            rubric=self.name,
            rubric_version=self.version,
            rubric_hash=self.hash,
            model=judge.model_id,
            answers={q: given[q] for q in self.spec.questions if q in given},
            latency_ms=0.0 if latency_ms is None else latency_ms,
            error=error_summary(exc),
            state=state if keep_state else None,
        )

    def __repr__(self) -> str:
        return f"Rubric({self.name!r}, version={self.version!r}, questions={list(self.spec.questions)})"


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _default_judge() -> Judge:
    from ..judges import default_judge

    return default_judge()


def _check_semantics(spec: RubricSpec, doc: Any, path: str | None) -> None:
    """Checks that need the whole rubric: backtick fields and the questions the policy names."""

    def fail(message: str, loc: list[Any]) -> None:
        line, col = position(doc, loc) if doc is not None else (None, None)
        raise RubricError(message, path=path, line=line, column=col, field=".".join(map(str, loc)))

    declared = spec.state.fields
    for qid, q in spec.questions.items():
        texts: list[tuple[list[Any], Any]] = [(["questions", qid, "instructions"], q.instructions)]
        if isinstance(q, Noul) and q.criteria is not None:
            texts += [(["questions", qid, "criteria"], [q.criteria.true, q.criteria.false])]
        elif isinstance(q, (Choice, Score)):
            texts += [(["questions", qid, "criteria"], q.criteria)]
        for loc, text in texts:
            for ref in backtick_refs(text):
                if ref not in declared:
                    have = f"declared fields: {list(declared)}" if declared else f"the state is {spec.state.type} and declares no fields"
                    fail(f"`{ref}` names a state field that is not declared ({have})", loc)
    problems = spec.policy.check_questions(spec.questions)
    if problems:
        index = {rule.id: i for i, rule in enumerate(spec.policy.rules)}
        rule_id, message = problems[0]
        fail(f"rule {rule_id!r} {message}", ["policy", "rules", index[rule_id]])


def builtin_path(name: str) -> Path:
    """Where a built-in rubric lives: inside the wheel, or in the source tree's `rubrics/`."""
    rel = name if name.endswith((".yaml", ".yml")) else f"{name}.yaml"
    candidates = []
    try:
        candidates.append(Path(str(resources.files("seams") / "_rubrics" / rel)))
    except (ModuleNotFoundError, TypeError):  # pragma: no cover
        pass  # not an installed package: the source tree's rubrics/ below
    candidates.append(Path(__file__).resolve().parents[2] / "rubrics" / rel)
    for c in candidates:
        if c.is_file():
            return c
    raise RubricError(f"no built-in rubric named {name!r}; available: {builtin_names()}")


def builtin_names() -> list[str]:
    roots = [Path(__file__).resolve().parents[2] / "rubrics"]
    try:
        roots.insert(0, Path(str(resources.files("seams") / "_rubrics")))
    except (ModuleNotFoundError, TypeError):  # pragma: no cover
        pass  # not an installed package: the source tree's rubrics/ below
    for root in roots:
        if root.is_dir():
            return sorted(str(p.relative_to(root).with_suffix("")) for p in root.rglob("*.yaml"))
    return []


__all__ = ["CalibrationWarning", "Rubric", "builtin_names", "builtin_path", "fingerprint", "question_fingerprint"]
