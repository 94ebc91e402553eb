"""`ReviewQueue`: the human review queue, on SQLite.

Decisions in a policy's band go to a person. The queue that holds them must not lose one, must
not hand one to two reviewers at once, and must not grow past what people can review, so:

* **durable and atomic** — WAL journal with `synchronous=FULL`; every change is one
  `BEGIN IMMEDIATE` transaction, so a process killed mid-enqueue leaves either the whole item or
  nothing, never half of one, and every item whose enqueue returned survives;
* **idempotent enqueue** — each item has a key (by default a hash of the rubric and the state);
  enqueuing the same key twice returns the existing item, so a retried agent step does not ask a
  person twice;
* **claim with a lease** — a reviewer claims the oldest open item for a while; if they vanish the
  lease runs out and the item is open to the next reviewer;
* **capacity-aware** — with a `capacity`, an enqueue that would exceed it is refused with
  `QueueFull` (`overflow="refuse"`) or accepted and flagged (`overflow="signal"`), so the code
  upstream can widen its thresholds or fall back instead of building a backlog nobody reads;
* **export** — resolved items are written as labelled JSONL in the calibration format
  (`{"id", "state", "labels": {question id: label}}`), so review work feeds `seams calibrate`.

SQLite is opened as every seams store opens it (`seams/database.py`): WAL, `synchronous=FULL`,
a busy timeout, and one connection per thread and process, so the queue is safe to share
between threads and processes.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

from .database import SQLite
from .decision import Decision
from .errors import InputError, QueueError, QueueFull, StorageError
from .state import canonical_json, check_state, json_problem

Status = Literal["open", "claimed", "resolved"]
Label = bool | str | int

_SCHEMA = """
CREATE TABLE IF NOT EXISTS items (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    key         TEXT NOT NULL UNIQUE,
    rubric      TEXT,
    state       TEXT NOT NULL,
    questions   TEXT NOT NULL,
    decision    TEXT,
    meta        TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('open', 'claimed', 'resolved')),
    created_at  REAL NOT NULL,
    claimed_by  TEXT,
    lease_until REAL,
    labels      TEXT,
    resolved_by TEXT,
    resolved_at REAL
);
CREATE INDEX IF NOT EXISTS items_status ON items (status, id);
CREATE TABLE IF NOT EXISTS queue_info (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""


@dataclass(frozen=True)
class ReviewItem:
    """One item of the queue, as stored."""

    id: int
    key: str
    state: Any
    rubric: str | None
    questions: list[str]
    decision: dict[str, Any] | None
    meta: dict[str, Any]
    status: Status
    created_at: float
    claimed_by: str | None = None
    lease_until: float | None = None
    labels: dict[str, Label] | None = None
    resolved_by: str | None = None
    resolved_at: float | None = None

    def to_labelled(self) -> dict[str, Any]:
        """The item as one line of a labelled set (the calibration format)."""
        return {"id": self.key, "state": self.state, "labels": dict(self.labels or {})}


@dataclass(frozen=True)
class Enqueued:
    """What an enqueue did: the item, whether it was new, and whether the queue is over capacity."""

    item: ReviewItem
    created: bool
    over_capacity: bool = False
    open_items: int = 0
    capacity: int | None = field(default=None)


def item_key(state: Any, rubric: str | None = None) -> str:
    """The default idempotency key: a hash of the rubric name and the canonical state."""
    raw = canonical_json({"rubric": rubric, "state": state})
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:32]


class ReviewQueue:
    """A durable review queue in one SQLite file.

    Parameters
    ----------
    path:
        The database file (created with its folder when missing).
    capacity:
        Most open (unresolved) items the reviewers can take; None for no limit. Size it to
        review capacity: items a person will look at before they go stale.
    overflow:
        At capacity, `"refuse"` raises `QueueFull` and adds nothing; `"signal"` adds the item
        and marks the result `over_capacity`.
    busy_timeout_s:
        How long an operation waits for another writer's lock before it fails.
    clock:
        Seconds since the epoch; injectable so lease expiry can be tested without sleeping.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        capacity: int | None = None,
        overflow: Literal["refuse", "signal"] = "refuse",
        busy_timeout_s: float = 30.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if capacity is not None and (isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1):
            raise InputError(f"capacity must be an int of at least 1 (or None for no limit), got {capacity!r}")
        if not isinstance(overflow, str) or overflow not in ("refuse", "signal"):
            raise InputError(f"overflow must be 'refuse' or 'signal', got {overflow!r}")
        self.path = Path(path)
        self.capacity = capacity
        self.overflow = overflow
        self.busy_timeout_s = busy_timeout_s
        self._clock = clock
        self._db = SQLite(self.path, schema=_SCHEMA, what="review queue", busy_timeout_s=busy_timeout_s)

    def close(self) -> None:
        """Close the queue's connections (it reopens them on next use)."""
        self._db.close()

    def _item(self, row: sqlite3.Row) -> ReviewItem:
        try:
            return self._read_item(row)
        except (ValueError, TypeError, KeyError) as e:  # a damaged row: bad JSON, a wrong type
            raise StorageError(f"review queue {self.path}: a damaged item ({type(e).__name__}: {e})") from None

    @staticmethod
    def _read_item(row: sqlite3.Row) -> ReviewItem:
        return ReviewItem(
            id=row["id"],
            key=row["key"],
            state=json.loads(row["state"]),
            rubric=row["rubric"],
            questions=json.loads(row["questions"]),
            decision=json.loads(row["decision"]) if row["decision"] else None,
            meta=json.loads(row["meta"]),
            status=row["status"],
            created_at=row["created_at"],
            claimed_by=row["claimed_by"],
            lease_until=row["lease_until"],
            labels=json.loads(row["labels"]) if row["labels"] else None,
            resolved_by=row["resolved_by"],
            resolved_at=row["resolved_at"],
        )

    @staticmethod
    def _open_count(db: sqlite3.Connection) -> int:
        return db.execute("SELECT COUNT(*) FROM items WHERE status != 'resolved'").fetchone()[0]

    # ------------------------------------------------------------------ enqueue

    def enqueue(
        self,
        state: Any,
        *,
        key: str | None = None,
        rubric: str | None = None,
        questions: Sequence[str] | None = None,
        decision: Decision | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> Enqueued:
        """Add a state for review, once per key.

        `decision` (the one that was not automatic) is stored without its state; it supplies the
        rubric name and the question ids to label when those are not given. Re-enqueuing a key
        returns the stored item unchanged with `created=False`, whatever the queue's fill.
        """
        check_state(state)
        if decision is not None:
            rubric = rubric if rubric is not None else decision.rubric
            if questions is None:
                questions = list(decision.answers)
        key = key if key is not None else item_key(state, rubric)
        if not isinstance(key, str) or not key:
            raise InputError(f"an item key must be a non-empty string, got {key!r}")
        problem = json_problem({"key": key, "rubric": rubric, "questions": list(questions or []),
                                "meta": dict(meta or {})}, "item")
        if problem is not None:
            raise InputError(problem)
        decision_json = decision.to_json_line() if decision is not None else None
        meta_json = canonical_json(dict(meta or {}))
        with self._db.write() as db:
            row = db.execute("SELECT * FROM items WHERE key = ?", (key,)).fetchone()
            n_open = self._open_count(db)
            if row is not None:
                return Enqueued(self._item(row), created=False, over_capacity=self._over(n_open),
                                open_items=n_open, capacity=self.capacity)
            self._record_capacity(db)
            over = self._over(n_open)
            if self.capacity is not None and over and self.overflow == "refuse":
                raise QueueFull(
                    f"review queue {self.path} holds {n_open} open item(s), its capacity is {self.capacity}; "
                    "nothing was added",
                    open_items=n_open,
                    capacity=self.capacity,
                )
            cur = db.execute(
                "INSERT INTO items (key, rubric, state, questions, decision, meta, status, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, 'open', ?)",
                (key, rubric, canonical_json(state), json.dumps(list(questions or [])), decision_json,
                 meta_json, self._clock()),
            )
            row = db.execute("SELECT * FROM items WHERE id = ?", (cur.lastrowid,)).fetchone()
        return Enqueued(self._item(row), created=True, over_capacity=over, open_items=n_open + 1,
                        capacity=self.capacity)

    def _record_capacity(self, db: sqlite3.Connection) -> None:
        # What an enqueue ran under, kept in the file: a reader that opens the queue without
        # knowing its capacity (the reviewer's desk) can still say how full it is.
        db.execute("INSERT INTO queue_info (name, value) VALUES ('capacity', ?) "
                   "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                   (json.dumps(self.capacity),))

    def recorded_capacity(self) -> int | None:
        """The capacity the latest enqueue ran under (None: no limit, or nothing enqueued yet)."""
        with self._db.read() as db:
            row = db.execute("SELECT value FROM queue_info WHERE name = 'capacity'").fetchone()
        value = json.loads(row[0]) if row is not None else None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def _over(self, n_open: int) -> bool:
        return self.capacity is not None and n_open >= self.capacity

    # ------------------------------------------------------------------ claim, release, resolve

    def claim(self, reviewer: str, *, lease_s: float = 600.0) -> ReviewItem | None:
        """Claim the oldest open item (or one whose lease ran out) for `lease_s` seconds."""
        if not reviewer:
            raise InputError("a reviewer name is required to claim an item")
        now = self._clock()
        with self._db.write() as db:
            row = db.execute(
                "SELECT id FROM items WHERE status = 'open' OR (status = 'claimed' AND lease_until < ?) "
                "ORDER BY id LIMIT 1",
                (now,),
            ).fetchone()
            if row is None:
                return None
            db.execute(
                "UPDATE items SET status = 'claimed', claimed_by = ?, lease_until = ? WHERE id = ?",
                (reviewer, now + lease_s, row["id"]),
            )
            row = db.execute("SELECT * FROM items WHERE id = ?", (row["id"],)).fetchone()
        return self._item(row)

    def release(self, item_id: int, reviewer: str) -> ReviewItem:
        """Give a claimed item back to the queue without a label."""
        with self._db.write() as db:
            row = self._must_get(db, item_id)
            if row["status"] != "claimed" or row["claimed_by"] != reviewer:
                raise QueueError(f"item {item_id} is not claimed by {reviewer!r} (status {row['status']})")
            db.execute("UPDATE items SET status = 'open', claimed_by = NULL, lease_until = NULL WHERE id = ?",
                       (item_id,))
            row = self._must_get(db, item_id)
        return self._item(row)

    def resolve(self, item_id: int, labels: Mapping[str, Label], *, reviewer: str | None = None) -> ReviewItem:
        """Record a reviewer's labels, one per question id.

        An item claimed by someone else whose lease still runs cannot be resolved by another
        reviewer. Resolving an already resolved item with the same labels is a no-op (a retried
        request); with different labels it is an error, since a label is data for calibration.
        """
        clean = self._check_labels(labels)
        now = self._clock()
        with self._db.write() as db:
            row = self._must_get(db, item_id)
            item = self._item(row)
            if item.status == "resolved":
                if item.labels == clean:
                    return item
                raise QueueError(f"item {item_id} is already resolved with labels {item.labels}")
            if item.questions:
                unknown = sorted(set(clean) - set(item.questions))
                if unknown:
                    raise InputError(f"item {item_id}: labels for {unknown}, which are not its questions "
                                     f"{item.questions}")
            # Checked before anything is written: a wrong label refused leaves the item open, so
            # the right one can still be given.
            for qid, value in clean.items():
                problem = _label_problem(item, qid, value)
                if problem is not None:
                    raise InputError(f"item {item_id}: the label for {qid!r} {problem}")
            if (item.status == "claimed" and reviewer is not None and item.claimed_by != reviewer
                    and (item.lease_until or 0) >= now):
                raise QueueError(f"item {item_id} is claimed by {item.claimed_by!r} until {item.lease_until}")
            db.execute(
                "UPDATE items SET status = 'resolved', labels = ?, resolved_by = ?, resolved_at = ?, "
                "lease_until = NULL WHERE id = ?",
                (canonical_json(clean), reviewer, now, item_id),
            )
            row = self._must_get(db, item_id)
        return self._item(row)

    @staticmethod
    def _check_labels(labels: Mapping[str, Label]) -> dict[str, Label]:
        if not isinstance(labels, Mapping) or not labels:
            raise InputError("labels must be a non-empty mapping of question id to label")
        out: dict[str, Label] = {}
        for qid, value in labels.items():
            if not isinstance(qid, str) or not qid:
                raise InputError(f"label keys are question ids (non-empty strings), got {qid!r}")
            if not isinstance(value, (bool, str, int)):
                raise InputError(f"label for {qid!r} must be true/false, an option name or a level index, "
                                 f"got {value!r}")
            out[qid] = value
        problem = json_problem(out, "labels")
        if problem is not None:
            raise InputError(problem)
        return out

    @staticmethod
    def _must_get(db: sqlite3.Connection, item_id: int) -> sqlite3.Row:
        row = db.execute("SELECT * FROM items WHERE id = ?", (item_id,)).fetchone()
        if row is None:
            raise QueueError(f"no review item with id {item_id}")
        return row

    # ------------------------------------------------------------------ reading

    def get(self, item_id: int) -> ReviewItem:
        with self._db.read() as db:
            return self._item(self._must_get(db, item_id))

    def get_by_key(self, key: str) -> ReviewItem | None:
        with self._db.read() as db:
            row = db.execute("SELECT * FROM items WHERE key = ?", (key,)).fetchone()
        return self._item(row) if row is not None else None

    def items(self, status: Status | None = None) -> list[ReviewItem]:
        """Every item, oldest first; only those with `status` when given."""
        with self._db.read() as db:
            if status is None:
                rows = db.execute("SELECT * FROM items ORDER BY id").fetchall()
            else:
                rows = db.execute("SELECT * FROM items WHERE status = ? ORDER BY id", (status,)).fetchall()
        return [self._item(r) for r in rows]

    def counts(self) -> dict[str, int]:
        """How many items are open, claimed and resolved."""
        out = {"open": 0, "claimed": 0, "resolved": 0}
        with self._db.read() as db:
            for row in db.execute("SELECT status, COUNT(*) FROM items GROUP BY status"):
                out[row[0]] = row[1]
        return out

    @property
    def open_items(self) -> int:
        """Items not yet resolved (open or claimed): what capacity is measured against."""
        with self._db.read() as db:
            return self._open_count(db)

    @property
    def over_capacity(self) -> bool:
        return self.capacity is not None and self.open_items >= self.capacity

    def __len__(self) -> int:
        with self._db.read() as db:
            return db.execute("SELECT COUNT(*) FROM items").fetchone()[0]

    # ------------------------------------------------------------------ export

    def export(self, dest: str | Path | IO[str], *, rubric: str | None = None) -> int:
        """Write resolved items as labelled JSONL (the calibration format); return how many.

        A path is written atomically (a temporary file renamed over it), so a reader never sees
        half an export. `rubric` keeps only the items of that rubric.
        """
        items = [i for i in self.items("resolved") if rubric is None or i.rubric == rubric]
        lines = [json.dumps(i.to_labelled(), ensure_ascii=False, separators=(",", ":")) + "\n" for i in items]
        if hasattr(dest, "write"):
            dest.writelines(lines)  # type: ignore[union-attr]
            return len(lines)
        path = Path(dest)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.writelines(lines)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return len(lines)

    def __repr__(self) -> str:
        return f"ReviewQueue({str(self.path)!r}, capacity={self.capacity}, overflow={self.overflow!r})"


def _label_problem(item: ReviewItem, qid: str, value: Label) -> str | None:
    """Why `value` cannot be the label of question `qid` of `item`, or None.

    The question's shape comes from the item's decision (its answer says whether the question is
    a Noul, a Choice over which options, or a Score with how many levels); an item queued without
    a decision is checked only for the label's type.
    """
    answers = (item.decision or {}).get("answers") or {}
    answer = answers.get(qid) if isinstance(answers, dict) else None
    kind = answer.get("type") if isinstance(answer, dict) else None
    if kind == "noul" and not isinstance(value, bool):
        return f"must be true or false (a Noul), got {value!r}"
    if kind == "choice":
        options = list(answer.get("probabilities") or {})  # type: ignore[union-attr]
        if not isinstance(value, str) or value not in options:
            return f"must be one of the Choice's options {options}, got {value!r}"
    if kind == "score":
        levels = len(answer.get("legend") or answer.get("probabilities") or {})  # type: ignore[union-attr]
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < levels:
            return f"must be a level index 0–{levels - 1} (a Score of {levels} levels), got {value!r}"
    return None


__all__ = ["Enqueued", "ReviewItem", "ReviewQueue", "item_key"]
