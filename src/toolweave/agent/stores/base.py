"""Where session histories live between runs and processes.

Stores are async (as openai-agents' `Session` protocol is): a locked database or a slow disk
must never freeze the event loop every run, MCP connection and HTTP stream share.
`SQLiteSessionStore` talks to SQLite through `toolweave.storage.SQLiteDatabase` (one
connection, one worker thread) and writes each turn in one transaction with full sync: a crash
loses at most the turn in flight and never leaves half a turn (an assistant tool call without
its result) in the history.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from toolweave.llm import Message
from toolweave.storage import SQLiteDatabase
from toolweave.storage.sqlite import DEFAULT_BUSY_TIMEOUT

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
"""


@runtime_checkable
class SessionStore(Protocol):
    """Persistence for `Session`; every method is one atomic write or read."""

    async def load(self, session_id: str) -> list[Message]: ...

    async def append(self, session_id: str, messages: Sequence[Message]) -> None: ...

    async def rewrite(self, session_id: str, messages: Sequence[Message]) -> None: ...

    async def clear(self, session_id: str) -> None: ...


def encode_message(message: Message) -> str:
    """A message as the compact JSON text every session store keeps."""
    return json.dumps(message.to_dict(), ensure_ascii=False, separators=(",", ":"))


class SQLiteSessionStore:
    """Session histories in one SQLite file (WAL, one transaction per write).

    Several processes may share the file; SQLite serialises their writers, and a writer waits
    up to `busy_timeout` seconds for another's lock (on the worker thread, never the event
    loop). `path=":memory:"` keeps everything in this process.
    """

    def __init__(self, path: str | Path, *, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> None:
        self._db = SQLiteDatabase(
            path, schema=_SCHEMA, synchronous="FULL", busy_timeout=busy_timeout
        )
        self.path = self._db.path

    async def load(self, session_id: str) -> list[Message]:
        def read(db: sqlite3.Connection) -> list[str]:
            rows = db.execute(
                "SELECT data FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
            ).fetchall()
            return [data for (data,) in rows]

        return [Message.from_dict(json.loads(data)) for data in await self._db.run(read)]

    async def append(self, session_id: str, messages: Sequence[Message]) -> None:
        if not messages:
            return
        encoded = [encode_message(m) for m in messages]

        def write(db: sqlite3.Connection) -> None:
            (last,) = db.execute(
                "SELECT COALESCE(MAX(seq), -1) FROM messages WHERE session_id = ?",
                (session_id,),
            ).fetchone()
            db.executemany(
                "INSERT INTO messages (session_id, seq, data) VALUES (?, ?, ?)",
                [(session_id, last + 1 + i, data) for i, data in enumerate(encoded)],
            )
            _touch(db, session_id)

        await self._db.transaction(write)

    async def rewrite(self, session_id: str, messages: Sequence[Message]) -> None:
        """Replace the whole history at once (after compaction)."""
        encoded = [encode_message(m) for m in messages]

        def write(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            db.executemany(
                "INSERT INTO messages (session_id, seq, data) VALUES (?, ?, ?)",
                [(session_id, i, data) for i, data in enumerate(encoded)],
            )
            _touch(db, session_id)

        await self._db.transaction(write)

    async def clear(self, session_id: str) -> None:
        def write(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            _touch(db, session_id)

        await self._db.transaction(write)

    async def session_ids(self) -> list[str]:
        """Known sessions, most recently updated first."""

        def read(db: sqlite3.Connection) -> list[str]:
            rows = db.execute("SELECT id FROM sessions ORDER BY updated DESC").fetchall()
            return [sid for (sid,) in rows]

        return await self._db.run(read)

    async def close(self) -> None:
        await self._db.close()

    async def __aenter__(self) -> SQLiteSessionStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"SQLiteSessionStore({self.path!r})"


def _touch(db: sqlite3.Connection, session_id: str) -> None:
    now = time.time()
    db.execute(
        "INSERT INTO sessions (id, created, updated) VALUES (?, ?, ?) "
        "ON CONFLICT(id) DO UPDATE SET updated = excluded.updated",
        (session_id, now, now),
    )
