"""Read-only SQLite for `sql_query`, enforced by SQLite itself rather than by keyword filters.

Four locks, each sufficient for its class of attack: the file is opened with `mode=ro` (no write
reaches it); an authorizer allows only reading actions (SELECT, column reads, recursive CTEs,
ordinary functions, a list of introspection PRAGMAs) so ATTACH (and with it `VACUUM INTO`),
PRAGMA writes (`journal_mode` changes even on a read-only file), temp tables, transactions and
`load_extension` are refused at prepare time; the driver prepares exactly one statement; and a
progress handler interrupts a query past its deadline or once the caller cancels.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from typing import Any

from toolweave.storage.sqlite import SQLiteDatabase

_ALLOWED_ACTIONS = frozenset(
    {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
)
_DENIED_FUNCTIONS = frozenset({"load_extension", "fts3_tokenizer", "readfile", "writefile", "edit"})
_READ_PRAGMAS = frozenset(
    {
        "table_info",
        "table_xinfo",
        "table_list",
        "index_list",
        "index_info",
        "index_xinfo",
        "foreign_key_list",
    }
)
_PROGRESS_OPCODES = 1000
"""SQLite virtual-machine steps between two deadline checks (a few microseconds)."""

Rows = tuple[list[str], list[tuple[Any, ...]], bool]


def _authorize(action: int, arg1: str | None, arg2: str | None, *_: str | None) -> int:
    if action == sqlite3.SQLITE_FUNCTION:
        denied = (arg2 or "").lower() in _DENIED_FUNCTIONS
        return sqlite3.SQLITE_DENY if denied else sqlite3.SQLITE_OK
    if action in _ALLOWED_ACTIONS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() in _READ_PRAGMAS:
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


class SQLiteReader:
    """One read-only connection to an SQLite file, opened on first use."""

    def __init__(self, path: str, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self._db: SQLiteDatabase | None = None

    async def _database(self) -> SQLiteDatabase:
        if self._db is None:
            db = SQLiteDatabase(self.path, read_only=True)
            await db.run(lambda conn: conn.set_authorizer(_authorize))
            self._db = db
        return self._db

    async def query(self, sql: str, max_rows: int) -> Rows:
        db = await self._database()
        stop = threading.Event()
        deadline = time.monotonic() + self.timeout

        def interrupt() -> int:
            return 1 if stop.is_set() or time.monotonic() > deadline else 0

        def run(conn: sqlite3.Connection) -> Rows:
            conn.set_progress_handler(interrupt, _PROGRESS_OPCODES)
            try:
                cursor = conn.execute(sql)
                try:
                    columns = [d[0] for d in cursor.description or ()]
                    rows = cursor.fetchmany(max_rows + 1)
                finally:
                    cursor.close()
            finally:
                conn.set_progress_handler(None, 0)
            return columns, rows[:max_rows], len(rows) > max_rows

        try:
            return await db.run(run)
        except asyncio.CancelledError:
            stop.set()  # the worker thread stops at its next progress check
            raise
        except sqlite3.OperationalError as exc:
            if str(exc) == "interrupted":
                raise TimeoutError from exc
            raise

    async def schema(self) -> list[tuple[str, list[tuple[str, str]]]]:
        def run(conn: sqlite3.Connection) -> list[tuple[str, list[tuple[str, str]]]]:
            tables = [
                name
                for (name,) in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
                    "AND name NOT LIKE 'sqlite_%' ORDER BY name"
                )
            ]
            return [(t, [(r[1], r[2]) for r in conn.execute(_table_info(t))]) for t in tables]

        return await (await self._database()).run(run)

    async def close(self) -> None:
        if self._db is not None:
            await self._db.close()
            self._db = None


def _table_info(table: str) -> str:
    quoted = table.replace('"', '""')
    return f'PRAGMA table_info("{quoted}")'
