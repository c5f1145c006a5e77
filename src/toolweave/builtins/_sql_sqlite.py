"""Read-only SQLite for `sql_query`, enforced by SQLite itself rather than by keyword filters.

Four locks, each sufficient for its class of attack: the file is opened with `mode=ro` (no write
reaches it); an authorizer allows only reading actions (SELECT, column reads, recursive CTEs,
ordinary functions, a list of introspection PRAGMAs) so ATTACH (and with it `VACUUM INTO`),
PRAGMA writes (`journal_mode` changes even on a read-only file), temp tables, transactions and
`load_extension` are refused at prepare time; the driver prepares exactly one statement; and a
timer thread interrupts a query at its deadline (`conn.interrupt()`, which also stops a long
single step that a progress handler would only see afterwards), as does the caller's cancel.

Memory is bounded by SQLite too: `SQLITE_LIMIT_LENGTH` is set to the cell bound, so no string or
blob larger than `max_cell_bytes` is ever built (`zeroblob(400000000)` or
`printf('%.*c', 300000000, 'x')` fail at once instead of allocating hundreds of MB). A LIKE or
GLOB pattern is one VM step that costs its length times the text's, beyond any interrupt's
reach, so patterns are limited to `MAX_LIKE_PATTERN_BYTES` (`SQLITE_LIMIT_LIKE_PATTERN_LENGTH`).
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable
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
MAX_LIKE_PATTERN_BYTES = 100
"""Longest LIKE or GLOB pattern (a 5,000-byte pattern over a 100 KB text took 3.2 s)."""

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

    def __init__(self, path: str, timeout: float, max_cell_bytes: int) -> None:
        self.path = path
        self.timeout = timeout
        self.max_cell_bytes = max_cell_bytes
        self._db: SQLiteDatabase | None = None
        self._interrupt: Callable[[], None] = lambda: None
        """`interrupt()` of the worker thread's connection, callable from any thread."""

    async def _database(self) -> SQLiteDatabase:
        if self._db is None:
            db = SQLiteDatabase(self.path, read_only=True)

            def lock(conn: sqlite3.Connection) -> Callable[[], None]:
                conn.set_authorizer(_authorize)
                conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, self.max_cell_bytes)
                conn.setlimit(sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, MAX_LIKE_PATTERN_BYTES)
                return conn.interrupt

            self._interrupt = await db.run(lock)
            self._db = db
        return self._db

    async def query(self, sql: str, max_rows: int) -> Rows:
        db = await self._database()
        timer = threading.Timer(self.timeout, self._interrupt)
        timer.daemon = True

        def run(conn: sqlite3.Connection) -> Rows:
            timer.start()
            try:
                cursor = conn.execute(sql)
                try:
                    columns = [d[0] for d in cursor.description or ()]
                    rows = cursor.fetchmany(max_rows + 1)
                finally:
                    cursor.close()
            finally:
                timer.cancel()
            return columns, rows[:max_rows], len(rows) > max_rows

        try:
            return await db.run(run)
        except asyncio.CancelledError:
            self._interrupt()  # the worker thread stops at SQLite's next interrupt check
            raise
        except sqlite3.OperationalError as exc:
            if str(exc) == "interrupted":
                raise TimeoutError from exc
            raise
        except sqlite3.DataError as exc:
            raise ValueError(
                f"{exc}: a value would exceed max_cell_bytes ({self.max_cell_bytes} bytes); "
                "select a substr() or length() of it, or raise max_cell_bytes"
            ) from exc

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
