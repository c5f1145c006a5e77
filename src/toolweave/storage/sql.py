"""One store, two databases: an embedded SQLite file or a shared Postgres server.

The orchestration stores (quotas, the query log, teams, schedules) must run embedded by default
and, when several `toolweave` processes share state, on Postgres. Writing each store twice would
let the two copies drift, so a store's logic is written once as a *transaction program*: a
generator that yields `(sql, params)` statements (`?` placeholders, portable SQL) and receives
each statement's rows. `SQLStore` drives a program natively on either database, always inside
one transaction, so a multi-row write is all or nothing:

- SQLite: on `SQLiteDatabase`'s worker thread, inside BEGIN IMMEDIATE (never on the event loop);
- Postgres: psycopg 3 async connections from a pool (READ COMMITTED; programs that claim work
  use the `skip_locked` clause, `FOR UPDATE SKIP LOCKED`, so two processes never take the same
  rows);
- the `*_sync` twin (CLI commands, synchronous APIs) uses the SQLite thread or a psycopg sync
  connection.

Programs get the dialect (`"sqlite"` or `"postgres"`) to add what only one side has.
psycopg is imported only when a `dsn` is given.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Generator, Sequence
from pathlib import Path
from typing import Any, Literal, TypeAlias, TypeVar

from toolweave.errors import ConfigError
from toolweave.storage.errors import StoreUnavailable
from toolweave.storage.sqlite import DEFAULT_BUSY_TIMEOUT, SQLiteDatabase

T = TypeVar("T")
Dialect = Literal["sqlite", "postgres"]
Rows: TypeAlias = list[tuple[Any, ...]]
Statement: TypeAlias = tuple[str, Sequence[Any]]
Program: TypeAlias = Generator[Statement, Rows, T]
ProgramFactory: TypeAlias = Callable[[Dialect], Program[T]]

POSTGRES_EXTRA = 'pip install "toolweave[postgres]"'
DEFAULT_POOL_SIZE = 10
"""Postgres connections one store may hold open at most (psycopg_pool)."""
POOL_WAIT = 5.0
"""Seconds a Postgres transaction waits for a pooled connection; past it (Postgres is down, or
every connection is busy that long) the call fails with `StoreUnavailable`."""
_SCHEMA_LOCK = "SELECT pg_advisory_xact_lock(hashtext('toolweave-schema'))"


def skip_locked(dialect: Dialect) -> str:
    """The row-claiming clause: Postgres locks the selected rows and skips ones others hold;
    SQLite's BEGIN IMMEDIATE already serialises writers, so it needs none."""
    return " FOR UPDATE SKIP LOCKED" if dialect == "postgres" else ""


def for_update(dialect: Dialect) -> str:
    """Lock the selected rows until commit (Postgres); SQLite serialises whole transactions."""
    return " FOR UPDATE" if dialect == "postgres" else ""


class _StaleConnection(Exception):
    """A pooled connection died before its transaction began (Postgres restarted meanwhile)."""


def _drive_sync(program: Program[T], execute: Callable[[str, Sequence[Any]], Rows]) -> T:
    rows: Rows | None = None
    try:
        while True:
            sql, params = program.send(rows) if rows is not None else next(program)
            rows = execute(sql, params)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


def _postgres_sql(sql: str) -> str:
    return sql.replace("%", "%%").replace("?", "%s")


class SQLStore:
    """A database a store's programs run against; pick it with `path` (SQLite) or `dsn`.

    `schema` is portable DDL (`CREATE TABLE IF NOT EXISTS ...` with TEXT, BIGINT, INTEGER and
    DOUBLE PRECISION columns, which both databases accept), run once at open; on Postgres under
    an advisory lock, so processes starting together do not race on the catalog.
    `synchronous` and `busy_timeout` tune the SQLite file (`SQLiteDatabase`); a store whose
    every write must survive a power cut passes `synchronous="FULL"`.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        dsn: str | None = None,
        schema: str,
        owner: str,
        pool_size: int = DEFAULT_POOL_SIZE,
        synchronous: str = "NORMAL",
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    ) -> None:
        if path is not None and dsn is not None:
            raise ConfigError(f"{owner}: pass either path= (SQLite) or dsn= (Postgres), not both")
        self.owner = owner
        self._schema = schema
        self._dsn = dsn
        self.dialect: Dialect = "postgres" if dsn is not None else "sqlite"
        self._sqlite: SQLiteDatabase | None = None
        if dsn is None:
            self._sqlite = SQLiteDatabase(
                path if path is not None else ":memory:",
                schema=schema,
                synchronous=synchronous,
                busy_timeout=busy_timeout,
            )
        self.pool_size = pool_size
        self._opening = asyncio.Lock()
        self._sync_lock = threading.Lock()
        self._pool: Any = None
        self._sync_conn: Any = None

    @property
    def location(self) -> str:
        """Where the data lives (a file path, or the DSN without its password)."""
        if self._sqlite is not None:
            return self._sqlite.path
        return _redact(self._dsn or "")

    # -- running programs ---------------------------------------------------------------------

    async def open(self) -> None:
        """Connect now and create the schema, instead of on the first program (Postgres; a
        SQLite file is opened when the store is built)."""
        if self._sqlite is None:
            await self._postgres_pool()

    async def transact(self, factory: ProgramFactory[T]) -> T:
        """Run one program inside one transaction and return its result."""
        if self._sqlite is not None:
            dialect = self.dialect
            return await self._sqlite.transaction(
                lambda db: _drive_sync(factory(dialect), lambda s, p: db.execute(s, p).fetchall())
            )
        try:
            return await self._transact_postgres(factory)
        except _StaleConnection:  # pooled before a Postgres restart: drop those, try a fresh one
            await self._pool.check()
            return await self._transact_postgres(factory)

    async def _transact_postgres(self, factory: ProgramFactory[T]) -> T:
        import psycopg
        from psycopg_pool import PoolTimeout

        used: list[Any] = []
        begun = False
        try:
            pool = await self._postgres_pool()
            async with pool.connection() as conn:
                used.append(conn)
                async with conn.transaction():
                    begun = True
                    program = factory(self.dialect)
                    rows: Rows | None = None
                    try:
                        while True:
                            sql, params = program.send(rows) if rows is not None else next(program)
                            cursor = await conn.execute(_postgres_sql(sql), params)
                            rows = await cursor.fetchall() if cursor.description else []
                    except StopIteration as stop:
                        return stop.value  # type: ignore[no-any-return]
        except (PoolTimeout, psycopg.OperationalError) as exc:
            waited = isinstance(exc, PoolTimeout)  # (a subclass of OperationalError)
            if not waited and not (used and used[0].closed):
                raise  # the server answered (a deadlock, a serialization failure): not down
            if used and not begun:
                raise _StaleConnection from exc
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise StoreUnavailable(
                f"{self.owner}: the shared database at {self.location} does not answer "
                f"({reason}); retry once it is back"
            ) from exc

    def transact_sync(self, factory: ProgramFactory[T]) -> T:
        """`transact` for synchronous callers; never call it from a coroutine on this store's
        own loop while that loop awaits the same SQLite store (it would wait on itself)."""
        if self._sqlite is not None:
            dialect = self.dialect
            return self._sqlite.transaction_sync(
                lambda db: _drive_sync(factory(dialect), lambda s, p: db.execute(s, p).fetchall())
            )
        with self._sync_lock:
            conn = self._postgres_sync()
            with conn.transaction():

                def execute(sql: str, params: Sequence[Any]) -> Rows:
                    cursor = conn.execute(_postgres_sql(sql), params)
                    return list(cursor.fetchall()) if cursor.description else []

                return _drive_sync(factory(self.dialect), execute)

    async def close(self) -> None:
        if self._sqlite is not None:
            await self._sqlite.close()
        if self._pool is not None:
            await self._pool.close()
            self._pool = None
        self._close_sync_conn()

    def close_sync(self) -> None:
        if self._sqlite is not None:
            self._sqlite.close_sync()
        self._close_sync_conn()

    # -- Postgres connections -----------------------------------------------------------------

    async def _postgres_pool(self) -> Any:
        if self._pool is not None:
            return self._pool
        async with self._opening:
            if self._pool is None:
                _psycopg(self.owner)
                from psycopg_pool import AsyncConnectionPool

                pool = AsyncConnectionPool(
                    self._dsn or "",
                    min_size=1,
                    max_size=self.pool_size,
                    kwargs={"autocommit": True},
                    open=False,
                    timeout=POOL_WAIT,
                )
                await pool.open()
                async with pool.connection() as conn, conn.transaction():
                    await conn.execute(_SCHEMA_LOCK)
                    for statement in _statements(self._schema):
                        await conn.execute(statement)
                self._pool = pool
        return self._pool

    def _postgres_sync(self) -> Any:
        if self._sync_conn is not None and not self._sync_conn.closed:
            return self._sync_conn
        psycopg = _psycopg(self.owner)
        conn = psycopg.connect(self._dsn, autocommit=True)
        with conn.transaction():
            conn.execute(_SCHEMA_LOCK)
            for statement in _statements(self._schema):
                conn.execute(statement)
        self._sync_conn = conn
        return conn

    def _close_sync_conn(self) -> None:
        if self._sync_conn is not None:
            self._sync_conn.close()
            self._sync_conn = None

    def __repr__(self) -> str:
        return f"SQLStore({self.dialect}: {self.location})"


def _statements(schema: str) -> list[str]:
    return [s.strip() for s in schema.split(";") if s.strip()]


def _psycopg(owner: str) -> Any:
    try:
        import psycopg
    except ImportError:
        raise ImportError(f"{owner}(dsn=...) needs psycopg 3: {POSTGRES_EXTRA}") from None
    return psycopg


def _redact(dsn: str) -> str:
    """Hide a password in a URL-style DSN (`postgresql://user:secret@host/db`)."""
    scheme, sep, rest = dsn.partition("://")
    if not sep or "@" not in rest:
        return dsn
    credentials, _, host = rest.rpartition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}@{host}"
