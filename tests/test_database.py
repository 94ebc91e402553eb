"""`seams.database.SQLite`: the one way the queue, the memory store and the answer cache open SQLite."""

from __future__ import annotations

import threading

import pytest

from seams.database import SQLite
from seams.errors import ConfigError, StorageError

SCHEMA = "CREATE TABLE IF NOT EXISTS t (n INTEGER NOT NULL)"


@pytest.mark.parametrize("where", ["file", "memory"])
def test_threads_write_concurrently_and_nothing_is_lost(tmp_path, where) -> None:
    db = SQLite(tmp_path / "sub" / "t.db" if where == "file" else ":memory:", schema=SCHEMA, what="test store")

    def work(k: int) -> None:
        for i in range(50):
            with db.write() as conn:
                conn.execute("INSERT INTO t (n) VALUES (?)", (k * 100 + i,))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with db.read() as conn:
        assert conn.execute("SELECT COUNT(DISTINCT n) FROM t").fetchone()[0] == 200
        if where == "file":
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    db.close()


def test_a_failed_transaction_is_rolled_back_whole_and_files_reopen(tmp_path) -> None:
    db = SQLite(tmp_path / "t.db", schema=SCHEMA, what="test store")
    with pytest.raises(RuntimeError), db.write() as conn:
        conn.execute("INSERT INTO t (n) VALUES (1)")
        raise RuntimeError("crash mid-transaction")
    db.close()
    with db.read() as conn:  # a file database reopens on next use
        assert conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 0


def test_each_thread_has_its_own_connection_and_memory_shares_one(tmp_path) -> None:
    file_db, mem_db = SQLite(tmp_path / "t.db", schema=SCHEMA, what="x"), SQLite(":memory:", schema=SCHEMA, what="x")
    seen: dict[str, list[int]] = {"file": [], "memory": []}

    def look() -> None:
        for name, db in (("file", file_db), ("memory", mem_db)):
            with db.read() as conn:
                seen[name].append(id(conn))

    threads = [threading.Thread(target=look) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(seen["file"])) == 3 and len(set(seen["memory"])) == 1
    mem_db.close()
    with pytest.raises(StorageError, match="cannot be read"), mem_db.read() as conn:  # an in-memory database is gone
        conn.execute("SELECT 1")


def test_a_path_that_cannot_be_opened_is_a_config_error(tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match="review queue"):
        SQLite(blocker / "q.db", schema=SCHEMA, what="review queue")
    with pytest.raises(ConfigError, match="cannot open the answer cache"):
        SQLite(tmp_path, schema=SCHEMA, what="answer cache")  # a folder, not a file
