"""An SQLite file used from asyncio without blocking the event loop.

sqlite3 calls block: a locked database waits up to its busy timeout, a large write fsyncs. Run on
the event loop, one such call would freeze every run, MCP connection and HTTP stream in the
process. So every store talks to SQLite through `SQLiteDatabase`, which owns one connection and
one worker thread: calls are queued to that thread in order (SQLite serialises writers anyway),
`transaction()` wraps a function in BEGIN IMMEDIATE ... COMMIT and rolls back on any error, so a
multi-row write is all or nothing. Synchronous callers (a CLI command, a test) use the `*_sync`
twins, which run on the same thread and so never race the async ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import threading
import urllib.parse
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

DEFAULT_BUSY_TIMEOUT = 30.0
"""Seconds a write waits for another process's lock before failing with `database is locked`."""
DEFAULT_CACHE_MB = 64
"""Page cache per connection (SQLite's default is 2 MB). Pages are allocated as they are used,
so a small database costs no more; a retrieval store's indexes take writes at random places, and
at 300k rows this cache (with `DEFAULT_CHECKPOINT_PAGES`) makes bulk writes ~35% faster."""
DEFAULT_CHECKPOINT_PAGES = 20_000
"""WAL pages (80 MB at 4 KiB) after which a commit checkpoints (SQLite's default is 1,000).
A page changed by several commits is then copied into the database once, not once per commit."""


class SQLiteDatabase:
    """One SQLite file (WAL) behind a single worker thread.

    `path=":memory:"` keeps the database in this process. `schema` is a script run once at open
    (use `CREATE ... IF NOT EXISTS`). `synchronous="FULL"` makes each commit survive power loss;
    `"NORMAL"` (WAL's usual setting) survives a process crash, which is what most stores need.
    `read_only=True` opens an existing file with `mode=ro`, so SQLite itself refuses every write
    (no schema, no journal-mode change, no directory created). `cache_mb` and
    `checkpoint_pages` size the page cache and the WAL's automatic checkpoint.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        schema: str = "",
        synchronous: str = "NORMAL",
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
        read_only: bool = False,
        cache_mb: int = DEFAULT_CACHE_MB,
        checkpoint_pages: int = DEFAULT_CHECKPOINT_PAGES,
    ) -> None:
        self.path = str(path)
        self.read_only = read_only
        if read_only and schema:
            raise ValueError("a read_only SQLiteDatabase cannot run a schema script")
        if self.path != ":memory:" and not read_only:
            resolved = Path(self.path).expanduser()
            resolved.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            _create_private(resolved)
            self.path = str(resolved)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="toolweave-sqlite")
        self._closed = False
        self._thread: threading.Thread | None = None
        self._cache_kib = int(cache_mb) * 1024
        self._checkpoint_pages = int(checkpoint_pages)
        self._db: sqlite3.Connection = self._executor.submit(
            self._open, schema, synchronous, busy_timeout
        ).result()

    def _open(self, schema: str, synchronous: str, busy_timeout: float) -> sqlite3.Connection:
        self._thread = threading.current_thread()
        if self.read_only:
            uri = f"file:{urllib.parse.quote(str(Path(self.path).expanduser()))}?mode=ro"
            db = sqlite3.connect(
                uri, uri=True, isolation_level=None, check_same_thread=False, timeout=busy_timeout
            )
            db.execute(f"PRAGMA cache_size=-{self._cache_kib}")
            return db
        db = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=busy_timeout
        )
        db.execute(f"PRAGMA cache_size=-{self._cache_kib}")
        if self.path != ":memory:":
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA wal_autocheckpoint={self._checkpoint_pages}")
        db.execute(f"PRAGMA synchronous={synchronous}")
        db.execute("PRAGMA foreign_keys=ON")
        if schema:
            db.executescript(schema)
        return db

    # -- async ------------------------------------------------------------------------------

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn(connection)` on the worker thread (autocommit: one statement, one commit)."""
        return await asyncio.wrap_future(self._submit(fn))

    async def transaction(
        self,
        fn: Callable[[sqlite3.Connection], T],
        *,
        after_commit: Callable[[T], None] | None = None,
    ) -> T:
        """Run `fn(connection)` inside BEGIN IMMEDIATE ... COMMIT; any error rolls it all back.

        `after_commit(result)` runs on the worker thread right after COMMIT, before anything
        queued behind it, and even if the caller was cancelled meanwhile: what mirrors the
        database in memory (an index's vectors) stays in commit order and never misses one."""
        return await asyncio.wrap_future(self._submit(self._in_transaction(fn, after_commit)))

    async def close(self) -> None:
        """Close the connection and stop the worker thread; later calls raise."""
        if self._closed:
            return
        await asyncio.wrap_future(self._submit(lambda db: db.close()))
        self._shutdown()

    # -- sync twins, for CLI commands and tests with no running loop --------------------------

    def run_sync(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return self._submit(fn).result()

    def transaction_sync(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return self._submit(self._in_transaction(fn, None)).result()

    def close_sync(self) -> None:
        if self._closed:
            return
        self._submit(lambda db: db.close()).result()
        self._shutdown()

    # -- internals ----------------------------------------------------------------------------

    def _submit(self, fn: Callable[[sqlite3.Connection], T]) -> Future[T]:
        if self._closed:
            raise sqlite3.ProgrammingError(f"{self!r} is closed")
        if threading.current_thread() is self._thread:
            raise RuntimeError("SQLiteDatabase call made from inside one of its own callbacks")
        return self._executor.submit(fn, self._db)

    @staticmethod
    def _in_transaction(
        fn: Callable[[sqlite3.Connection], T], after_commit: Callable[[T], None] | None
    ) -> Callable[[sqlite3.Connection], T]:
        def wrapped(db: sqlite3.Connection) -> T:
            db.execute("BEGIN IMMEDIATE")
            try:
                result = fn(db)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            try:
                db.execute("COMMIT")
            except sqlite3.Error:
                db.execute("ROLLBACK")  # never leave the connection inside a transaction
                raise
            if after_commit is not None:
                after_commit(result)
            return result

        return wrapped

    def _shutdown(self) -> None:
        self._closed = True
        self._executor.shutdown(wait=True)

    def __repr__(self) -> str:
        return f"SQLiteDatabase({self.path!r})"


def _create_private(path: Path) -> None:
    """Create the database file readable by its owner only (0600) when it does not exist yet;
    SQLite gives its `-wal` and `-shm` files the same mode. Another user's memory or query
    log is never world-readable."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
