"""`SQLite`: how seams opens a SQLite file, one policy for the review queue, the memory store and
the answer cache.

The policy, and why:

* **WAL journal** — readers never block the writer, and a reader never sees half a write.
* **`synchronous=FULL`** — a transaction is on disk when its `COMMIT` returns, so nothing whose
  write returned is lost to a crash or a power cut (a queued review, a memory, a paid-for answer).
* **a busy timeout** (30 s by default) — a writer in another thread or process is waited for, not
  failed on.
* **explicit transactions** — connections are in autocommit mode and every change is one
  `BEGIN IMMEDIATE … COMMIT` (`write()`), taken before its reads, so the checks inside a
  transaction and its writes agree, and an exception rolls the whole of it back.
* **one connection per thread, and per process** — a connection never crosses a thread or a fork
  (SQLite handles must not); each is opened on first use and all are closed by `close()`.
* **`":memory:"`** is one in-memory database, which lives in its connection: that one connection
  is shared by every thread, under a lock held for each `read()` and `write()`.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from .errors import ConfigError, InputError, SeamsError, StorageError

MEMORY = ":memory:"


class SQLite:
    """A SQLite database opened under the policy above.

    Parameters
    ----------
    path:
        The database file (its folder is created), or `":memory:"`.
    schema:
        SQL run once when the database is opened (`CREATE TABLE IF NOT EXISTS ...`).
    what:
        What the file holds, for the error when it cannot be opened ("review queue").
    damaged:
        The seams error SQLite's own errors become in `read()` and `write()` (a damaged page, a
        file that stopped being a database): `StorageError`, or the cache's `CacheError`, which
        a rubric's `on_error` handles like any judge failure.
    busy_timeout_s:
        How long an operation waits for another writer's lock before it fails.
    """

    def __init__(self, path: str | os.PathLike[str], *, schema: str, what: str, busy_timeout_s: float = 30.0,
                 damaged: type[SeamsError] = StorageError) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise InputError(f"the {what}'s path must be a string or a path, got {type(path).__name__}")
        self.path = str(path)
        try:
            self.path.encode("utf-8")
        except UnicodeEncodeError as e:
            raise InputError(f"the {what}'s path {self.path!r} holds a lone surrogate at character {e.start}; "
                             "a path must be valid Unicode") from None
        if "\x00" in self.path:
            raise InputError(f"the {what}'s path {self.path!r} holds a NUL character")
        if isinstance(busy_timeout_s, bool) or not isinstance(busy_timeout_s, (int, float)) \
                or not 0 <= busy_timeout_s < 86_400 * 365:
            raise InputError(f"busy_timeout_s must be a number of seconds (0 or more), got {busy_timeout_s!r}")
        self.what = what
        self.damaged = damaged
        self.busy_timeout_s = busy_timeout_s
        self._memory = self.path == MEMORY
        self._local = threading.local()
        self._lock = threading.RLock()
        self._connections: list[sqlite3.Connection] = []
        self._shared: sqlite3.Connection | None = None
        if not self._memory:
            try:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise ConfigError(f"cannot create the folder of the {what} {self.path}: {e}") from None
        try:
            self._connection().executescript(schema)  # now, so a bad path fails here, not later
        except (sqlite3.Error, OSError) as e:
            raise ConfigError(f"cannot open the {what} {self.path}: {e}") from None

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None,
                               check_same_thread=not self._memory)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_s * 1000)}")
        if not self._memory:
            conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        with self._lock:
            self._connections.append(conn)
        return conn

    def _connection(self) -> sqlite3.Connection:
        """This thread's connection (a new one after a fork); the one shared `":memory:"` connection."""
        if self._memory:
            if self._shared is None:
                self._shared = self._open()
            return self._shared
        conn = getattr(self._local, "conn", None)
        if conn is None or self._local.pid != os.getpid():
            conn = self._open()
            self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A connection for reads (and single autocommit statements); SQLite's errors inside the
        block become `damaged`, naming the file."""
        with self._lock if self._memory else nullcontext():
            try:
                yield self._connection()
            except sqlite3.Error as e:
                raise self.damaged(f"the {self.what} {self.path} cannot be read or written: {e}") from None

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One atomic write transaction, taken before any read: committed when the block ends,
        rolled back whole when it raises."""
        with self.read() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:  # a damaged file may already have ended it
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def close(self) -> None:
        """Close every connection opened here. A file database reopens on next use; an
        in-memory one is gone."""
        with self._lock:
            conns, self._connections = self._connections, []
        for conn in conns:
            try:
                conn.close()
            except sqlite3.Error:  # pragma: no cover
                pass
        self._local = threading.local()


__all__ = ["SQLite"]
