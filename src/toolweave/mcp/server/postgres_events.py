"""The SSE event store on Postgres: a stream started on one replica resumes on any other.

`InMemoryEventStore` keeps a stream's events in the process that produced them, so a client whose
connection dropped must come back to that process. `PostgresEventStore` writes every event to
one table that all replicas share (`[serve].store_dsn`), with the same retention rules: the last
`max_events` events of each stream, and a fully delivered stream is forgotten; since a replica
may die before it forgets, events older than `max_age` seconds are also swept. A stream no
session can resume (a stateless 2026-07-28 request's) is not written at all. Each event is
announced with `NOTIFY`, so a replica serving a resumed stream follows the events its producer
is still sending, without polling, until the stream's final message (a response) arrives.

A stream belongs to the 2025-era session whose request opened it (`bind`): a replica that does
not hold that session still resumes the stream for a `GET` carrying the same `Mcp-Session-Id`
and a `Last-Event-ID` of the stream, and for nobody else. A follower that hears nothing for
`follow_idle` seconds ends the response; the client resumes again from its last event id (the
SEP-1699 polling rule), so a stream whose producer died never holds a connection forever.

`PostgresChangeRelay` fans list changes, resource updates and task status changes out across
replicas: what one replica's `ChangeFeed` publishes is sent with `NOTIFY`, and every other
replica delivers it to its own `subscriptions/listen` streams and 2025-era sessions.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from toolweave.mcp.server.event_store import MAX_EVENTS_PER_STREAM
from toolweave.mcp.server.postgres_listen import close_listening, follow, listening
from toolweave.mcp.shared.constants import PROMPTS_CHANGED, RESOURCES_CHANGED, TOOLS_CHANGED
from toolweave.mcp.shared.jsonrpc import encode

if TYPE_CHECKING:
    from toolweave.mcp.server.app import MCPServer
    from toolweave.storage.sql import Dialect, Program

logger = logging.getLogger(__name__)

DEFAULT_FOLLOW_IDLE = 30.0
"""Seconds a resumed stream waits for its producer's next event before ending the response."""
DEFAULT_EVENT_MAX_AGE = 3600.0
"""Seconds an event is kept at most (a stream left by a replica that died is swept after it)."""
CHANNEL = "toolweave_mcp_events"
STOPPED_CODE = -32603
"""The JSON-RPC error code (internal error) of a request whose replica died before answering."""
CHANGES_CHANNEL = "toolweave_mcp_changes"
MAX_NOTIFY_BYTES = 7900
"""Postgres refuses a NOTIFY payload of 8000 bytes or more; a longer change is not relayed."""
_SCHEMA = """
CREATE TABLE IF NOT EXISTS mcp_events (
    stream_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    session_id TEXT NOT NULL,
    instance TEXT NOT NULL,
    request_id TEXT NOT NULL,
    final INTEGER NOT NULL,
    data TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (stream_id, seq)
);
CREATE INDEX IF NOT EXISTS mcp_events_age ON mcp_events (created_at);
"""
Event = tuple[str, bytes]


def _split(event_id: str) -> tuple[str, int] | None:
    stream_id, _, seq_text = event_id.rpartition(".")
    if not stream_id or not seq_text.isdigit():
        return None
    return stream_id, int(seq_text)


class PostgresEventStore:
    """SSE events in Postgres, shared by every replica given the same `dsn` (the `postgres`
    extra); see the module docstring for retention, ownership and `follow_idle`."""

    def __init__(
        self,
        dsn: str,
        *,
        max_events: int = MAX_EVENTS_PER_STREAM,
        follow_idle: float = DEFAULT_FOLLOW_IDLE,
        max_age: float = DEFAULT_EVENT_MAX_AGE,
        instance: str = "local",
    ) -> None:
        from toolweave.storage.sql import SQLStore

        if max_events < 1 or follow_idle <= 0 or max_age <= 0:
            raise ValueError(
                "PostgresEventStore: max_events, follow_idle and max_age must be positive"
            )
        self.dsn = dsn
        self.max_events = max_events
        self.follow_idle = follow_idle
        self.max_age = max_age
        self.instance = instance  # the replica: a restart ends the streams its last run left
        self._swept = 0.0  # when this process last deleted events older than max_age
        self.db = SQLStore(dsn=dsn, schema=_SCHEMA, owner="PostgresEventStore")
        self._seq: dict[str, int] = {}  # the streams this process produces
        self._sessions: dict[str, str] = {}
        self._requests: dict[str, str] = {}  # stream -> its request's id, as JSON
        self._pending: set[asyncio.Task[None]] = set()

    def bind(self, stream_id: str, session_id: str, request_id: Any = None) -> None:
        """The stream answers request `request_id` of `session_id`: only that session may
        resume it."""
        self._sessions[stream_id] = session_id
        self._requests[stream_id] = json.dumps(request_id)

    async def store(self, stream_id: str, message: dict[str, Any]) -> str:
        seq = self._seq.get(stream_id, 0) + 1
        self._seq[stream_id] = seq
        session_id = self._sessions.get(stream_id)
        if session_id is None:  # nobody can resume it: nothing to share
            return f"{stream_id}.{seq}"
        now = time.time()
        final = int("method" not in message)  # a response: the request's stream ends with it
        request_id = self._requests.get(stream_id, "null")
        data = encode(message).decode()
        row = (stream_id, seq, session_id, self.instance, request_id, final, data, now)
        oldest_kept = seq - self.max_events
        sweep = now - self._swept >= self.max_age / 10
        if sweep:
            self._swept = now

        def program(dialect: Dialect) -> Program[None]:
            yield (
                "INSERT INTO mcp_events (stream_id, seq, session_id, instance, request_id, "
                "final, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )
            if oldest_kept > 0:
                yield (
                    "DELETE FROM mcp_events WHERE stream_id = ? AND seq <= ?",
                    (
                        stream_id,
                        oldest_kept,
                    ),
                )
            if sweep:
                yield "DELETE FROM mcp_events WHERE created_at < ?", (now - self.max_age,)
            yield "SELECT pg_notify(?, ?)", (CHANNEL, stream_id)

        await self.db.transact(program)
        return f"{stream_id}.{seq}"

    async def replay_after(self, last_event_id: str) -> tuple[str, list[Event]] | None:
        place = _split(last_event_id)
        if place is None:
            return None
        stream_id, after = place
        rows = await self._after(stream_id, after, None)
        return stream_id, [(event_id, data) for event_id, data, _ in rows]

    async def follow(self, last_event_id: str, session_id: str) -> AsyncIterator[Event] | None:
        """The events of `session_id`'s stream after `last_event_id`, then the ones still to
        come, until the final one; None when the stream is unknown here or another session's."""
        place = _split(last_event_id)
        if place is None:
            return None
        stream_id, after = place

        def owner(dialect: Dialect) -> Program[bool]:
            rows = yield (
                "SELECT 1 FROM mcp_events WHERE stream_id = ? AND session_id = ? LIMIT 1",
                (stream_id, session_id),
            )
            return bool(rows)

        if not session_id or not await self.db.transact(owner):
            return None
        return self._follow(stream_id, after, session_id)

    async def _follow(self, stream_id: str, after: int, session_id: str) -> AsyncIterator[Event]:
        import psycopg

        async with await psycopg.AsyncConnection.connect(self.dsn, autocommit=True) as listener:
            await listener.execute(f"LISTEN {CHANNEL}")  # before reading: nothing slips between
            while True:
                for event_id, data, final in await self._after(stream_id, after, session_id):
                    after = int(event_id.rpartition(".")[2])
                    yield event_id, data
                    if final:
                        self._drop(stream_id)  # delivered in full
                        return
                heard = False
                async for note in listener.notifies(timeout=self.follow_idle):
                    if note.payload == stream_id:
                        heard = True
                        break
                if not heard:
                    return

    async def _after(
        self, stream_id: str, after: int, session_id: str | None
    ) -> list[tuple[str, bytes, bool]]:
        mine = "" if session_id is None else " AND session_id = ?"
        params = (stream_id, after) if session_id is None else (stream_id, after, session_id)

        def program(dialect: Dialect) -> Program[list[tuple[str, bytes, bool]]]:
            rows = yield (
                f"SELECT seq, data, final FROM mcp_events WHERE stream_id = ? AND seq > ?{mine} "
                "ORDER BY seq",
                params,
            )
            return [(f"{stream_id}.{seq}", data.encode(), bool(final)) for seq, data, final in rows]

        return await self.db.transact(program)

    async def recover(self) -> int:
        """End the streams this replica's previous run left open (it died mid-request): each
        gets a final JSON-RPC error, so a client resuming it on any replica hears that the
        request stopped, after every event it had missed. Returns how many were ended."""
        message = (
            f"the replica {self.instance!r} stopped before answering this request; "
            "the call did not finish (it may have run in part)"
        )

        def program(dialect: Dialect) -> Program[int]:
            rows = yield (
                "SELECT stream_id, session_id, request_id, MAX(seq) FROM mcp_events "
                "WHERE instance = ? GROUP BY stream_id, session_id, request_id "
                "HAVING MAX(final) = 0",
                (self.instance,),
            )
            now = time.time()
            for stream_id, session_id, request_id, seq in rows:
                error = {"code": STOPPED_CODE, "message": message}
                data = encode({"jsonrpc": "2.0", "id": json.loads(request_id), "error": error})
                yield (
                    "INSERT INTO mcp_events (stream_id, seq, session_id, instance, request_id, "
                    "final, data, created_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?)",
                    (stream_id, seq + 1, session_id, self.instance, request_id, data.decode(), now),
                )
                yield "SELECT pg_notify(?, ?)", (CHANNEL, stream_id)
            return len(rows)

        return await self.db.transact(program)

    def forget(self, stream_id: str) -> None:
        """The stream was fully delivered: drop its events (in the background)."""
        self._seq.pop(stream_id, None)
        self._requests.pop(stream_id, None)
        if self._sessions.pop(stream_id, None) is not None:
            self._drop(stream_id)

    def _drop(self, stream_id: str) -> None:
        def program(dialect: Dialect) -> Program[None]:
            yield "DELETE FROM mcp_events WHERE stream_id = ?", (stream_id,)

        task = asyncio.ensure_future(self.db.transact(program))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def close(self) -> None:
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)
        await self.db.close()


class PostgresChangeRelay:
    """Passes the changes a server publishes to every replica on the same `dsn`, and delivers
    theirs to it (see the module docstring). `start` before serving, `close` after."""

    def __init__(self, dsn: str) -> None:
        from toolweave.storage.sql import SQLStore

        self.dsn = dsn
        self.origin = secrets.token_hex(8)  # this process: its own notes are not delivered twice
        self.db = SQLStore(dsn=dsn, schema="", owner="PostgresChangeRelay")
        self._listener: asyncio.Task[None] | None = None
        self._pending: set[asyncio.Task[None]] = set()

    async def start(self, server: MCPServer) -> None:
        """Listen for the other replicas' changes (returns once listening), relay this one's."""
        connection = await listening(self.dsn, CHANGES_CHANNEL)

        async def deliver(change_note: str) -> None:
            await self._deliver(change_note, server)

        async def missed() -> None:
            await self._missed(server)

        self._listener = asyncio.ensure_future(
            follow(self.dsn, CHANGES_CHANNEL, connection, deliver, missed)
        )
        server.changes.relays.append(self.relay)

    def relay(self, method: str, uri: str | None) -> None:
        payload = json.dumps({"origin": self.origin, "method": method, "uri": uri})
        if len(payload.encode()) > MAX_NOTIFY_BYTES:
            logger.warning(
                "%s for a %d-byte uri not relayed to other replicas", method, len(uri or "")
            )
            return

        def program(dialect: Dialect) -> Program[None]:
            yield "SELECT pg_notify(?, ?)", (CHANGES_CHANNEL, payload)

        task = asyncio.ensure_future(self.db.transact(program))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def ping(self) -> None:
        """Raise unless the shared Postgres answers (the host's readiness check)."""

        def program(dialect: Dialect) -> Program[None]:
            yield "SELECT 1", ()

        await self.db.transact(program)

    async def _deliver(self, change_note: str, server: MCPServer) -> None:
        change = json.loads(change_note)
        if change["origin"] != self.origin:
            await server.deliver_change(change["method"], change["uri"])

    async def _missed(self, server: MCPServer) -> None:
        """Listening again after a Postgres restart: every list may have changed meanwhile
        (the notes sent while this replica was not listening are lost)."""
        for method in (TOOLS_CHANGED, PROMPTS_CHANGED, RESOURCES_CHANGED):
            await server.deliver_change(method, None)

    async def close(self) -> None:
        await close_listening(self._pending, self._listener, self.db)
