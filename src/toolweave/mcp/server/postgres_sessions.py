"""2025-era sessions on Postgres: any replica serves any session behind a round-robin balancer.

A 2025-11-25 client opens a session with `initialize` and sends every later message with its
`Mcp-Session-Id`. A balancer that does not route by that header (a plain round-robin, or one
whose sticky cookie the client drops) sends them to any replica, so what a session is (its
negotiated version, client info and capabilities, log level, resource subscriptions, who
authenticated it) lives in one row every replica reads: `PostgresMCPSessionStore`. The row is
written before the answer that changed it is sent (so the client's next message, wherever it
lands, sees it), read (and its last use stamped) on every message, and deleted by `DELETE` or
after `idle_timeout` seconds unused. A session is only ever resumed by the principal that opened
it.

Server-to-client requests (an elicitation asking the person to approve a call) go out on the
stream of the call that asked, on the replica running it; the client's answer is a `POST` that
may reach another replica. That replica passes the message on (`post`): it is kept in a small
inbox table and announced with `NOTIFY`, and the replica holding the session feeds it to the
session. Request ids a replica sends are random 48-bit numbers onwards, so two replicas asking
the same session never collide.

A call either runs and returns, or fails without running (`claim` / `settle`): a `tools/call`
of a stored session is recorded under its session and request id before it runs, and its
response is recorded before it is sent. A retry of the same request id (a client whose
connection dropped, a balancer's retry) returns the recorded response instead of running the
tool again, or, while the first attempt has no outcome (still running, or its replica died
mid-call), is refused with an error saying so; the tool is never started twice. The same
table keeps the idempotency keys of 2026-era calls (scope `key:<principal>`, see
`idempotency`), each for the endpoint's `idempotency_ttl` seconds.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from toolweave.mcp.server.idempotency import KEY_SCOPE, RUNNING
from toolweave.mcp.server.postgres_listen import close_listening, follow, listening
from toolweave.mcp.shared.jsonrpc import encode

if TYPE_CHECKING:
    from toolweave.storage.sql import Dialect, Program

logger = logging.getLogger(__name__)

SESSIONS_CHANNEL = "toolweave_mcp_sessions"
DEFAULT_STORED_SESSION_IDLE = 600.0
"""Seconds a stored session (and its recorded call outcomes) lives unused."""
INBOX_MAX_AGE = 600.0
"""Seconds a message passed between replicas is kept (its receiver reads it at once)."""
STATE_METHODS = frozenset(
    {"initialize", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}
)
"""Requests that change a session's stored state (and `notifications/initialized`)."""
_SCHEMA = """
CREATE TABLE IF NOT EXISTS mcp_sessions (
    session_id TEXT PRIMARY KEY,
    principal TEXT NOT NULL,
    state TEXT NOT NULL,
    seen_at DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS mcp_session_inbox (
    id BIGSERIAL PRIMARY KEY,
    session_id TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS mcp_calls (
    session_id TEXT NOT NULL,
    request_id TEXT NOT NULL,
    response TEXT,
    created_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (session_id, request_id)
);
CREATE INDEX IF NOT EXISTS mcp_calls_age ON mcp_calls (created_at);
"""
Deliver = Callable[[str, dict[str, Any]], None]


class StoredSession(Protocol):
    """What the store keeps of a session (`ServerSession` is one)."""

    session_id: str | None
    principal: str | None

    def stored_state(self) -> dict[str, Any]: ...


class PostgresMCPSessionStore:
    """2025-era sessions, messages between replicas and call outcomes in Postgres, shared by
    every replica given the same `dsn` (the `postgres` extra); see the module docstring."""

    def __init__(self, dsn: str, *, idle_timeout: float = DEFAULT_STORED_SESSION_IDLE) -> None:
        from toolweave.storage.sql import SQLStore

        if idle_timeout <= 0:
            raise ValueError(
                f"PostgresMCPSessionStore: idle_timeout must be > 0, not {idle_timeout}"
            )
        self.dsn = dsn
        self.idle_timeout = idle_timeout
        self.db = SQLStore(dsn=dsn, schema=_SCHEMA, owner="PostgresMCPSessionStore")
        self._deliver: Deliver | None = None
        self._listener: asyncio.Task[None] | None = None
        self._listening = asyncio.Lock()
        self._pending: set[asyncio.Task[None]] = set()

    def attach(self, deliver: Deliver) -> None:
        """`deliver(session_id, message)` receives the messages other replicas pass on."""
        self._deliver = deliver

    async def _listen(self) -> None:
        """Start hearing the other replicas' messages (once, before the first session use)."""
        async with self._listening:
            if self._listener is not None or self._deliver is None:
                return
            connection = await listening(self.dsn, SESSIONS_CHANNEL)
            self._listener = asyncio.ensure_future(
                follow(self.dsn, SESSIONS_CHANNEL, connection, self._receive)
            )

    async def _receive(self, payload: str) -> None:
        session_id, _, row_id = payload.rpartition(":")
        deliver = self._deliver
        assert deliver is not None
        task = asyncio.ensure_future(self._fetch(session_id, int(row_id), deliver))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _fetch(self, session_id: str, row_id: int, deliver: Deliver) -> None:
        def program(dialect: Dialect) -> Program[list[Any]]:
            rows = yield (
                "SELECT data FROM mcp_session_inbox WHERE id = ? AND session_id = ?",
                (row_id, session_id),
            )
            return rows

        for (data,) in await self.db.transact(program):
            deliver(session_id, json.loads(data))

    async def save(self, session: StoredSession) -> None:
        """Write a session's state and the principal that opened it, and sweep the sessions
        unused for `idle_timeout`."""
        await self._listen()
        now = time.time()
        state = json.dumps(session.stored_state())
        row = (session.session_id, session.principal or "", state, now)
        stale = now - self.idle_timeout

        def program(dialect: Dialect) -> Program[None]:
            yield (
                "INSERT INTO mcp_sessions (session_id, principal, state, seen_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
                "state = excluded.state, seen_at = excluded.seen_at",
                row,
            )
            yield "DELETE FROM mcp_sessions WHERE seen_at < ?", (stale,)
            yield (
                "DELETE FROM mcp_calls WHERE created_at < ? AND session_id NOT LIKE ?",
                (stale, f"{KEY_SCOPE}%"),
            )
            yield "DELETE FROM mcp_session_inbox WHERE created_at < ?", (now - INBOX_MAX_AGE,)

        await self.db.transact(program)

    async def load(self, session_id: str) -> tuple[str, dict[str, Any]] | None:
        """The session's principal ("" when none) and state, its use stamped; None when it is
        unknown, ended or expired."""
        await self._listen()
        now = time.time()

        def program(dialect: Dialect) -> Program[tuple[str, dict[str, Any]] | None]:
            rows = yield (
                "UPDATE mcp_sessions SET seen_at = ? WHERE session_id = ? AND seen_at >= ? "
                "RETURNING principal, state",
                (now, session_id, now - self.idle_timeout),
            )
            return (rows[0][0], json.loads(rows[0][1])) if rows else None

        return await self.db.transact(program)

    async def delete(self, session_id: str) -> None:
        def program(dialect: Dialect) -> Program[None]:
            yield "DELETE FROM mcp_sessions WHERE session_id = ?", (session_id,)
            yield "DELETE FROM mcp_calls WHERE session_id = ?", (session_id,)

        await self.db.transact(program)

    async def post(self, session_id: str, message: dict[str, Any]) -> None:
        """Pass a client's message to the replica holding `session_id`'s pending request."""
        data = encode(message).decode()

        def program(dialect: Dialect) -> Program[None]:
            rows = yield (
                "INSERT INTO mcp_session_inbox (session_id, data, created_at) VALUES (?, ?, ?) "
                "RETURNING id",
                (session_id, data, time.time()),
            )
            yield "SELECT pg_notify(?, ?)", (SESSIONS_CHANNEL, f"{session_id}:{rows[0][0]}")

        await self.db.transact(program)

    async def claim(
        self, session_id: str, request_id: Any, ttl: float | None = None
    ) -> dict[str, Any] | str | None:
        """Record a call before it runs: None when this attempt may run it, else the response
        recorded for the same request id (or idempotency key, `session_id` being its scope,
        keys older than `ttl` seconds forgotten), or `RUNNING` when it has none yet."""
        key = json.dumps(request_id)
        now = time.time()

        def program(dialect: Dialect) -> Program[dict[str, Any] | str | None]:
            if ttl is not None:
                yield (
                    "DELETE FROM mcp_calls WHERE created_at < ? AND session_id LIKE ?",
                    (now - ttl, f"{KEY_SCOPE}%"),
                )
            rows = yield (
                "INSERT INTO mcp_calls (session_id, request_id, response, created_at) "
                "VALUES (?, ?, NULL, ?) ON CONFLICT (session_id, request_id) DO NOTHING "
                "RETURNING 1",
                (session_id, key, now),
            )
            if rows:
                return None
            rows = yield (
                "SELECT response FROM mcp_calls WHERE session_id = ? AND request_id = ?",
                (session_id, key),
            )
            if not rows or rows[0][0] is None:
                return RUNNING
            response: dict[str, Any] = json.loads(rows[0][0])
            return response

        return await self.db.transact(program)

    async def settle(self, session_id: str, request_id: Any, response: dict[str, Any]) -> None:
        """Record a claimed call's response (before it is sent)."""
        row = (encode(response).decode(), session_id, json.dumps(request_id))

        def program(dialect: Dialect) -> Program[None]:
            yield (
                "UPDATE mcp_calls SET response = ? WHERE session_id = ? AND request_id = ?",
                row,
            )

        await self.db.transact(program)

    async def close(self) -> None:
        await close_listening(self._pending, self._listener, self.db)
