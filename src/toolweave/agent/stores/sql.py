"""Session histories in SQLite or Postgres, written once on `toolweave.storage.sql`.

Both stores keep the same promises because they run the same transaction programs: each write
is one transaction, so a turn (an assistant tool call and all of its results) is stored whole
or not at all, and a crash loses at most the turn in flight. Every write first upserts the
session's row; on Postgres that takes the row's lock until commit, so two processes appending to
one session at once get consecutive sequence numbers instead of a conflict (SQLite's
BEGIN IMMEDIATE serialises whole writers already).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from pathlib import Path

from toolweave.errors import ConfigError
from toolweave.llm import Message
from toolweave.storage.sql import DEFAULT_POOL_SIZE, Dialect, Program, SQLStore
from toolweave.storage.sqlite import DEFAULT_BUSY_TIMEOUT

_PREFIX = re.compile(r"(?:[a-z_][a-z0-9_]{0,40})?")
_ROWS_PER_INSERT = 300
"""Messages per INSERT statement (three parameters each; SQLite allows 32,766)."""


def _schema(prefix: str) -> str:
    return f"""
CREATE TABLE IF NOT EXISTS {prefix}sessions (
    id TEXT PRIMARY KEY,
    created DOUBLE PRECISION NOT NULL,
    updated DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS {prefix}messages (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
)
"""


class SQLSessionStore:
    """The `SessionStore` both databases share: tables `<prefix>sessions` (one row per session,
    with when it was created and last written) and `<prefix>messages` (one JSON row per message,
    in sequence). Build it as `SQLiteSessionStore` or `PostgresSessionStore`."""

    def __init__(self, store: SQLStore, table_prefix: str) -> None:
        self.store = store
        self.table_prefix = table_prefix
        self._sessions = f"{table_prefix}sessions"
        self._messages = f"{table_prefix}messages"

    async def open(self) -> None:
        """Connect and create the tables now instead of on first use."""
        await self.store.open()

    async def load(self, session_id: str) -> list[Message]:
        def program(dialect: Dialect) -> Program[list[str]]:
            rows = yield (
                f"SELECT data FROM {self._messages} WHERE session_id = ? ORDER BY seq",
                (session_id,),
            )
            return [data for (data,) in rows]

        return [Message.from_dict(json.loads(data)) for data in await self.store.transact(program)]

    async def append(self, session_id: str, messages: Sequence[Message]) -> None:
        if not messages:
            return
        encoded = [_encode(m) for m in messages]

        def program(dialect: Dialect) -> Program[None]:
            yield self._touch(session_id)
            ((last,),) = yield (
                f"SELECT COALESCE(MAX(seq), -1) FROM {self._messages} WHERE session_id = ?",
                (session_id,),
            )
            yield from self._insert(session_id, encoded, int(last) + 1)

        await self.store.transact(program)

    async def rewrite(self, session_id: str, messages: Sequence[Message]) -> None:
        """Replace the whole history at once (after compaction)."""
        encoded = [_encode(m) for m in messages]

        def program(dialect: Dialect) -> Program[None]:
            yield self._touch(session_id)
            yield f"DELETE FROM {self._messages} WHERE session_id = ?", (session_id,)
            yield from self._insert(session_id, encoded, 0)

        await self.store.transact(program)

    async def clear(self, session_id: str) -> None:
        def program(dialect: Dialect) -> Program[None]:
            yield self._touch(session_id)
            yield f"DELETE FROM {self._messages} WHERE session_id = ?", (session_id,)

        await self.store.transact(program)

    async def session_ids(self) -> list[str]:
        """Known sessions, most recently updated first."""

        def program(dialect: Dialect) -> Program[list[str]]:
            rows = yield f"SELECT id FROM {self._sessions} ORDER BY updated DESC, id", ()
            return [sid for (sid,) in rows]

        return await self.store.transact(program)

    async def close(self) -> None:
        await self.store.close()

    async def __aenter__(self) -> SQLSessionStore:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def _touch(self, session_id: str) -> tuple[str, tuple[str, float, float]]:
        """The upsert that records a write (and, on Postgres, locks the session's row)."""
        now = time.time()
        return (
            f"INSERT INTO {self._sessions} (id, created, updated) VALUES (?, ?, ?)"
            " ON CONFLICT (id) DO UPDATE SET updated = excluded.updated",
            (session_id, now, now),
        )

    def _insert(self, session_id: str, encoded: list[str], first: int) -> Program[None]:
        for start in range(0, len(encoded), _ROWS_PER_INSERT):
            chunk = encoded[start : start + _ROWS_PER_INSERT]
            params: list[object] = []
            for i, data in enumerate(chunk, start=first + start):
                params += [session_id, i, data]
            values = ", ".join(["(?, ?, ?)"] * len(chunk))
            yield f"INSERT INTO {self._messages} (session_id, seq, data) VALUES {values}", params


class SQLiteSessionStore(SQLSessionStore):
    """Session histories in one SQLite file (WAL, `synchronous=FULL`, one transaction per
    write), through `toolweave.storage.SQLiteDatabase`: one connection on one worker thread,
    never the event loop.

    Several processes may share the file; SQLite serialises their writers, and a writer waits
    up to `busy_timeout` seconds for another's lock. `path=":memory:"` keeps everything in this
    process. The tables are `sessions` and `messages` unless `table_prefix` is given.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
        table_prefix: str = "",
    ) -> None:
        prefix = _check_prefix("SQLiteSessionStore", table_prefix)
        store = SQLStore(
            path,
            schema=_schema(prefix),
            owner="SQLiteSessionStore",
            synchronous="FULL",
            busy_timeout=busy_timeout,
        )
        super().__init__(store, prefix)
        self.path = store.location

    def __repr__(self) -> str:
        return f"SQLiteSessionStore({self.path!r})"


class PostgresSessionStore(SQLSessionStore):
    """Session histories in Postgres (psycopg 3 async with its pool, the `postgres` extra), for
    agents in several processes or hosts sharing sessions.

    `dsn` is a libpq connection string or URL; `table_prefix` lets several stores (or test
    modules) share one database. `async with PostgresSessionStore(dsn) as store:` connects and
    creates the tables; otherwise the first call does.
    """

    def __init__(
        self, dsn: str, *, table_prefix: str = "toolweave_", pool_size: int = DEFAULT_POOL_SIZE
    ) -> None:
        prefix = _check_prefix("PostgresSessionStore", table_prefix)
        if pool_size < 1:
            raise ConfigError(f"PostgresSessionStore(pool_size={pool_size}) must be 1 or more")
        store = SQLStore(
            dsn=dsn, schema=_schema(prefix), owner="PostgresSessionStore", pool_size=pool_size
        )
        super().__init__(store, prefix)

    def __repr__(self) -> str:
        return f"PostgresSessionStore(table_prefix={self.table_prefix!r})"


def _check_prefix(owner: str, prefix: str) -> str:
    if not _PREFIX.fullmatch(prefix):
        raise ConfigError(
            f"{owner}(table_prefix={prefix!r}) must be lowercase letters, digits and"
            " underscores, starting with a letter or underscore"
        )
    return prefix


def _encode(message: Message) -> str:
    """A message as compact JSON text (CJK kept as written, not escaped)."""
    return json.dumps(message.to_dict(), ensure_ascii=False, separators=(",", ":"))
