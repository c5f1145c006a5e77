"""Streamable HTTP for `MCPServer`: a Starlette app with sessions, SSE, resumability and the
stateless 2026-07-28 request shape.

Each POSTed request gets a `ReplyStream`. The first thing the handler emits decides the
answer's shape: if it is the final response, the client gets plain `application/json` (the
fast path for ordinary calls); if a notification, a server-to-client request or a stream close
comes first, the answer becomes an SSE stream that opens with a priming event (id + `retry`).
Every SSE event is kept in the event store, so a client whose stream dropped (or was closed on
purpose, SEP-1699 polling) resumes with GET + `Last-Event-ID` and receives the rest.

Nothing a client controls is unbounded: a POST must say `Content-Type: application/json` (415
otherwise: a page in a browser can send `text/plain` to a loopback port without asking, never
JSON), its body is read only up to `max_body_bytes` (413 otherwise, chunked bodies included) and
within `body_read_timeout` seconds (408 otherwise: a client dripping a byte at a time holds no
descriptor past it), a bad request id is refused before anything is kept, and at most
`max_sessions` sessions live: past the cap a new session gets 429 and nobody's session is
closed for it (one unused for `session_idle_timeout` seconds is closed when the next opens).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from toolweave.mcp.server._guards import MODERN_ERROR_STATUS, AccessGuard, check_modern_request
from toolweave.mcp.server._guards import error_response as _error
from toolweave.mcp.server._headers import check_param_headers
from toolweave.mcp.server._http_body import disconnected, read_capped_body
from toolweave.mcp.server._http_shared import FIRST_ID_SPAN, SharedSessions, answering
from toolweave.mcp.server._session import ServerSession
from toolweave.mcp.server.event_store import (
    EventStore,
    InMemoryEventStore,
    ReplyStream,
    drain,
    sse_event,
)
from toolweave.mcp.server.idempotency import CallRecords, MemoryCallRecords
from toolweave.mcp.shared.constants import (
    HANDSHAKE_VERSIONS,
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    MODERN_VERSIONS,
)
from toolweave.mcp.shared.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    JSONRPCError,
)
from toolweave.mcp.shared.jsonrpc import decode, encode, valid_id
from toolweave.mcp.shared.peer import JSONRPCPeer
from toolweave.storage.errors import StoreUnavailable

if TYPE_CHECKING:
    from toolweave.mcp.server._view import ServerView
    from toolweave.mcp.server.postgres_sessions import PostgresMCPSessionStore

logger = logging.getLogger("toolweave.mcp.server")
_SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


class _HttpSession:
    __slots__ = ("last_seen", "peer", "session", "standalone", "streams")

    def __init__(self, session: ServerSession, peer: JSONRPCPeer) -> None:
        self.session = session
        self.peer = peer
        self.streams: dict[str, ReplyStream] = {}
        self.standalone: asyncio.Queue[bytes | None] | None = None
        self.last_seen = time.monotonic()


class StreamableHTTPApp(SharedSessions):
    """The ASGI endpoint; `build_app` mounts it at the MCP path. With `session_store`, 2025-era
    sessions are stored for every replica (`postgres_sessions`)."""

    def __init__(
        self,
        server: ServerView,
        *,
        allowed_origins: Sequence[str],
        allowed_hosts: Sequence[str] | None,
        auth_token: str | None,
        event_store: EventStore | None,
        sse_retry_ms: int,
        max_body_bytes: int,
        max_sessions: int,
        session_idle_timeout: float,
        body_read_timeout: float,
        tokens: Mapping[str, str] | None,
        session_store: PostgresMCPSessionStore | None = None,
        idempotency_ttl: float,
    ) -> None:
        self.server = server
        self.shared = session_store
        self.records: CallRecords = session_store or MemoryCallRecords()
        self.idempotency_ttl = idempotency_ttl
        if session_store is not None:
            session_store.attach(self._deliver)
        self.max_body_bytes = max_body_bytes
        self.max_sessions = max_sessions
        self.session_idle_timeout = session_idle_timeout
        self.body_read_timeout = body_read_timeout
        self.guard = AccessGuard(allowed_origins, allowed_hosts, auth_token, tokens)
        self.store: EventStore = event_store if event_store is not None else InMemoryEventStore()
        self.retry_ms = sse_retry_ms
        self.sessions: dict[str, _HttpSession] = {}

    # -- ASGI -------------------------------------------------------------------------------------

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        request = Request(scope, receive)
        response = self.guard.check(request)
        if response is None:
            try:
                response = await self._route(request)
            except StoreUnavailable as exc:  # the shared Postgres is down: retry (nothing ran)
                response = _error(503, INTERNAL_ERROR, str(exc))
                response.headers["Retry-After"] = "1"
        await response(scope, receive, send)

    async def _route(self, request: Request) -> Response:
        if request.method == "POST":
            return await self._post(request)
        if request.method == "GET":
            return await self._get(request)
        if request.method == "DELETE":
            return await self._delete(request)
        return Response(status_code=405, headers={"Allow": "GET, POST, DELETE"})

    async def _post(self, request: Request) -> Response:
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            return _error(
                415, INVALID_REQUEST,
                f"POST needs Content-Type: application/json (got {kind or 'none'!r})",
            )  # fmt: skip
        try:
            async with asyncio.timeout(self.body_read_timeout):
                body = await read_capped_body(request, self.max_body_bytes)
        except TimeoutError:
            return _error(
                408, INVALID_REQUEST,
                f"the request body did not arrive within body_read_timeout "
                f"({self.body_read_timeout:g} s)",
            )  # fmt: skip
        if body is None:
            return _error(
                413,
                INVALID_REQUEST,
                f"Request body larger than max_body_bytes ({self.max_body_bytes} bytes); send "
                "less (or raise the server's max_body_bytes)",
            )
        try:
            message = decode(body)
        except JSONRPCError as exc:
            return _error(400, exc.code, exc.message)
        if not isinstance(message, dict):
            return _error(400, -32600, "POST one JSON-RPC message (an object); batches are gone")
        accept = request.headers.get("accept", "")
        json_ok = "application/json" in accept or "*/*" in accept or not accept
        sse_ok = "text/event-stream" in accept
        method = message.get("method")
        if "id" in message and method is not None and not valid_id(message["id"]):
            return _error(400, INVALID_REQUEST, "a request id must be an integer or a string")
        is_request = isinstance(method, str) and "id" in message
        # Every refusal below answers with the request's id (2026-07-28 requires it).
        rid = message["id"] if is_request else None
        params = message.get("params")
        if not isinstance(params, dict):
            params = {}
        meta = params.get("_meta")
        if not isinstance(meta, dict):
            meta = {}
        if isinstance(method, str) and is_request and META_PROTOCOL_VERSION in meta:
            return await self._stateless(request, message, method, params, meta, json_ok, sse_ok)
        version = request.headers.get("mcp-protocol-version")
        if is_request and version in MODERN_VERSIONS:
            return _error(
                400,
                INVALID_PARAMS,
                f"a {version} request carries its protocol version in "
                f"params._meta[{META_PROTOCOL_VERSION!r}] (and its capabilities in "
                f"_meta[{META_CLIENT_CAPABILITIES!r}]); this one has none",
                rid,
            )
        if version is not None and version not in HANDSHAKE_VERSIONS:
            return _error(400, -32600, f"Unsupported MCP-Protocol-Version {version!r}", rid)
        session_id = request.headers.get("mcp-session-id")
        if method == "initialize" and "id" in message:
            created = self._new_session()
            if created is None:
                response = _error(
                    429, INVALID_REQUEST,
                    f"too many sessions (max_sessions={self.max_sessions}); close one or retry "
                    "later", message["id"],
                )  # fmt: skip
                response.headers["Retry-After"] = str(max(1, int(self.session_idle_timeout)))
                return response
            self._identify(created.session, request)
            return await self._answer(created, message, json_ok, sse_ok, new=True)
        if session_id is None:
            if not is_request:  # a 2026-07-28 notification: nothing is waiting for it here
                return Response(status_code=202)
            return _error(400, -32600, "Bad Request: Mcp-Session-Id header is required", rid)
        found = self.shared is None or await self._load(session_id, request)
        http_session = self.sessions.get(session_id) if found else None
        if http_session is None:
            return _error(404, -32600, "Session not found: initialize a new session", rid)
        http_session.last_seen = time.monotonic()
        if not is_request:  # a notification or a response to our request
            return await self._message(http_session, message)
        if self.shared is not None and method == "tools/call":
            earlier = await self._claim(http_session, message)
            if earlier is not None:
                return earlier
        return await self._answer(http_session, message, json_ok, sse_ok)

    def _identify(self, session: ServerSession, request: Request) -> None:
        """Record who sent `request` (it passed the guard): the principal and the address."""
        session.principal = self.guard.principal_of(request)
        session.remote_address = request.client.host if request.client is not None else None

    def _new_session(self) -> _HttpSession | None:
        """A new session, or None past `max_sessions` (after closing the idle ones): a flood of
        sessions is refused rather than evicting anyone's live session."""
        self._sweep_idle()
        if len(self.sessions) >= self.max_sessions:
            logger.info("refusing a session: max_sessions=%d reached", self.max_sessions)
            return None
        return self._open(uuid.uuid4().hex)

    def _sweep_idle(self) -> None:
        """Close the sessions (or this replica's copies of stored ones) idle too long."""
        now = time.monotonic()
        for sid, old in list(self.sessions.items()):
            if now - old.last_seen > self.session_idle_timeout:
                self._close(sid)

    def _open(self, session_id: str) -> _HttpSession:
        """This replica's copy of a session (new, or opened by another replica)."""
        session = self.server.new_session(session_id=session_id)
        holder: list[_HttpSession] = []

        async def standalone_send(message: dict[str, Any]) -> None:
            queue = holder[0].standalone
            if queue is not None:
                queue.put_nowait(sse_event(None, encode(message)))

        # Stored sessions: the ids this replica's requests use are its own (a random start).
        first_id = 0 if self.shared is None else secrets.randbelow(FIRST_ID_SPAN)
        peer = JSONRPCPeer(
            standalone_send,
            answering(session, self.shared),
            session.on_notification,
            first_id=first_id,
        )
        session.peer = peer
        http_session = _HttpSession(session, peer)
        holder.append(http_session)
        assert session.session_id is not None
        self.sessions[session.session_id] = http_session
        self.server.sessions.add(session)
        return http_session

    async def _answer(
        self,
        http_session: _HttpSession,
        message: dict[str, Any],
        json_ok: bool,
        sse_ok: bool,
        *,
        new: bool = False,
    ) -> Response:
        stream = ReplyStream(message["id"], json_ok=json_ok, sse_ok=sse_ok)
        store = self.store
        bind = getattr(store, "bind", None)  # a shared store: only this session may resume it
        if bind is not None:
            bind(stream.id, http_session.session.session_id or "", message["id"])

        async def send(msg: dict[str, Any]) -> None:
            await stream.send(msg, store)

        http_session.streams[stream.id] = stream
        reply = self._recording(http_session.session.session_id or "", message, send)
        http_session.peer.feed(message, send=reply, transport=stream)
        headers = {"Mcp-Session-Id": http_session.session.session_id or ""} if new else {}
        return await self._respond(stream, headers, http_session)

    async def _respond(
        self,
        stream: ReplyStream,
        headers: dict[str, str],
        http_session: _HttpSession | None,
        *,
        stateless: tuple[Request, JSONRPCPeer] | None = None,
    ) -> Response:
        if stateless is None:
            await stream.decided
        else:  # 2026-07-28: the client hanging up cancels the request
            hangup = asyncio.ensure_future(disconnected(stateless[0]))
            try:
                await asyncio.wait((stream.decided, hangup), return_when=asyncio.FIRST_COMPLETED)
            finally:
                hangup.cancel()
            if not stream.decided.done():
                stateless[1].close()
                stream.abandon()
        if stream.mode in ("json", "none"):
            if http_session is not None:
                http_session.streams.pop(stream.id, None)
            if stream.mode == "none":
                self._forget(stream, None)
                return Response(status_code=202, headers=headers)
            final = stream.final or {}
            error = final.get("error")
            code = error.get("code") if stateless is not None and isinstance(error, dict) else 0
            return Response(
                encode(final),
                status_code=MODERN_ERROR_STATUS.get(code, 200) if type(code) is int else 200,
                media_type="application/json",
                headers=headers,
            )
        queue = stream.first_queue
        priming = f"id: {stream.id}.0\nretry: {self.retry_ms}\ndata: \n\n".encode()

        async def events() -> AsyncIterator[bytes]:
            try:
                yield priming
                async for chunk in drain(queue):
                    yield chunk
            finally:
                if stateless is not None:  # never resumable: drop its events either way
                    if not stream.finished:
                        stateless[1].close()  # the client closed the stream: that cancels it
                    self._forget(stream, None)
            if stream.finished and stream.queue is queue:
                self._forget(stream, http_session)

        return StreamingResponse(
            events(), media_type="text/event-stream", headers={**_SSE_HEADERS, **headers}
        )

    async def _stateless(
        self,
        request: Request,
        message: dict[str, Any],
        method: str,
        params: dict[str, Any],
        meta: dict[str, Any],
        json_ok: bool,
        sse_ok: bool,
    ) -> Response:
        request_id = message["id"]
        refused = check_modern_request(request, request_id, method, params, meta)
        if refused is None and method == "tools/call" and isinstance(params.get("name"), str):
            entry = self.server.tool_entry(params["name"])
            if entry is not None and entry.header_params:
                refused = check_param_headers(
                    request, request_id, entry.definition(), params.get("arguments")
                )
        if refused is not None:
            return refused
        if method == "subscriptions/listen" and not sse_ok:  # its answer is a long SSE stream
            return _error(
                406, -32600, "subscriptions/listen needs Accept: text/event-stream", request_id
            )
        stream = ReplyStream(request_id, json_ok=json_ok, sse_ok=sse_ok)
        store = self.store

        async def send(msg: dict[str, Any]) -> None:
            await stream.send(msg, store)

        keyed = await self._keyed(request, message, meta, send)  # run at most once per key
        if isinstance(keyed, Response):
            return keyed
        session = self.server.new_session(stateless=True)
        self._identify(session, request)
        # 2026-07-28 removed ping: it is a 404 like any unknown method.
        peer = JSONRPCPeer(keyed, answering(session), answer_ping=False)
        session.peer = peer
        peer.feed(message, transport=stream)
        return await self._respond(stream, {}, None, stateless=(request, peer))

    async def _get(self, request: Request) -> Response:
        if "text/event-stream" not in request.headers.get("accept", ""):
            return Response("GET needs Accept: text/event-stream", status_code=406)
        session_id = request.headers.get("mcp-session-id")
        if session_id is None:
            return _error(400, -32600, "Bad Request: Mcp-Session-Id header is required")
        last_event_id = request.headers.get("last-event-id")
        found = self.shared is None or last_event_id is not None
        found = found or await self._load(session_id, request)
        http_session = self.sessions.get(session_id) if found else None
        if http_session is None:
            follow = getattr(self.store, "follow", None)  # another replica's stream
            followed = None
            if follow is not None and last_event_id is not None:
                followed = await follow(last_event_id, session_id)
            if followed is None:
                return _error(404, -32600, "Session not found: initialize a new session")
            replayed = (sse_event(event_id, data) async for event_id, data in followed)
            return StreamingResponse(replayed, media_type="text/event-stream", headers=_SSE_HEADERS)
        http_session.last_seen = time.monotonic()
        if last_event_id is not None:
            return await self._resume(http_session, last_event_id)
        queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        if http_session.standalone is not None:
            http_session.standalone.put_nowait(None)  # one standalone stream per session
        http_session.standalone = queue
        priming = f"retry: {self.retry_ms}\n\n".encode()

        async def events() -> AsyncIterator[bytes]:
            try:
                yield priming
                async for chunk in drain(queue):
                    yield chunk
            finally:
                if http_session.standalone is queue:
                    http_session.standalone = None

        return StreamingResponse(events(), media_type="text/event-stream", headers=_SSE_HEADERS)

    async def _resume(self, http_session: _HttpSession, last_event_id: str) -> Response:
        replay = await self.store.replay_after(last_event_id)
        if replay is None:
            return _error(404, -32600, f"Unknown Last-Event-ID {last_event_id!r}")
        stream_id, events = replay
        stream = http_session.streams.get(stream_id)
        if stream is None:  # unknown, fully delivered, or another session's stream
            return _error(404, -32600, f"Unknown Last-Event-ID {last_event_id!r}")
        queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        for event_id, data in events:
            queue.put_nowait(sse_event(event_id, data))
        if stream.queue is not None:
            stream.queue.put_nowait(None)  # one reader per stream: end an older connection
        stream.queue = queue
        if stream.finished:
            queue.put_nowait(None)

        async def replayed() -> AsyncIterator[bytes]:
            async for chunk in drain(queue):
                yield chunk
            if stream.finished and stream.queue is queue:
                self._forget(stream, http_session)

        return StreamingResponse(replayed(), media_type="text/event-stream", headers=_SSE_HEADERS)

    def _forget(self, stream: ReplyStream, http_session: _HttpSession | None) -> None:
        """A fully delivered stream needs no replay: drop it and its stored events."""
        if http_session is not None:
            http_session.streams.pop(stream.id, None)
        forget = getattr(self.store, "forget", None)
        if forget is not None:
            forget(stream.id)

    async def _delete(self, request: Request) -> Response:
        session_id = request.headers.get("mcp-session-id")
        if session_id is None:
            return _error(400, -32600, "Bad Request: Mcp-Session-Id header is required")
        if self.shared is not None:
            if not await self._load(session_id, request):
                return _error(404, -32600, "Session not found")
            await self.shared.delete(session_id)
        if session_id not in self.sessions:
            return _error(404, -32600, "Session not found")
        self._close(session_id)
        return Response(status_code=200)

    def _close(self, session_id: str) -> None:
        http_session = self.sessions.pop(session_id)
        http_session.peer.close()
        if http_session.standalone is not None:
            http_session.standalone.put_nowait(None)
        for stream in http_session.streams.values():
            stream.abandon()  # in-flight POSTs get their answer: none is coming
        self.server.sessions.discard(http_session.session)
        forget = getattr(self.store, "forget", None)
        if forget is not None:
            for stream_id in http_session.streams:
                forget(stream_id)

    def close_all(self) -> None:
        self.server.changes.end(lambda session: session.stateless)  # listen streams end cleanly
        for session_id in list(self.sessions):
            self._close(session_id)
