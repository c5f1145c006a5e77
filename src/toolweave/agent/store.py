"""Where session histories live between runs and processes.

`SQLiteSessionStore` writes each turn in one transaction on a WAL database with full sync: a
crash loses at most the turn in flight and never leaves half a turn (an assistant tool call
without its result) in the history.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from toolweave.llm import Message

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

    def load(self, session_id: str) -> list[Message]: ...

    def append(self, session_id: str, messages: Sequence[Message]) -> None: ...

    def rewrite(self, session_id: str, messages: Sequence[Message]) -> None: ...

    def clear(self, session_id: str) -> None: ...


def _encode(message: Message) -> str:
    return json.dumps(message.to_dict(), ensure_ascii=False, separators=(",", ":"))


class SQLiteSessionStore:
    """Session histories in one SQLite file (WAL, one transaction per write).

    Several processes may share the file; SQLite serialises their writers. `path=":memory:"`
    keeps everything in this process.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
            self.path = str(Path(self.path).expanduser())
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=30.0
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_SCHEMA)

    def load(self, session_id: str) -> list[Message]:
        with self._lock:
            rows = self._db.execute(
                "SELECT data FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
            ).fetchall()
        return [Message.from_dict(json.loads(data)) for (data,) in rows]

    def append(self, session_id: str, messages: Sequence[Message]) -> None:
        if not messages:
            return
        encoded = [_encode(m) for m in messages]
        with self._lock, self._transaction():
            (last,) = self._db.execute(
                "SELECT COALESCE(MAX(seq), -1) FROM messages WHERE session_id = ?",
                (session_id,),
            ).fetchone()
            self._db.executemany(
                "INSERT INTO messages (session_id, seq, data) VALUES (?, ?, ?)",
                [(session_id, last + 1 + i, data) for i, data in enumerate(encoded)],
            )
            self._touch(session_id)

    def rewrite(self, session_id: str, messages: Sequence[Message]) -> None:
        """Replace the whole history at once (after compaction)."""
        encoded = [_encode(m) for m in messages]
        with self._lock, self._transaction():
            self._db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            self._db.executemany(
                "INSERT INTO messages (session_id, seq, data) VALUES (?, ?, ?)",
                [(session_id, i, data) for i, data in enumerate(encoded)],
            )
            self._touch(session_id)

    def clear(self, session_id: str) -> None:
        with self._lock, self._transaction():
            self._db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            self._touch(session_id)

    def session_ids(self) -> list[str]:
        """Known sessions, most recently updated first."""
        with self._lock:
            rows = self._db.execute("SELECT id FROM sessions ORDER BY updated DESC").fetchall()
        return [sid for (sid,) in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> SQLiteSessionStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _touch(self, session_id: str) -> None:
        now = time.time()
        self._db.execute(
            "INSERT INTO sessions (id, created, updated) VALUES (?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET updated = excluded.updated",
            (session_id, now, now),
        )

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    def __repr__(self) -> str:
        return f"SQLiteSessionStore({self.path!r})"


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any error (so no half-written turn)."""

    __slots__ = ("_db",)

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            try:
                self._db.execute("COMMIT")
                return
            except sqlite3.Error:
                self._db.execute("ROLLBACK")  # never leave the connection inside a transaction
                raise
        self._db.execute("ROLLBACK")
