"""Session histories in Postgres, for agents in several processes or hosts sharing sessions.

The same `SessionStore` protocol as `SQLiteSessionStore`, and the same guarantees: each write
is one transaction, so a turn is stored whole or not at all. Appends to one session are
serialised by locking its `sessions` row, so two processes appending at once get consecutive
sequence numbers instead of a conflict. psycopg 3 (async, with its connection pool) is imported
only when a store is built: `pip install 'toolweave[postgres]'`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toolweave.agent.stores.base import encode_message
from toolweave.errors import ConfigError
from toolweave.llm import Message

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg_pool import AsyncConnectionPool

DEFAULT_POOL_SIZE = 10
"""Connections one store may hold open at most."""
_PREFIX = re.compile(r"[a-z_][a-z0-9_]{0,40}")
_QUERIES = {
    "create_sessions": "CREATE TABLE IF NOT EXISTS {sessions} (id TEXT PRIMARY KEY, "
    "created TIMESTAMPTZ NOT NULL DEFAULT now(), updated TIMESTAMPTZ NOT NULL DEFAULT now())",
    "create_messages": "CREATE TABLE IF NOT EXISTS {messages} (session_id TEXT NOT NULL, "
    "seq INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (session_id, seq))",
    "load": "SELECT data FROM {messages} WHERE session_id = %s ORDER BY seq",
    "last_seq": "SELECT COALESCE(MAX(seq), -1) FROM {messages} WHERE session_id = %s",
    "delete": "DELETE FROM {messages} WHERE session_id = %s",
    "insert": "INSERT INTO {messages} (session_id, seq, data) VALUES (%s, %s, %s)",
    # The upsert takes the session row's lock, held until the transaction ends.
    "lock": "INSERT INTO {sessions} (id) VALUES (%s) "
    "ON CONFLICT (id) DO UPDATE SET updated = clock_timestamp()",
    "session_ids": "SELECT id FROM {sessions} ORDER BY updated DESC, id",
}


class PostgresSessionStore:
    """Session histories in two tables, `<prefix>sessions` and `<prefix>messages`.

    `dsn` is a libpq connection string or URL. `table_prefix` lets several stores (or test
    modules) share one database. Use `async with PostgresSessionStore(dsn) as store:` or
    call `await store.open()` and `await store.close()`.
    """

    def __init__(
        self, dsn: str, *, table_prefix: str = "toolweave_", pool_size: int = DEFAULT_POOL_SIZE
    ) -> None:
        if not _PREFIX.fullmatch(table_prefix):
            raise ConfigError(
                f"PostgresSessionStore(table_prefix={table_prefix!r}) must be lowercase letters, "
                "digits and underscores, starting with a letter or underscore"
            )
        if pool_size < 1:
            raise ConfigError(f"PostgresSessionStore(pool_size={pool_size}) must be 1 or more")
        try:
            from psycopg import sql
            from psycopg_pool import AsyncConnectionPool
        except ImportError:
            raise ConfigError(
                "PostgresSessionStore needs psycopg: pip install 'toolweave[postgres]'"
            ) from None
        self.table_prefix = table_prefix
        names = {
            "sessions": sql.Identifier(f"{table_prefix}sessions"),
            "messages": sql.Identifier(f"{table_prefix}messages"),
        }
        self._sql = {key: sql.SQL(text).format(**names) for key, text in _QUERIES.items()}
        self._pool: AsyncConnectionPool[AsyncConnection[Any]] = AsyncConnectionPool(
            dsn, min_size=1, max_size=pool_size, open=False
        )

    async def open(self) -> None:
        """Connect and create the tables if they do not exist."""
        await self._pool.open()
        async with self._pool.connection() as conn:
            await conn.execute(self._sql["create_sessions"])
            await conn.execute(self._sql["create_messages"])

    async def close(self) -> None:
        await self._pool.close()

    async def __aenter__(self) -> PostgresSessionStore:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def load(self, session_id: str) -> list[Message]:
        async with self._pool.connection() as conn:
            cursor = await conn.execute(self._sql["load"], (session_id,))
            rows = await cursor.fetchall()
        return [Message.from_dict(json.loads(data)) for (data,) in rows]

    async def append(self, session_id: str, messages: Sequence[Message]) -> None:
        if not messages:
            return
        encoded = [encode_message(m) for m in messages]
        async with self._pool.connection() as conn, conn.transaction():
            await self._lock_session(conn, session_id)
            cursor = await conn.execute(self._sql["last_seq"], (session_id,))
            row = await cursor.fetchone()
            last = row[0] if row is not None else -1
            await self._insert(conn, session_id, encoded, last + 1)

    async def rewrite(self, session_id: str, messages: Sequence[Message]) -> None:
        """Replace the whole history at once (after compaction)."""
        encoded = [encode_message(m) for m in messages]
        async with self._pool.connection() as conn, conn.transaction():
            await self._lock_session(conn, session_id)
            await conn.execute(self._sql["delete"], (session_id,))
            await self._insert(conn, session_id, encoded, 0)

    async def clear(self, session_id: str) -> None:
        async with self._pool.connection() as conn, conn.transaction():
            await self._lock_session(conn, session_id)
            await conn.execute(self._sql["delete"], (session_id,))

    async def session_ids(self) -> list[str]:
        """Known sessions, most recently updated first."""
        async with self._pool.connection() as conn:
            cursor = await conn.execute(self._sql["session_ids"])
            return [sid for (sid,) in await cursor.fetchall()]

    async def _lock_session(self, conn: AsyncConnection[Any], session_id: str) -> None:
        """Upsert the session row and hold its lock until the transaction ends."""
        await conn.execute(self._sql["lock"], (session_id,))

    async def _insert(
        self, conn: AsyncConnection[Any], session_id: str, encoded: list[str], first: int
    ) -> None:
        async with conn.cursor() as cursor:
            await cursor.executemany(
                self._sql["insert"],
                [(session_id, first + i, data) for i, data in enumerate(encoded)],
            )

    def __repr__(self) -> str:
        return f"PostgresSessionStore(table_prefix={self.table_prefix!r})"
