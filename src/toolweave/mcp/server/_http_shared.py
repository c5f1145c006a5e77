"""The Streamable HTTP endpoint's side of stored 2025-era sessions (`PostgresMCPSessionStore`).

With a session store every message of a session reloads the session's stored row (any replica
may have changed it, or ended it), a session another replica opened is loaded here on first
use, a client's answer to a request another replica sent is passed on to it, and a `tools/call`
is claimed under its request id before it runs, so a retried request id returns the recorded
response instead of running the tool a second time (see `postgres_sessions`). A 2026-era
`tools/call` with an idempotency key is claimed the same way under the caller's principal and
its key, in the session store or, without one, in this process (see `idempotency`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Protocol, cast

from starlette.responses import Response

from toolweave.mcp.server.event_store import ReplyStream
from toolweave.mcp.server.idempotency import (
    KEY_SCOPE,
    RUNNING,
    CallRecords,
    idempotency_key,
    ran_once_message,
    round_key,
)
from toolweave.mcp.server.postgres_sessions import STATE_METHODS
from toolweave.mcp.shared.errors import INVALID_PARAMS, INVALID_REQUEST, JSONRPCError
from toolweave.mcp.shared.jsonrpc import encode
from toolweave.storage.errors import StoreUnavailable

if TYPE_CHECKING:
    from starlette.requests import Request

    from toolweave.mcp.server.postgres_sessions import PostgresMCPSessionStore
    from toolweave.mcp.shared.jsonrpc import RequestContext, Send
    from toolweave.mcp.shared.peer import JSONRPCPeer

logger = logging.getLogger("toolweave.mcp.server")
FIRST_ID_SPAN = 2**48
"""A stored session's requests start at a random id below this, per replica."""


class _Session(Protocol):
    """A `ServerSession`, as far as this module uses one (it sits below `_session`)."""

    session_id: str | None
    principal: str | None

    def stored_state(self) -> dict[str, Any]: ...

    def restore(self, state: dict[str, Any]) -> None: ...

    async def handle(
        self, method: str, params: dict[str, Any], ctx: RequestContext
    ) -> dict[str, Any]: ...


class _Held(Protocol):
    """A session as the endpoint holds it (`_http._HttpSession`)."""

    session: Any  # a _Session
    peer: JSONRPCPeer


class _Endpoint(Protocol):
    """The `StreamableHTTPApp` this class is mixed into."""

    shared: PostgresMCPSessionStore | None
    records: CallRecords  # `shared`, or this process's
    idempotency_ttl: float
    sessions: dict[str, Any]  # session id -> _Held
    guard: Any  # its AccessGuard

    def _open(self, session_id: str) -> _Held: ...

    def _close(self, session_id: str) -> None: ...

    def _sweep_idle(self) -> None: ...

    def _identify(self, session: Any, request: Request) -> None: ...


def answering(session: _Session, shared: PostgresMCPSessionStore | None = None) -> Any:
    """`session.handle`, ending the request's reply stream when the request ends unanswered.

    A cancelled request (`notifications/cancelled`, a closed session) gets no JSON-RPC response,
    yet its POST is still waiting: without this the HTTP exchange would hang forever. With a
    session store, a request that changed the session is stored before it is answered.
    """

    async def handle(method: str, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        try:
            result = await session.handle(method, params, ctx)
        except asyncio.CancelledError:
            if isinstance(ctx.transport, ReplyStream):
                ctx.transport.abandon()
            raise
        if ctx.cancelled and isinstance(ctx.transport, ReplyStream):
            ctx.transport.abandon()  # the handler swallowed the cancellation: no answer is sent
        if shared is not None and method in STATE_METHODS:
            await shared.save(session)
        return result

    return handle


class SharedSessions:
    """Mixed into `StreamableHTTPApp`: what it does when `self.shared` (a session store) is set."""

    @property
    def _app(self) -> _Endpoint:
        return cast("_Endpoint", self)

    async def _load(self, session_id: str, request: Request) -> bool:
        """Whether the stored session is held here now (loaded when another replica opened
        it, refreshed from its row); False when it is unknown, ended, expired, or opened by
        another principal."""
        app = self._app
        assert app.shared is not None
        stored = await app.shared.load(session_id)
        local = app.sessions.get(session_id)
        if stored is None:
            if local is not None:
                app._close(session_id)  # ended on another replica, or expired
            return False
        principal, state = stored
        if principal != (app.guard.principal_of(request) or ""):
            return False
        if local is None:  # a copy here; copies unused for session_idle_timeout are dropped
            app._sweep_idle()
            local = app._open(session_id)
            app._identify(local.session, request)
        local.session.restore(state)
        return True

    async def _message(self, http_session: _Held, message: dict[str, Any]) -> Response:
        """A client's notification, or its answer to a server request: fed to the session here
        and, when the request it answers or cancels may be another replica's, passed on."""
        shared = self._app.shared
        peer = http_session.peer
        method = message.get("method")
        session_id = http_session.session.session_id or ""
        if shared is None or (method is None and peer.awaits(message.get("id"))):
            peer.feed(message)
        elif method is None:
            await shared.post(session_id, message)
        else:
            peer.feed(message)
            if method == "notifications/cancelled":
                await shared.post(session_id, message)
            elif method == "notifications/initialized":
                await shared.save(http_session.session)
        return Response(status_code=202)

    def _deliver(self, session_id: str, message: dict[str, Any]) -> None:
        """A message another replica passed on: for this replica's copy of the session, if any
        (a response to a request it did not send is ignored)."""
        local = self._app.sessions.get(session_id)
        if local is not None and (
            message.get("method") is not None or local.peer.awaits(message.get("id"))
        ):
            local.peer.feed(message)

    def _recording(self, session_id: str, message: dict[str, Any], send: Send) -> Send:
        """`send` for the request `message`; for a claimed `tools/call` (see `_claim`) it first
        records the response."""
        if self._app.shared is None or message.get("method") != "tools/call":
            return send
        return self._recorded(session_id, message["id"], send)

    def _recorded(self, scope: str, call_id: Any, send: Send) -> Send:
        """`send` that first records the response of the call claimed under (scope, call_id)
        (unrecorded when the store is down: a retry is then refused, and never runs the tool
        again)."""
        records = self._app.records

        async def record_then_send(reply: dict[str, Any]) -> None:
            if "method" not in reply:
                try:
                    await records.settle(scope, call_id, reply)
                except StoreUnavailable:
                    logger.warning("the outcome of call %r was not recorded", call_id)
            await send(reply)

        return record_then_send

    async def _keyed(
        self, request: Request, message: dict[str, Any], meta: dict[str, Any], send: Send
    ) -> Response | Send:
        """A 2026-era request's `send` (recording the response of a `tools/call` claimed under
        its idempotency key), or the answer of an earlier attempt with the same key (its
        recorded response, or a refusal while it has none)."""
        request_id = message["id"]
        if message.get("method") != "tools/call":
            return send
        try:
            key = idempotency_key(meta)
        except ValueError as exc:
            bad = {"jsonrpc": "2.0", "id": request_id}
            bad["error"] = JSONRPCError(INVALID_PARAMS, str(exc)).to_dict()
            return Response(encode(bad), status_code=400, media_type="application/json")
        if key is None:
            return send
        scope = KEY_SCOPE + (self._app.guard.principal_of(request) or "")
        call_id = round_key(key, message.get("params"))
        earlier = await self._app.records.claim(scope, call_id, self._app.idempotency_ttl)
        if earlier is None:
            return self._recorded(scope, call_id, send)
        if earlier == RUNNING:
            error = JSONRPCError(INVALID_REQUEST, ran_once_message(key))
            earlier = {"jsonrpc": "2.0", "error": error.to_dict()}
        assert isinstance(earlier, dict)
        return Response(encode({**earlier, "id": request_id}), media_type="application/json")

    async def _claim(self, http_session: _Held, message: dict[str, Any]) -> Response | None:
        """None when this `tools/call` may run; else the answer of an earlier attempt of the
        same request id (its recorded response, or a refusal while it has none)."""
        shared = self._app.shared
        assert shared is not None
        request_id = message["id"]
        earlier = await shared.claim(http_session.session.session_id or "", request_id)
        if earlier is None:
            return None
        if earlier == RUNNING:
            error = JSONRPCError(
                INVALID_REQUEST,
                f"request id {request_id!r} of this session was already received and has no "
                "outcome yet (still running, or its replica stopped while running it); it is "
                "not run twice: wait for its answer, or send a new request id to run it again",
            )
            earlier = {"jsonrpc": "2.0", "id": request_id, "error": error.to_dict()}
        return Response(encode(earlier), media_type="application/json")
