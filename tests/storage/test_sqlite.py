"""SQLiteDatabase: calls leave the event loop free, transactions are all or nothing."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from toolweave.storage import SQLiteDatabase

SCHEMA = "CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v INTEGER NOT NULL);"


async def test_calls_run_off_the_event_loop(tmp_path: Path) -> None:
    db = SQLiteDatabase(tmp_path / "a.db", schema=SCHEMA)
    loop_thread = threading.current_thread()
    seen = await db.run(lambda conn: threading.current_thread())
    assert seen is not loop_thread
    await db.close()


async def test_event_loop_stays_free_while_a_call_blocks(tmp_path: Path) -> None:
    db = SQLiteDatabase(tmp_path / "a.db", schema=SCHEMA)
    entered, release = threading.Event(), threading.Event()

    def blocking(conn: sqlite3.Connection) -> int:
        entered.set()
        release.wait()
        return 1

    call = asyncio.ensure_future(db.run(blocking))
    await asyncio.to_thread(entered.wait)
    # The loop still runs other work while the database call is parked on its thread.
    assert await asyncio.sleep(0, result="loop alive") == "loop alive"
    release.set()
    assert await call == 1
    await db.close()


async def test_transaction_rolls_back_every_row_on_error(tmp_path: Path) -> None:
    db = SQLiteDatabase(tmp_path / "a.db", schema=SCHEMA)

    def half_then_fail(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO t VALUES ('a', 1)")
        conn.execute("INSERT INTO t VALUES ('a', 2)")  # primary key clash

    with pytest.raises(sqlite3.IntegrityError):
        await db.transaction(half_then_fail)
    assert await db.run(lambda c: c.execute("SELECT COUNT(*) FROM t").fetchone()[0]) == 0
    await db.transaction(
        lambda c: c.executemany("INSERT INTO t VALUES (?, ?)", [("a", 1), ("b", 2)])
    )
    assert await db.run(lambda c: c.execute("SELECT SUM(v) FROM t").fetchone()[0]) == 3
    await db.close()


def test_sync_twins_and_reopen_sees_committed_rows(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "a.db"
    db = SQLiteDatabase(path, schema=SCHEMA)
    db.transaction_sync(lambda c: c.execute("INSERT INTO t VALUES ('x', 7)"))
    db.close_sync()
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        db.run_sync(lambda c: None)
    again = SQLiteDatabase(path, schema=SCHEMA)
    assert again.run_sync(lambda c: c.execute("SELECT v FROM t").fetchone()[0]) == 7
    mode = again.run_sync(lambda c: c.execute("PRAGMA journal_mode").fetchone()[0])
    assert mode == "wal"
    again.close_sync()


def test_reentrant_call_is_refused_not_deadlocked(tmp_path: Path) -> None:
    db = SQLiteDatabase(":memory:", schema=SCHEMA)
    with pytest.raises(RuntimeError, match="inside one of its own callbacks"):
        db.run_sync(lambda c: db.run_sync(lambda c2: None))
    db.close_sync()


def test_cache_and_checkpoint_are_named_settings_with_defaults(tmp_path: Path) -> None:
    from toolweave.storage.sqlite import DEFAULT_CACHE_MB, DEFAULT_CHECKPOINT_PAGES

    def pragmas(db: SQLiteDatabase) -> tuple[int, int]:
        cache = db.run_sync(lambda c: c.execute("PRAGMA cache_size").fetchone()[0])
        pages = db.run_sync(lambda c: c.execute("PRAGMA wal_autocheckpoint").fetchone()[0])
        return int(cache), int(pages)

    db = SQLiteDatabase(tmp_path / "defaults.db", schema=SCHEMA)
    assert pragmas(db) == (-DEFAULT_CACHE_MB * 1024, DEFAULT_CHECKPOINT_PAGES)
    db.close_sync()
    db = SQLiteDatabase(tmp_path / "small.db", cache_mb=2, checkpoint_pages=1000)
    assert pragmas(db) == (-2048, 1000)
    db.close_sync()
