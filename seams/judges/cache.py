"""`CachedJudge`: a persistent, per-question answer cache in SQLite, in front of any judge.

Keyed by (model id, canonical state, canonical question JSON) for each question separately, so
adding a question to a rubric asks only the new one, and a question id (never part of the
question, never shown to the model) can be renamed without losing its cached answer.

Safe under concurrent use: SQLite is opened as every seams store opens it (`seams/database.py`):
WAL mode (readers never block the writer), a busy timeout so concurrent writers from other
threads or processes wait instead of failing, one connection per thread (and per process after
a fork), `synchronous=FULL`. An entry is committed before `ask` returns, so a crash or a power
loss afterwards loses nothing.

Opt-in by construction: nothing is cached unless you wrap a judge in a `CachedJudge`. Cached
answers are re-read with the same strict reader as a server's (`parse_answer`), so a damaged
entry is asked again instead of trusted.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from ..answers import Answers, Usage, parse_answer
from ..database import SQLite
from ..errors import CacheError, ProtocolError
from ..state import canonical_json
from ._wire import encode_state, prepare_questions
from .base import Judge, JudgeLike, WrappedJudge, ask_all

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key      TEXT PRIMARY KEY,   -- sha256 of [model id, canonical state, canonical question]
    model_id TEXT NOT NULL,      -- the model asked (what the key is for)
    served   TEXT NOT NULL,      -- the model the judge reported answering with
    answer   TEXT NOT NULL,      -- the answer's JSON
    windows  INTEGER NOT NULL DEFAULT 1,
    created  REAL NOT NULL       -- unix time, for `ttl`
)
"""


#: Keys per SQL look-up (under SQLite's smallest bound-parameter limit of 999).
_LOOKUP_CHUNK = 900


def cache_key(model_id: str, state: Any, question_wire: Mapping[str, Any]) -> str:
    """The cache key of one question about one state for one model."""
    text = canonical_json([model_id, state, question_wire])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CachedJudge(WrappedJudge):
    """Answers from a SQLite file when it has them, from the wrapped judge when it does not.

    Parameters
    ----------
    judge
        The judge asked on a miss; all missing questions about a state go to it in one call.
    path
        The SQLite file (created with its folder if missing). Several `CachedJudge`s, threads
        and processes may share it.
        Entries are keyed by the judge's `answer_identity` (what decides its answers: the model
        id, and for a local judge batching a batch-dependent model, how it batches).
    ttl
        Seconds an entry stays valid; None (default) keeps entries forever. Worth setting when
        the model id is a moving alias (`jev-latest`), whose answers can change over time.
    busy_timeout
        Seconds a writer waits for another writer's lock before SQLite gives up.

    Answers built from the cache report zero token usage for the cached questions (no tokens
    were spent) and the latency of this call; `Answers.model` is the served model recorded with
    the entries (several, joined by " + ", when the entries came from different served models —
    which a moving alias can cause; see `ttl`).
    """

    def __init__(
        self,
        judge: Judge | JudgeLike,
        path: str | os.PathLike[str],
        *,
        ttl: float | None = None,
        busy_timeout: float = 30.0,
    ):
        super().__init__(judge)
        self._path = Path(path)
        self._ttl = ttl
        # A damaged file is a CacheError, a JudgeError: `decide` fails closed through `on_error`.
        self._db = SQLite(self._path, schema=_SCHEMA, what="answer cache", busy_timeout_s=busy_timeout,
                          damaged=CacheError)

    @property
    def path(self) -> Path:
        return self._path

    def __repr__(self) -> str:
        return f"CachedJudge({self.judge!r}, {str(self._path)!r})"

    def close(self) -> None:
        """Close every connection this cache opened (the wrapped judge is left open)."""
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ reading and writing

    def _lookup(self, keys: list[str]) -> dict[str, tuple[str, str, int]]:
        found: dict[str, tuple[str, str, int]] = {}
        # SQLite caps the number of bound parameters (999 on older builds): look up in chunks.
        for start in range(0, len(keys), _LOOKUP_CHUNK):
            chunk = keys[start : start + _LOOKUP_CHUNK]
            sql = f"SELECT key, served, answer, windows FROM answers WHERE key IN ({','.join('?' * len(chunk))})"
            params: list[Any] = list(chunk)
            if self._ttl is not None:
                sql += " AND created >= ?"
                params.append(time.time() - self._ttl)
            with self._db.read() as conn:
                found.update((key, (served, answer, windows)) for key, served, answer, windows in conn.execute(sql, params))
        return found

    def _store(self, rows: list[tuple[str, str, str, str, int, float]]) -> None:
        with self._db.write() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO answers (key, model_id, served, answer, windows, created) VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )

    def __len__(self) -> int:
        with self._db.read() as conn:
            return conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    def clear(self) -> None:
        """Drop every cached answer."""
        with self._db.read() as conn:
            conn.execute("DELETE FROM answers")

    # ------------------------------------------------------------------ asking

    def _plan(self, state: Any, questions: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str], Any]:
        wired = prepare_questions(questions)
        encode_state(state)  # validate before anything is looked up or asked
        identity = self.judge.answer_identity
        keys = {qid: cache_key(identity, state, w.wire) for qid, w in wired.items()}
        return {qid: w.question for qid, w in wired.items()}, keys, state

    def _split(
        self, qs: dict[str, Any], keys: dict[str, str], found: dict[str, tuple[str, str, int]]
    ) -> tuple[dict[str, Any], dict[str, Any], set[str], int]:
        """(answers from the cache, questions still to ask, served models, windows)."""
        hits: dict[str, Any] = {}
        served: set[str] = set()
        windows = 1
        for qid, q in qs.items():
            row = found.get(keys[qid])
            if row is None or not isinstance(row[0], str) or type(row[2]) is not int:
                continue  # a missing or damaged entry is asked again and overwritten
            try:
                hits[qid] = parse_answer(q, json.loads(row[1]), f"cached answer {qid!r}")
            except (ProtocolError, ValueError, TypeError):
                continue  # a damaged entry is asked again and overwritten
            served.add(row[0])
            windows = max(windows, row[2])
        misses = {qid: q for qid, q in qs.items() if qid not in hits}
        return hits, misses, served, windows

    def _rows(self, keys: dict[str, str], fresh: Answers) -> list[tuple[str, str, str, str, int, float]]:
        missing = [qid for qid in keys if qid not in fresh.answers]
        if missing:
            raise ProtocolError(f"judge {self.judge!r} gave no answer for {missing}; nothing was cached")
        now = time.time()
        model_id = self.judge.model_id
        return [
            (
                keys[qid],
                model_id,
                fresh.model,
                json.dumps(a.model_dump(mode="json"), allow_nan=False),
                fresh.windows,
                now,
            )
            for qid, a in fresh.answers.items()
            if qid in keys
        ]

    @staticmethod
    def _assemble(
        qs: dict[str, Any],
        hits: dict[str, Any],
        served: set[str],
        windows: int,
        fresh: Answers | None,
        started: float,
    ) -> Answers:
        asked = fresh.answers if fresh is not None else {}  # every miss was asked
        answers = {qid: (hits[qid] if qid in hits else asked[qid]) for qid in qs}
        models = set(served)
        if fresh is not None:
            models.add(fresh.model)
            windows = max(windows, fresh.windows)
        return Answers.model_construct(
            model=" + ".join(sorted(models)),
            answers=answers,
            usage=fresh.usage if fresh is not None else Usage(),
            latency_ms=(time.perf_counter() - started) * 1000,
            windows=windows,
        )

    def ask(self, state: Any, questions: Mapping[str, Any]) -> Answers:
        """Cached answers for the questions it has; one call to the judge for the rest."""
        started = time.perf_counter()
        qs, keys, state = self._plan(state, questions)
        hits, misses, served, windows = self._split(qs, keys, self._lookup(sorted(set(keys.values()))))
        fresh = None
        if misses:
            fresh = self.judge.ask(state, misses)
            self._store(self._rows({q: keys[q] for q in misses}, fresh))
        return self._assemble(qs, hits, served, windows, fresh, started)

    def ask_many(self, states: Sequence[Any], questions: Mapping[str, Any]) -> list[Answers]:
        """`ask` over many states with one cache look-up; the misses go to the inner judge's
        `ask_many` (a local model batches them), grouped by the set of questions each state still
        needs."""
        started = time.perf_counter()
        plans = [self._plan(state, questions) for state in states]
        found = self._lookup(sorted({key for _, keys, _ in plans for key in keys.values()}))
        splits = [self._split(qs, keys, found) for qs, keys, _ in plans]
        groups: dict[tuple[str, ...], list[int]] = {}
        for i, (_, misses, _, _) in enumerate(splits):
            if misses:
                groups.setdefault(tuple(misses), []).append(i)
        fresh: dict[int, Answers] = {}
        for idx in groups.values():
            misses = splits[idx[0]][1]
            got = ask_all(self.judge, [plans[i][2] for i in idx], misses)
            rows: list[tuple[str, str, str, str, int, float]] = []
            for i, answers in zip(idx, got, strict=True):
                fresh[i] = answers
                rows += self._rows({q: plans[i][1][q] for q in misses}, answers)
            self._store(rows)
        return [
            self._assemble(plans[i][0], splits[i][0], splits[i][2], splits[i][3], fresh.get(i), started)
            for i in range(len(plans))
        ]

    async def aask(self, state: Any, questions: Mapping[str, Any]) -> Answers:
        """Async `ask`; the SQLite work runs in a worker thread so a busy lock never stalls the loop."""
        started = time.perf_counter()
        qs, keys, state = self._plan(state, questions)
        found = await asyncio.to_thread(self._lookup, sorted(set(keys.values())))
        hits, misses, served, windows = self._split(qs, keys, found)
        fresh = None
        if misses:
            fresh = await self.judge.aask(state, misses)
            await asyncio.to_thread(self._store, self._rows({q: keys[q] for q in misses}, fresh))
        return self._assemble(qs, hits, served, windows, fresh, started)


__all__ = ["CachedJudge", "cache_key"]
