"""From answers and labels to the arrays the metrics and fitters read.

`question_data` pairs each labelled, answered item with its label for one question; `rule_data`
turns a policy rule into the number it reads (p) and whether acting on it would be right (y);
`split_ids` decides, once per run, which items fit and which report.
"""

from __future__ import annotations

import base64
import hashlib
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import numpy as np

from ..answers import ChoiceAnswer, NoulAnswer, ScoreAnswer, normalize_score
from ..errors import LabelledSetError
from ..policy import Rule, applies
from ..questions import Choice, Noul, Score
from ..rubric.calibration import CalibrationBlock, Calibrator, QuestionCalibration, StoredAnswers
from ..state import canonical_json
from .dataset import LabelledSet
from .metrics import choice_metrics, noul_metrics, score_metrics
from .run import RunResult

AnswerT = NoulAnswer | ChoiceAnswer | ScoreAnswer
Transform = Callable[[str, AnswerT], AnswerT]


def _noul(a: AnswerT) -> float:
    """A Noul's probability; a question's answers are all of its kind (`question_data`)."""
    assert isinstance(a, NoulAnswer)
    return a.noul


def _probabilities(a: AnswerT) -> dict[str, float]:
    """A Choice's or a Score's distribution, by option name or level index."""
    assert not isinstance(a, NoulAnswer)
    return a.probabilities


@dataclass
class QuestionData:
    """One question's labelled, answered items, in file order."""

    qid: str
    kind: str
    ids: list[str] = field(default_factory=list)
    answers: list[AnswerT] = field(default_factory=list)
    labels: list[Any] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)  # id + state, so "the same items" means the same content

    def __len__(self) -> int:
        return len(self.ids)

    def take(self, keep: set[str]) -> QuestionData:
        rows = [i for i, x in enumerate(self.ids) if x in keep]
        return QuestionData(self.qid, self.kind, [self.ids[i] for i in rows], [self.answers[i] for i in rows],
                            [self.labels[i] for i in rows], [self.keys[i] for i in rows])

    def mapped(self, transform: Transform | None) -> list[AnswerT]:
        return self.answers if transform is None else [transform(self.qid, a) for a in self.answers]

    def noul(self, transform: Transform | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(p, y) of a Noul."""
        return (np.array([_noul(a) for a in self.mapped(transform)], float),
                np.array(self.labels, bool))

    def dists(self, transform: Transform | None = None) -> tuple[list[list[float]], list[list[str]], list[int]]:
        """Distributions, option names and label indices of a Choice or Score."""
        dists, names, idx = [], [], []
        for a, lab in zip(self.mapped(transform), self.labels):
            probs = _probabilities(a)
            keys = list(probs)
            dists.append([probs[k] for k in keys])
            names.append(keys)
            idx.append(keys.index(str(lab)) if isinstance(a, ScoreAnswer) else keys.index(lab))
        return dists, names, idx

    def metrics(self, transform: Transform | None = None, *, threshold: float = 0.5, n_boot: int = 1000,
                seed: int = 0) -> dict[str, Any]:
        if self.kind == "noul":
            p, y = self.noul(transform)
            return noul_metrics(p, y, threshold=threshold, n_boot=n_boot, seed=seed)
        dists, names, idx = self.dists(transform)
        if self.kind == "choice":
            labels = [nm[i] for nm, i in zip(names, idx)]
            return choice_metrics(dists, names, labels, n_boot=n_boot, seed=seed)
        return score_metrics(dists, idx, n_boot=n_boot, seed=seed)


def question_data(dataset: LabelledSet, run: RunResult, qid: str) -> QuestionData:
    """Items labelled for `qid` and answered; the question's type from the first such item.

    The loaders refuse a set whose id changes type (`check_question_types`); a set built by hand
    that does so gets a `LabelledSetError` here rather than a pooled mix of answers.
    """
    qd: QuestionData | None = None
    for item in dataset.items:
        if qid not in item.labels or item.id not in run.answers:
            continue
        ans = run.answers[item.id].answers.get(qid)
        if ans is None:
            continue
        if qd is None:
            qd = QuestionData(qid, ans.type)
        elif ans.type != qd.kind:
            raise LabelledSetError(f"question {qid!r} is a {ans.type} for item {item.id!r} but a {qd.kind} "
                                   f"for item {qd.ids[0]!r}; a question id keeps its type across the set",
                                   path=dataset.path, line=item.line)
        qd.ids.append(item.id)
        qd.answers.append(ans)
        qd.labels.append(item.labels[qid])
        qd.keys.append(item.id + "\x00" + canonical_json(item.state))
    return qd if qd is not None else QuestionData(qid, "noul")


def split_ids(ids: Iterable[str], fraction: float, seed: int) -> tuple[set[str], set[str]]:
    """A random split of item ids (sorted first, so file order does not matter): `fraction` fit."""
    if not 0 < fraction < 1:
        raise ValueError(f"the fit share must be within (0, 1), got {fraction}")
    ordered = sorted(set(ids))
    perm = np.random.default_rng(seed).permutation(len(ordered))
    cut = round(fraction * len(ordered))
    fit = {ordered[i] for i in perm[:cut]}
    return fit, set(ordered) - fit


# --------------------------------------------------------------------------- rules


class RuleNotFittable(ValueError):
    """A rule whose correct outcome the labels do not define (a Score rule, say)."""


def _value(a: AnswerT, option: str | None = None) -> float:
    if isinstance(a, NoulAnswer):
        return a.noul
    if isinstance(a, ScoreAnswer):
        return a.normalized
    return a.probabilities[option] if option is not None else a.probability


def gate_rule(rule: Rule) -> Rule:
    """A rule's gate read as a rule of its own on the gate's question, for fitting and measuring.

    Opening wrongly lets the rule decide, so it is priced as the rule's `then`; closing wrongly
    passes the item on (`closed`).
    """
    assert rule.gate is not None
    return rule.model_copy(update={
        "question": rule.gate.question, "option": None, "any": None, "choice": None, "options": None,
        "gate": None, "high": rule.gate.high, "low": rule.gate.low, "else_": rule.gate.closed,
    })


def rules_and_gates(rules: Iterable[Rule]) -> Iterator[tuple[str, Rule, bool]]:
    """Each rule, its gate (read as a rule of its own, named `<id> (gate)`) just before it:
    (name, rule to measure, whether it is a gate)."""
    for rule in rules:
        if rule.gate is not None:
            yield f"{rule.id} (gate)", gate_rule(rule), True
        yield rule.id, rule, False


def rule_data(rule: Rule, questions: Mapping[str, Noul | Choice | Score], dataset: LabelledSet, run: RunResult,
              transform: Transform | None = None, keep: set[str] | None = None) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(ids, p, y) for a rule: p the number it reads, y whether its `then` outcome is right.

    * `question:` a Noul → y is its label; a Choice `option` → y is "the label is that option";
    * `any:` → p is the maximum over the flags, y is "some flag is labelled true"; an item needs
      a label for at least one flag, and a flag it does not label is read as false (sets often
      label one flag an item; `fit_calibration` notes when it relies on this);
    * `choice:` → p is the winner's probability, y is "the winner is the labelled option";
    * `question:` a Score → p is its normalised level, and the labelled level says which zone is
      right through the cut-points *as written*: a level at or above `high` (normalised) wants
      `then`, one at or below `low` wants the low zone, one between them wants the band and is left
      out (the author's cut-points say which levels go where; the fit finds where the model's
      continuous score should cut to match).
    A gate is not modelled: thresholds are fitted on every item, gated or not. Items whose state a
    rule's `when` excludes are left out: the rule never decides them.
    """
    if rule.any is not None and any(isinstance(questions.get(q), Score) for q in rule.any):
        raise RuleNotFittable(f"rule {rule.id!r} reads a score among its flags")
    ids, ps, ys = [], [], []
    for item in dataset.items:
        if (keep is not None and item.id not in keep) or item.id not in run.answers:
            continue
        if not applies(rule, item.state):
            continue
        got = run.answers[item.id].answers

        def ans(qid: str, got: Mapping[str, AnswerT] = got) -> AnswerT:
            a = got[qid]
            return transform(qid, a) if transform else a

        if rule.any is not None:
            if not all(q in got for q in rule.any):
                continue
            labs = [item.labels[q] for q in rule.any if q in item.labels]
            if not labs:
                continue
            y = any(v is True for v in labs)
            p = max(_value(ans(q)) for q in rule.any)
        elif rule.choice is not None:
            if rule.choice not in item.labels or rule.choice not in got:
                continue
            a = ans(rule.choice)
            assert isinstance(a, ChoiceAnswer)
            p, y = a.probability, a.choice == item.labels[rule.choice]
        else:
            qid = rule.question or ""
            if qid not in item.labels or qid not in got:
                continue
            p = _value(ans(qid), rule.option)
            question = (item.questions or {}).get(qid) or questions.get(qid)  # a line's own ladder first
            if isinstance(question, Score):
                side = _score_side(rule, question, item.labels[qid])
                if side is None:
                    continue
                y = side
            else:
                y = item.labels[qid] == rule.option if rule.option is not None else bool(item.labels[qid])
        ids.append(item.id)
        ps.append(p)
        ys.append(y)
    return ids, np.array(ps, float), np.array(ys, bool)


def _score_side(rule: Rule, question: Score, level: Any) -> bool | None:
    """Whether a labelled level wants the rule's high zone (True), its low zone (False) or the band (None)."""
    value = normalize_score(float(level), len(question.levels))
    if value >= rule.high:
        return True
    if value <= rule.effective_low:
        return False
    return None


def transform_of(calibrators: Mapping[str, Calibrator]) -> Transform:
    """The policy's transform for a set of fitted calibrators (the same code the rubric runs)."""
    block = CalibrationBlock(model="-", fitted_at=datetime.now(UTC), data_hash="-", n=0,
                             policy_fingerprint="-",
                             questions={q: QuestionCalibration(fingerprint="-", n=0, calibrator=c)
                                        for q, c in calibrators.items()})
    return block.transform


# --------------------------------------------------------------------------- stored answers (McNemar)


def ids_hash(ids: Iterable[str]) -> str:
    h = hashlib.sha256()
    for i in sorted(ids):
        h.update(i.encode("utf-8") + b"\n")
    return h.hexdigest()[:16]


def encode_answers(qd: QuestionData) -> StoredAnswers:
    """The judge's discrete answer per item (yes/no at 0.5, or the winner's index), sorted by id,
    packed and compressed, so a later run can be compared item by item (McNemar)."""
    order = sorted(range(len(qd)), key=lambda i: qd.ids[i])
    enc: Literal["bits", "bytes"]
    if qd.kind == "noul":
        raw = np.packbits(np.array([_noul(qd.answers[i]) >= 0.5 for i in order], np.bool_)).tobytes()
        enc = "bits"
    else:
        vals = []
        for i in order:
            probs = _probabilities(qd.answers[i])
            keys = list(probs)
            vals.append(keys.index(max(keys, key=probs.__getitem__)))
        raw = bytes(vals)
        enc = "bytes"
    return StoredAnswers(n=len(qd), ids=ids_hash(qd.keys), encoding=enc,
                         data=base64.b64encode(zlib.compress(raw, 9)).decode("ascii"))


def decode_answers(stored: StoredAnswers) -> np.ndarray:
    """Stored answers back as an int array in sorted-id order."""
    raw = zlib.decompress(base64.b64decode(stored.data))
    n = stored.n
    if stored.encoding == "bits":
        return np.unpackbits(np.frombuffer(raw, np.uint8))[:n].astype(int)
    return np.frombuffer(raw, np.uint8)[:n].astype(int)


def current_answers(qd: QuestionData) -> np.ndarray:
    return decode_answers(encode_answers(qd))


def correct_in_id_order(qd: QuestionData, answers: np.ndarray) -> np.ndarray:
    """Whether each answer (in sorted-id order) matches the item's label."""
    order = sorted(range(len(qd)), key=lambda i: qd.ids[i])
    out = []
    for pos, i in enumerate(order):
        lab = qd.labels[i]
        if qd.kind == "noul":
            out.append(bool(answers[pos]) == bool(lab))
        else:
            keys = list(_probabilities(qd.answers[i]))
            want = keys.index(str(lab)) if qd.kind == "score" else keys.index(lab)
            out.append(int(answers[pos]) == want)
    return np.array(out, bool)


__all__ = ["QuestionData", "RuleNotFittable", "correct_in_id_order", "current_answers", "decode_answers",
           "encode_answers", "ids_hash", "question_data", "rule_data", "split_ids",
           "transform_of"]
