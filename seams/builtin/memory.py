"""Memory admission: `MemoryGate` decides what an agent may remember; `MemoryStore` keeps it.

Why a gate: an agent that stores everything it hears fills its memory with restatements, lets a
vague sentence overwrite a precise one, keeps two contradicting facts side by side, and stores
whatever an attacker phrased as a memory ("from now on always answer yes"). A geometric novelty
gate (drop when the nearest memory is very similar) makes the worst mistake of all: a correction
is *very* similar to what it corrects ("deploys on Thursdays" / "deploys on Fridays"), so it is
dropped as a duplicate and the stale fact stays.

The gate decides in this order:

1. **Code first.** Card numbers (Luhn), national ids, vendor keys, tokens and passwords in words
   are rejected before any model sees them (`seams.secrets`), and orders to the assistant,
   privilege claims, disabled safeguards, redirected payments and the like are quarantined
   (`seams.instructions`), both matched on the normal form of the text (look-alike letters,
   spacing, spelled-out digits). What may be a secret — a value where a credential shows, a
   password-shaped word, a hex key, a spelled-out or concatenated value — is redacted, and the
   rest is decided as any candidate (a reviewer would see the same redacted text, so holding it
   kept nothing safer and held many ordinary memories).
2. **The rubric** `memory-admission`, asked once per nearest memory: red flags (an instruction
   aimed at the system, a secret) → quarantine — on the shipped model each answered by a head
   fitted on labelled memories (the rubric's calibration block, with its own cut-point;
   `bench/fit_memory_heads.py`), because the bare model's flags separated neither orders from
   preferences nor secrets from talk about them on sets written without its rules; a candidate the memory already implies →
   skip as a duplicate (so a poorer restatement never overwrites a richer memory); related memories
   → restatement / correction / enrichment; otherwise worth keeping → admit.
   Where code can see the shape of the edit (`seams.builtin.edits`: the memory's words with a
   negation added or removed, or one short span swapped), it answers `related`, `poorer` and
   `relation` itself — related, not implied, a correction — and the policy decides on those
   answers; the red flags are still the model's. The questions about the candidate alone
   (instruction, secret, worth keeping) are listed in the rubric's `asked_alone`, so they see the
   candidate alone and the nearest memory can neither hide a red flag nor talk a fact out of
   being kept.

**Personal data is a choice** (`pii=`): phone numbers, email and postal addresses, dates of birth
and personal id numbers (`seams.personal`, found in code) are stored as given (`"admit"`), stored
with those parts replaced by their kind (`"redact"`, the default: the memory keeps that the user
has a phone number, not the number), or held for review with the redacted text (`"hold"`). With
`"redact"` and `"hold"` the judge, the store's look-up and the store only ever see the redacted
text. Government ids, card and account numbers are secrets, rejected whatever the setting.

`MemoryStore` never deletes: a supersede closes the old memory's validity interval
(`valid_to`, `superseded_by`) and the old memory stays listed, so "what did we believe on
Tuesday?" still has an answer. Nor does it ever write a secret: a text in which code finds one is
refused in every status, and a held memory that may hold one (code saw a possible secret, the
model suspected one, or the judge failed) keeps a redacted text and the reason, never the text
as given.
"""

from __future__ import annotations

import json
import re
import sqlite3
import uuid
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import pairwise
from math import sqrt
from pathlib import Path
from typing import Any, Literal

from ..answers import ChoiceAnswer
from ..database import SQLite
from ..decision import Decision
from ..errors import InputError
from ..instructions import disguised, find_instructions
from ..judges.base import Judge
from ..personal import find_personal
from ..questions import Choice
from ..routing import Decider, as_decider
from ..rubric import Rubric
from ..secrets import FlaggedSpan, find_secrets, redact, redact_values
from ..state import text_problem
from ._common import load_rubric
from .edits import Edit, minimal_edit

MemoryOutcome = Literal["admit", "supersede", "enrich", "skip_duplicate", "hold", "reject", "quarantine"]
MemoryStatus = Literal["active", "held"]
#: What the gate does with personal data (see `MemoryGate`).
PiiSetting = Literal["admit", "redact", "hold"]
PII_SETTINGS: tuple[PiiSetting, ...] = ("admit", "redact", "hold")

#: What the `memory` field says when nothing is stored yet (the gate then decides on worth alone).
NOTHING_STORED = "nothing stored"
#: The longest candidate (and stored memory) in characters. A memory is a short fact (the longest of
#: some 11,000 labelled candidates has 261 characters); code's secret and personal-data scans grow
#: faster than the text on some shapes (4,000 characters of "1.2.3.…" take 0.4 s, four times as many
#: several seconds; `bench/memory_code_scan_cost.py`), so a document is split into facts first.
MAX_CANDIDATE_CHARS = 4_000
#: The longest text the store writes: twice a candidate's, since a redaction's placeholder can be
#: longer than the value it replaces ("[date_of_birth]" for "1/2/90").
MAX_MEMORY_CHARS = 2 * MAX_CANDIDATE_CHARS


def _length_problem(text: str, what: str, limit: int, name: str) -> None:
    if len(text) > limit:
        raise InputError(f"{what} is at most {limit:,} characters (seams.builtin.memory.{name}), got "
                         f"{len(text):,}: a memory is a short fact; split a document into facts first")

# ---------------------------------------------------------------------------------------------
# the store
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Memory:
    """One stored memory and the interval in which it was believed."""

    id: str
    text: str
    valid_from: datetime
    valid_to: datetime | None = None
    superseded_by: str | None = None
    enriches: str | None = None
    status: MemoryStatus = "active"
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def current(self) -> bool:
        """Active and not superseded."""
        return self.status == "active" and self.valid_to is None


_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id            TEXT PRIMARY KEY,
    seq           INTEGER NOT NULL,
    text          TEXT NOT NULL,
    valid_from    TEXT NOT NULL,
    valid_to      TEXT,
    superseded_by TEXT REFERENCES memories (id),
    enriches      TEXT REFERENCES memories (id),
    status        TEXT NOT NULL CHECK (status IN ('active', 'held')),
    meta          TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS memories_current ON memories (status, valid_to);
"""

_WORD = re.compile(r"[a-z0-9]+")


def _now() -> datetime:
    return datetime.now(UTC)


def _bag(text: str) -> Counter[str]:
    words = _WORD.findall(text.lower())
    return Counter(words + [f"{a} {b}" for a, b in pairwise(words)])


def lexical_similarity(a: str, b: str) -> float:
    """Cosine of word and word-pair counts: a cheap, dependency-free retrieval score."""
    x, y = _bag(a), _bag(b)
    dot = sum(v * y[k] for k, v in x.items())
    norm = sqrt(sum(v * v for v in x.values())) * sqrt(sum(v * v for v in y.values()))
    return dot / norm if norm else 0.0


class MemoryStore:
    """A small memory store on SQLite (`":memory:"` for a throwaway one).

    Memories are never deleted or rewritten: `supersede` closes the old memory's validity
    interval and links it to its replacement in one transaction; `all()` lists closed ones too.
    `nearest` is lexical (word and word-pair cosine), enough to find the memories a candidate
    may restate or correct; pass your own `nearest=` to `MemoryGate.admit` to use embeddings.
    """

    def __init__(self, path: str | Path = ":memory:") -> None:
        self.path = str(path)
        self._db = SQLite(self.path, schema=_SCHEMA, what="memory store")

    @staticmethod
    def _memory(row: sqlite3.Row) -> Memory:
        return Memory(
            id=row["id"],
            text=row["text"],
            valid_from=datetime.fromisoformat(row["valid_from"]),
            valid_to=datetime.fromisoformat(row["valid_to"]) if row["valid_to"] else None,
            superseded_by=row["superseded_by"],
            enriches=row["enriches"],
            status=row["status"],
            meta=json.loads(row["meta"]),
        )

    def _insert(self, db: sqlite3.Connection, text: str, at: datetime, status: MemoryStatus,
                enriches: str | None, meta: dict[str, Any] | None) -> str:
        if not isinstance(text, str) or not text.strip():
            raise InputError("a memory needs non-empty text")
        _length_problem(text, "a memory", MAX_MEMORY_CHARS, "MAX_MEMORY_CHARS")
        findings = find_secrets(text)
        if findings:  # the last net: whatever the caller decided, a secret is never written
            kinds = ", ".join(sorted({f.kind for f in findings}))
            raise InputError(f"a memory may not hold a secret ({kinds}); store seams.secrets.redact(text) instead")
        mid = uuid.uuid4().hex[:12]
        seq = db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM memories").fetchone()[0]
        db.execute(
            "INSERT INTO memories (id, seq, text, valid_from, status, enriches, meta) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (mid, seq, text, at.isoformat(), status, enriches, json.dumps(meta or {})),
        )
        return mid

    def add(self, text: str, *, status: MemoryStatus = "active", enriches: str | None = None,
            at: datetime | None = None, meta: dict[str, Any] | None = None) -> Memory:
        """Store a new memory (valid from `at`, now by default)."""
        with self._db.write() as db:
            if enriches is not None:
                self._must_get(db, enriches)
            mid = self._insert(db, text, at or _now(), status, enriches, meta)
        return self.get(mid)

    def supersede(self, old_id: str, text: str, *, at: datetime | None = None,
                  meta: dict[str, Any] | None = None) -> Memory:
        """Store `text` and close `old_id`'s validity interval at the same instant; delete nothing."""
        at = at or _now()
        with self._db.write() as db:
            old = self._memory(self._must_get(db, old_id))
            if old.valid_to is not None:
                raise InputError(f"memory {old_id} was already superseded by {old.superseded_by} at "
                                 f"{old.valid_to.isoformat()}")
            mid = self._insert(db, text, at, "active", None, meta)
            db.execute("UPDATE memories SET valid_to = ?, superseded_by = ? WHERE id = ?",
                       (at.isoformat(), mid, old_id))
        return self.get(mid)

    def activate(self, memory_id: str) -> Memory:
        """Promote a held memory to active (a reviewer admitted it)."""
        with self._db.write() as db:
            self._must_get(db, memory_id)
            db.execute("UPDATE memories SET status = 'active' WHERE id = ?", (memory_id,))
        return self.get(memory_id)

    @staticmethod
    def _must_get(db: sqlite3.Connection, memory_id: str) -> sqlite3.Row:
        row = db.execute("SELECT * FROM memories WHERE id = ?", (memory_id,)).fetchone()
        if row is None:
            raise InputError(f"no memory with id {memory_id!r}")
        return row

    def get(self, memory_id: str) -> Memory:
        with self._db.read() as db:
            return self._memory(self._must_get(db, memory_id))

    def all(self) -> list[Memory]:
        """Every memory ever stored, superseded and held ones included, oldest first."""
        with self._db.read() as db:
            rows = db.execute("SELECT * FROM memories ORDER BY seq").fetchall()
        return [self._memory(r) for r in rows]

    def current(self) -> list[Memory]:
        """Memories believed now: active and not superseded."""
        return [m for m in self.all() if m.current]

    def held(self) -> list[Memory]:
        return [m for m in self.all() if m.status == "held"]

    def history(self, memory_id: str) -> list[Memory]:
        """The supersession chain through `memory_id`, oldest first."""
        by_id = {m.id: m for m in self.all()}
        if memory_id not in by_id:
            raise InputError(f"no memory with id {memory_id!r}")
        back = {m.superseded_by: m.id for m in by_id.values() if m.superseded_by}
        first = memory_id
        while first in back:
            first = back[first]
        chain, cur = [], first
        while cur is not None:
            chain.append(by_id[cur])
            cur = by_id[cur].superseded_by
        return chain

    def nearest(self, text: str, k: int = 3) -> list[Memory]:
        """The `k` current memories most similar to `text` (only those sharing a word)."""
        scored = [(lexical_similarity(text, m.text), m) for m in self.current()]
        scored = [(s, m) for s, m in scored if s > 0]
        scored.sort(key=lambda sm: -sm[0])
        return [m for _, m in scored[:k]]

    def __len__(self) -> int:
        with self._db.read() as db:
            return db.execute("SELECT COUNT(*) FROM memories").fetchone()[0]

    def close(self) -> None:
        self._db.close()


# ---------------------------------------------------------------------------------------------
# the gate
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Admission:
    """What the gate decided for one candidate.

    `replaces` is the id a supersede closes; `related_to` the memory a duplicate repeats or an
    enrichment adds to; `findings` the secrets, orders or personal data code found (kinds and
    spans of the candidate, never the text); `redacted` the text a store keeps in place of the
    candidate when it may hold a secret or holds personal data it must not keep (None: the
    candidate itself), and what a caller should log or queue instead of it;
    `decision` the rubric decision that decided (None when code decided) and `decisions` one per
    nearest memory; `stored` the memory written by `MemoryGate.remember`.
    """

    outcome: MemoryOutcome
    candidate: str
    reason: str
    replaces: str | None = None
    related_to: str | None = None
    findings: tuple[FlaggedSpan, ...] = ()
    redacted: str | None = None
    decision: Decision | None = None
    decisions: tuple[Decision, ...] = ()
    stored: Memory | None = None

    @property
    def admitted(self) -> bool:
        """Something is written as a current memory (admit, supersede or enrich)."""
        return self.outcome in ("admit", "supersede", "enrich")


_FLAG_ORDER = {"quarantine": 0, "hold": 1}
#: The question whose answer weighs an instruction code reads (`MemoryGate.order_cut`).
_ORDER_QUESTION = "poison"
_EDIT_WORDS = {"negation": "the memory's words with a negation added or removed",
               "substitution": "the memory's words with one short span swapped"}


def _as_memory(item: Memory | str | tuple[str, str]) -> tuple[str | None, str]:
    if isinstance(item, Memory):
        return item.id, item.text
    if isinstance(item, str):
        return None, item
    if isinstance(item, tuple) and len(item) == 2:
        return item[0], item[1]
    raise InputError(f"a nearest memory is a Memory, a text or an (id, text) pair, got {item!r}")


class MemoryGate:
    """Decide what to do with a candidate memory (and, with a store, do it).

    Parameters
    ----------
    store:
        Where `remember` writes, and where `admit` finds the nearest memories when none are given.
    rubric:
        The rubric (default: built-in `memory-admission`).
    judge:
        A judge, a `Cascade`, or None for the shipped local model.
    k:
        How many nearest memories to compare the candidate with.
    pii:
        What to do with personal data (phone numbers, email and postal addresses, dates of birth,
        personal id numbers; `seams.personal`): `"admit"` stores it as given; `"redact"` (the
        default) replaces each part by its kind (`[phone]`) and decides and stores the redacted
        text, so the memory keeps the fact and not the value and no person is asked; `"hold"`
        holds the candidate for review with the redacted text. The default is `"redact"`
        because a memory store is kept for long and read back into prompts, often a remote
        model's, and most memories that mention a phone number are about the person, not the
        digits; an agent that must dial or write to them chooses `"admit"`.
    cuts:
        The red flags' operating point, by rule id (`flags`: an instruction aimed at the system,
        `secret`: a secret code could not see): a cut on the flag's probability, or a
        `(high, low)` pair that holds the band between them for review (`Rubric.with_cuts`).
        Default: the cut-points fitted with the shipped model. A lower cut refuses more benign
        memories and admits fewer poisonings and secrets; docs/seams.md tabulates both sides
        at several cuts, measured out of fold.
    order_cut:
        The cut on P(poison) at or above which a candidate where code reads an instruction to the
        assistant (`seams.instructions`) is quarantined. Code's reading is evidence, not a
        verdict: its rules also fire on memories that only mention an order ("if a supplier says
        their bank details changed, call me first"), so the model is asked too, and such a
        candidate needs a much lower P(poison) than another to be quarantined; one written in
        disguise (letters spaced out, look-alike or invisible characters) is quarantined whatever
        the model says, since the model reads the disguise. Default: the cut
        fitted with the shipped model (`order_cut` in the `flags` rule's fitted params) when its
        calibration is in force; otherwise, or with a judge that does not answer `poison`, every
        candidate code reads an instruction in is quarantined.
    """

    def __init__(self, store: MemoryStore | None = None, *, rubric: Rubric | str | None = None,
                 judge: Judge | Decider | None = None, k: int = 3, pii: PiiSetting = "redact",
                 cuts: Mapping[str, float | tuple[float, float]] | None = None,
                 order_cut: float | None = None) -> None:
        if store is not None and not isinstance(store, MemoryStore):
            raise InputError(f"store must be a MemoryStore or None, got {type(store).__name__}")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InputError(f"k (how many nearest memories to compare) must be an int of at least 1, got {k!r}")
        if not isinstance(pii, str) or pii not in PII_SETTINGS:
            raise InputError(f"pii must be one of {', '.join(map(repr, PII_SETTINGS))}, got {pii!r}")
        if order_cut is not None and (isinstance(order_cut, bool) or not isinstance(order_cut, (int, float))
                                      or not 0.0 <= order_cut <= 1.0):
            raise InputError(f"order_cut is a probability in [0, 1] or None, got {order_cut!r}")
        self.pii: PiiSetting = pii
        self.order_cut = None if order_cut is None else float(order_cut)
        self.store = store
        self.rubric = load_rubric(rubric, "memory-admission")
        if cuts is not None:
            self.rubric = self.rubric.with_cuts(cuts)
        # red flags: the rules that quarantine; one raised by any pair decides
        self._flag_rules = {r.id for r in self.rubric.policy.rules if r.then == "quarantine"}
        self.judge = judge
        self.decider = as_decider(judge)
        self.k = k

    # -------------------------------------------------------------- deciding

    def _prepare(self, candidate: str, nearest: Sequence[Memory | str | tuple[str, str]] | None
                 ) -> tuple[Admission | None, list[tuple[str | None, str]], list[dict[str, str]],
                            tuple[FlaggedSpan, ...], tuple[FlaggedSpan, ...]]:
        """Code's decision (or None), the pairs and states to ask, the personal data that
        `pii="redact"` took out of the candidate (the states hold the redacted text), and the
        instructions code reads in it, weighed once the model is asked (`_weigh_orders`); one
        written in disguise (`seams.instructions.disguised`), which the model would read as
        nothing, is code's decision here."""
        if not isinstance(candidate, str) or not candidate.strip():
            raise InputError("a candidate memory is a non-empty string")
        _length_problem(candidate, "a candidate memory", MAX_CANDIDATE_CHARS, "MAX_CANDIDATE_CHARS")
        problem = text_problem(candidate)
        if problem is not None:
            raise InputError(f"a candidate memory {problem}")
        findings = find_secrets(candidate, possible=True)
        sure = [f for f in findings if f.certain]
        if sure:
            kinds = sorted({f.kind for f in sure})
            return Admission("reject", candidate, f"holds a secret ({', '.join(kinds)}); never stored",
                             findings=tuple(sure), redacted=redact(candidate, findings)), [], [], (), ()
        orders = find_instructions(candidate)
        if orders and disguised(candidate, orders):  # the model reads the disguise: code decides alone
            kinds = sorted({f.kind for f in orders})
            return Admission("quarantine", candidate, f"an instruction to the assistant, not a fact ({', '.join(kinds)}: "
                             "seen in code, written in disguise)", findings=tuple(orders)), [], [], (), ()
        # What may be a secret (a value where a credential shows) is redacted, never kept: the rest
        # is decided as any candidate, so a memory that only mentions a password is not held.
        possible = tuple(findings)
        personal = tuple(find_personal(candidate)) if self.pii != "admit" else ()
        redacted = (*possible, *personal)
        text = _settled(redact(candidate, list(redacted))) if redacted else candidate
        if text is None:  # what code redacted still reads as a secret: nothing of it may be kept
            return Admission("reject", candidate, "what code redacted still reads as a secret; never stored",
                             findings=redacted, redacted=None), [], [], (), ()
        if len(text) > MAX_MEMORY_CHARS:  # the store would refuse it: refused here, never raised there
            return Admission("reject", candidate, f"redacted, it is longer than a memory may be ({MAX_MEMORY_CHARS:,} "
                             "characters); never stored", findings=redacted, redacted=None), [], [], (), ()
        if personal and self.pii == "hold":
            kinds = sorted({f.kind for f in personal})
            return Admission("hold", candidate, f"holds personal data ({', '.join(kinds)}: seen in code); "
                             "held with it redacted (pii='hold')", findings=redacted, redacted=text), [], [], redacted, \
                tuple(orders)
        if nearest is None:
            nearest = self.store.nearest(text, self.k) if self.store is not None else []
        elif isinstance(nearest, (str, bytes)) or not isinstance(nearest, Iterable):
            raise InputError(f"nearest is a sequence of memories, got {type(nearest).__name__}")
        pairs = [_as_memory(m) for m in list(nearest)[: self.k]] or [(None, NOTHING_STORED)]
        # The older text first, as the model was trained: memory, then candidate.
        states = [{"memory": mem, "candidate": text} for _, mem in pairs]
        return None, pairs, states, redacted, tuple(orders)

    def admit(self, candidate: str, nearest: Sequence[Memory | str | tuple[str, str]] | None = None) -> Admission:
        """Decide without writing anything."""
        early, pairs, states, personal, orders = self._prepare(candidate, nearest)
        if early is not None:
            return self._weigh_orders(orders, early)
        text = states[0]["candidate"]
        edits, groups = self._known_relations(text, pairs)
        decisions: list[Decision | None] = [None] * len(states)
        for known, idx in groups:
            for i, d in zip(idx, self.decider.decide_many(self.rubric, [states[i] for i in idx], known=known),
                            strict=True):
                decisions[i] = d
        return _as_given(candidate, self._finish(orders, text, pairs, decisions, edits), personal)  # type: ignore[arg-type]

    async def aadmit(self, candidate: str, nearest: Sequence[Memory | str | tuple[str, str]] | None = None
                     ) -> Admission:
        early, pairs, states, personal, orders = self._prepare(candidate, nearest)
        if early is not None:
            return self._weigh_orders(orders, early)
        text = states[0]["candidate"]
        edits, groups = self._known_relations(text, pairs)
        decisions: list[Decision | None] = [None] * len(states)
        for known, idx in groups:
            got = await self.decider.adecide_many(self.rubric, [states[i] for i in idx], known=known)
            for i, d in zip(idx, got, strict=True):
                decisions[i] = d
        return _as_given(candidate, self._finish(orders, text, pairs, decisions, edits), personal)  # type: ignore[arg-type]

    def _known_relations(self, candidate: str, pairs: list[tuple[str | None, str]]
               ) -> tuple[list[Edit | None], list[tuple[dict[str, Any], list[int]]]]:
        """What code knows about each pair's relation, and the pairs grouped by it (one
        `decide_many` per group): a candidate that is a minimal edit of the memory (a negation, a
        swapped value) is related, not implied, a correction; with nothing stored there is nothing
        to relate to. Those answers are known, not asked; the red flags stay the model's. Rubrics
        without those questions know nothing."""
        qs = self.rubric.questions
        relation = qs.get("relation")
        if not {"related", "poorer"} <= set(qs) or not isinstance(relation, Choice) \
                or "correction" not in relation.options:
            return [None] * len(pairs), [({}, list(range(len(pairs))))]
        edits = [minimal_edit(text, candidate) if text != NOTHING_STORED else None for _, text in pairs]
        groups: dict[str, tuple[dict[str, Any], list[int]]] = {}
        for i, ((_, text), edit) in enumerate(zip(pairs, edits, strict=True)):
            if text == NOTHING_STORED:  # nothing stored: nothing to be related to, restate or correct
                key, known = "empty", {"related": 0.0, "poorer": 0.0}
            elif edit is not None:
                key, known = "edit", {
                    "related": 1.0,
                    "poorer": 0.0,
                    "relation": ChoiceAnswer.from_probabilities({o: float(o == "correction") for o in relation.options}),
                }
            else:
                key, known = "asked", {}
            groups.setdefault(key, (known, []))[1].append(i)
        return edits, list(groups.values())

    def _finish(self, orders: Sequence[FlaggedSpan], candidate: str, pairs: list[tuple[str | None, str]],
                decisions: list[Decision], edits: list[Edit | None]) -> Admission:
        """Combine, keeping the edits only where their pair was decided (not failed); then weigh
        the instructions code read in the candidate (`orders`)."""
        result = self._combine(candidate, pairs, decisions,
                               [e if d.error is None else None for e, d in zip(edits, decisions, strict=True)])
        return self._weigh_orders(orders, result)

    def _weigh_orders(self, orders: Sequence[FlaggedSpan], result: Admission) -> Admission:
        """`result`, or a quarantine when code read an instruction to the assistant (`orders`)
        and P(poison) reaches the order cut (`order_cut`). Without a cut, or an answer to weigh
        (a judge that failed or does not answer `poison`), code's reading decides alone, as it
        does, before any model, for an order written in disguise (`_prepare`)."""
        if not orders or result.outcome in ("quarantine", "reject"):
            return result
        kinds = ", ".join(sorted({f.kind for f in orders}))
        ds = result.decisions
        ps = [getattr(d.answers.get(_ORDER_QUESTION), "noul", None) for d in ds]
        known = [float(x) for x in ps if isinstance(x, (int, float))]
        cut = self._order_cut(ds)
        p = max(known) if known and len(known) == len(ps) else None
        if cut is None or p is None or p >= cut:
            weighed = "" if cut is None or p is None else f"; P({_ORDER_QUESTION}) {p:.2f} >= its cut {cut:.2f}"
            return Admission("quarantine", result.candidate,
                             f"an instruction to the assistant, not a fact ({kinds}: seen in code{weighed})",
                             findings=tuple(orders), redacted=result.redacted, decision=result.decision,
                             decisions=ds)
        return Admission(**{**result.__dict__, "reason": result.reason + f" (code read an instruction, {kinds}; "
                            f"P({_ORDER_QUESTION}) {p:.2f} is under its cut {cut:.2f})"})

    def _order_cut(self, decisions: Sequence[Decision]) -> float | None:
        """The gate's `order_cut`, else the one fitted with the calibration in force: the
        `order_cut` param of the quarantine rule reading `poison`, when every decision was
        calibrated."""
        if self.order_cut is not None:
            return self.order_cut
        cal = self.rubric.calibration
        if cal is None or not decisions or not all(d.calibrated for d in decisions):
            return None
        for rule in self.rubric.policy.rules:
            fitted = cal.thresholds.get(rule.id)
            if rule.then == "quarantine" and _ORDER_QUESTION in rule.questions() and fitted is not None:
                value = fitted.params.get("order_cut")
                if isinstance(value, (int, float)) and not isinstance(value, bool) and 0.0 <= value <= 1.0:
                    return float(value)
        return None

    def _combine(self, candidate: str, pairs: list[tuple[str | None, str]], decisions: list[Decision],
                 edits: list[Edit | None] | None = None) -> Admission:
        """One outcome from one decision per nearest memory.

        Red flags from any pair decide first (max over pairs as over flags); then a candidate
        that any memory already implies is a duplicate; otherwise the pair most related to the
        candidate decides. `edits` names, per pair, the minimal edit code saw (its reason says so).
        """
        edits = edits or [None] * len(decisions)
        ds = tuple(decisions)
        # a failed judge (a strong side that decided after a weak failure is a decision, not an error)
        errors = [d for d in ds if d.error is not None]
        if errors:  # fail closed: unasked, the secret question is not a "no"
            return Admission(errors[0].outcome, candidate, f"judge failed: {errors[0].error}",  # type: ignore[arg-type]
                             redacted=redact_values(candidate), decision=errors[0], decisions=ds)
        result = self._decide(candidate, pairs, ds, edits)
        if result.outcome == "hold" and self._secret_suspected(ds):
            return Admission(**{**result.__dict__, "redacted": redact_values(candidate)})
        return result

    def _secret_suspected(self, decisions: Sequence[Decision]) -> bool:
        """Whether any pair read a secret at or above the bottom of its rule's band."""
        for rule in self.rubric.policy.rules:
            if rule.then != "quarantine" or "secret" not in rule.questions():
                continue
            low = self.rubric.thresholds(self.rubric.calibration).get(rule.id, (rule.high, rule.effective_low))[1]
            for d in decisions:
                ans = d.answers.get("secret")
                if ans is not None and getattr(ans, "noul", 0.0) > low:
                    return True
        return False

    def _decide(self, candidate: str, pairs: list[tuple[str | None, str]], ds: tuple[Decision, ...],
                edits: list[Edit | None]) -> Admission:
        """The outcome the pairs decide, judge failures aside (see `_combine`)."""
        flagged = [d for d in ds if d.rule in self._flag_rules]
        if flagged:
            d = min(flagged, key=lambda d: (_FLAG_ORDER.get(d.outcome, 9), -(d.probability or 0)))
            return Admission(d.outcome, candidate, _reason(d), decision=d, decisions=ds)  # type: ignore[arg-type]
        dupes = [(i, d) for i, d in enumerate(ds) if d.rule == "poorer" and d.outcome == "skip_duplicate"]
        if dupes:
            i, d = max(dupes, key=lambda x: x[1].probability or 0)
            return Admission("skip_duplicate", candidate, _reason(d), related_to=pairs[i][0], decision=d,
                             decisions=ds)
        i = max(range(len(ds)), key=lambda j: _related(ds[j]))
        d = ds[i]
        mem_id = pairs[i][0]
        outcome: MemoryOutcome = d.outcome  # type: ignore[assignment]
        edit = edits[i]
        reason = _reason(d) + (f" ({_EDIT_WORDS[edit]}: seen in code)" if edit else "")
        if outcome == "supersede" and mem_id is None:
            # a correction of a text the caller passed without an id: nothing to close
            return Admission("hold", candidate, reason + "; the corrected memory has no id to supersede",
                             decision=d, decisions=ds)
        return Admission(
            outcome, candidate, reason,
            replaces=mem_id if outcome == "supersede" else None,
            related_to=mem_id if outcome in ("enrich", "skip_duplicate") else None,
            decision=d, decisions=ds,
        )

    # -------------------------------------------------------------- acting

    def remember(self, candidate: str, nearest: Sequence[Memory] | None = None) -> Admission:
        """Decide, then write to the store as decided: add, supersede (closing the old interval),
        enrich (a new memory linked to the one it adds to), or hold (stored as a candidate, not
        current). Duplicates, rejections and quarantines write nothing."""
        if self.store is None:
            raise InputError("remember() needs a MemoryGate with a store; use admit() to decide only")
        result = self.admit(candidate, nearest)
        return self._apply(result)

    async def aremember(self, candidate: str, nearest: Sequence[Memory] | None = None) -> Admission:
        if self.store is None:
            raise InputError("aremember() needs a MemoryGate with a store; use aadmit() to decide only")
        return self._apply(await self.aadmit(candidate, nearest))

    def _apply(self, result: Admission) -> Admission:
        assert self.store is not None
        stored: Memory | None = None
        meta = {"rubric_hash": result.decision.rubric_hash} if result.decision is not None else {}
        # what may be kept: the redacted text wherever the gate redacted (a possible secret, personal data)
        text = result.redacted if result.redacted is not None else result.candidate
        if result.outcome == "hold":
            # the reason comes with the held memory; a judge's error text may quote what it was sent
            failed = result.decision is not None and result.decision.zone == "error"
            meta["reason"] = redact_values(result.reason) if failed else result.reason
            stored = self.store.add(text, status="held", meta=meta)
        elif result.outcome == "admit":
            stored = self.store.add(text, meta=meta)
        elif result.outcome == "supersede" and result.replaces is not None:
            stored = self.store.supersede(result.replaces, text, meta=meta)
        elif result.outcome == "enrich":
            stored = self.store.add(text, enriches=result.related_to, meta=meta)
        return Admission(**{**result.__dict__, "stored": stored})


def _settled(text: str, rounds: int = 3) -> str | None:
    """`text` (already redacted) redacted again while code reads a certain secret in it, or None
    if it still does after `rounds`. A placeholder can complete a credential's shape that the text
    as written did not ("login = first car ([password])"), and the store refuses any text in which
    code is sure of a secret: the gate never hands it one, so it asks what the store asks
    (`find_secrets(text)`, the certain findings)."""
    for _ in range(rounds):
        sure = find_secrets(text)
        if not sure:
            return text
        text = redact(text, sure)
    return None if find_secrets(text) else text


def _as_given(candidate: str, result: Admission, personal: tuple[FlaggedSpan, ...]) -> Admission:
    """`result`, decided on the candidate with its personal data redacted, told as the candidate's:
    the redacted text is what may be kept, and the findings name the personal data."""
    if not personal:
        return result
    secret = sorted({f.kind for f in personal if f.kind not in _PERSONAL_KINDS})
    pii = sorted({f.kind for f in personal if f.kind in _PERSONAL_KINDS})
    said = ([f"what may be a secret ({', '.join(secret)}: seen in code) redacted"] if secret else []) + \
        ([f"personal data ({', '.join(pii)}) redacted (pii='redact')"] if pii else [])
    return Admission(**{**result.__dict__, "candidate": candidate,
                        "redacted": result.redacted if result.redacted is not None else result.candidate,
                        "findings": (*result.findings, *personal),
                        "reason": f"{result.reason}; {'; '.join(said)}"})


_PERSONAL_KINDS = {"email", "phone", "address", "date_of_birth", "id", "name"}


def _related(d: Decision) -> float:
    ans = d.answers.get("related")
    return getattr(ans, "noul", 0.0) if ans is not None else 0.0


def _reason(d: Decision) -> str:
    if d.rule is None:
        return f"no rule fired; default {d.outcome!r}"
    p = f"{d.probability:.2f}" if d.probability is not None else "?"
    what = f"{d.question}={d.option}" if d.option else d.question
    return f"rule {d.rule!r}: {what} at {p} ({d.zone} zone, threshold {d.threshold})"


__all__ = ["MAX_CANDIDATE_CHARS", "MAX_MEMORY_CHARS", "NOTHING_STORED", "PII_SETTINGS", "Admission", "Memory", "MemoryGate", "MemoryStore", "lexical_similarity"]
