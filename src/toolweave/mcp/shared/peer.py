"""A symmetric JSON-RPC 2.0 peer shared by the MCP client and the MCP server toolkit.

Why our own: the protocol is small, and owning it lets one hot path (a dict lookup and a future
per response, one timer handle per request, no task per outgoing call) serve both sides at a
multiple of the official SDK's throughput while keeping full control over cancellation and
progress. Transports (stdio, Streamable HTTP) only move dicts; this module owns the semantics.

API (stable; only additive changes; the wire format is in `toolweave.mcp.shared.jsonrpc`):

- `JSONRPCPeer(send, on_request=None, on_notification=None, answer_ping=True)`:
  - `send`: `async (message: dict) -> None`, writes one message to the transport.
  - `on_request`: `async (method, params, ctx: RequestContext) -> dict` returns the `result`;
    raise `JSONRPCError` for an error answer (any other exception becomes `INTERNAL_ERROR` with
    its text). Each incoming request runs in its own task, so handlers may run concurrently.
    Without a handler every request is answered `METHOD_NOT_FOUND` (except `ping`, answered
    `{}` when `answer_ping`).
  - `on_notification`: `(method, params) -> None | Awaitable[None]`; an awaitable is run as a
    task (tasks start in arrival order). `notifications/progress` for our own requests and
    `notifications/cancelled` are consumed by the peer and not forwarded.
  - `peer.feed(message, *, send=None, transport=None)`: hand over one decoded incoming message
    (synchronous, never blocks). `send` overrides where the answer to that message and anything
    its handler sends through `ctx` goes (Streamable HTTP answers on the POST's own stream);
    `transport` is an opaque value exposed as `ctx.transport`. A JSON array (a batch) is
    answered with `INVALID_REQUEST`: MCP 2025-06-18 and later have no batches. So are, at
    once and with a null id, a request whose id is neither an integer nor a string and one
    reusing the id of a request still running.
  - `await peer.request(method, params=None, *, timeout=None, max_timeout=None,
    on_progress=None, send=None, clock=None) -> dict`: sends a request with the next integer id
    and waits for the matching response; `clock` (a `toolweave.tools.clock.RequestClock`)
    lets the sender stop the timeout while the request waits for a person. With `on_progress` a
    `progressToken` is added to `_meta` and each progress notification calls
    `on_progress(progress, total, message)` (sync or async) and restarts the `timeout` clock,
    but never past `max_timeout` seconds in total. On
    timeout it sends `notifications/cancelled` and raises `MCPTimeout`; if the awaiting task is
    cancelled it sends `notifications/cancelled` too and re-raises `CancelledError`. (The
    `initialize` request is never cancelled on the wire, as the spec requires.)
  - `await peer.notify(method, params=None, *, send=None)`.
    A `notifications/cancelled` from the peer naming one of *our* pending requests fails it
    with `MCPError` (2026-07-28 servers end `subscriptions/listen` streams that way).
  - `peer.close(exc=None)`: fails every pending request with `exc` (default
    `MCPConnectionClosed`), cancels running handler tasks; later requests fail at once.
  - `peer.pending` (count of requests awaiting answers), `peer.closed`.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from toolweave.mcp.shared.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    JSONRPCError,
    MCPConnectionClosed,
    MCPError,
    MCPTimeout,
)
from toolweave.mcp.shared.jsonrpc import (
    NotificationHandler,
    ProgressHandler,
    RequestContext,
    RequestHandler,
    Send,
    valid_id,
)
from toolweave.tools.clock import RequestClock

logger = logging.getLogger("toolweave.mcp.jsonrpc")


class _Pending:
    """One request awaiting its answer; its timer is a `ClockTimer` (a `RequestClock` stops it
    while the sender waits for a person)."""

    __slots__ = (
        "deadline",
        "expire",
        "future",
        "handle",
        "method",
        "on_progress",
        "timeout",
    )

    def __init__(
        self, future: asyncio.Future[dict[str, Any]], method: str, expire: Callable[[], None]
    ) -> None:
        self.future = future
        self.method = method
        self.expire = expire
        self.handle: asyncio.TimerHandle | None = None
        self.timeout: float | None = None
        self.deadline: float | None = None
        self.on_progress: ProgressHandler | None = None

    def stop(self) -> None:
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None

    def restart(self, stopped_for: float) -> None:
        if self.timeout is None or self.future.done():
            return
        loop = asyncio.get_running_loop()
        delay = self.timeout
        if self.deadline is not None:
            self.deadline += stopped_for
            delay = min(delay, self.deadline - loop.time())
        self.handle = loop.call_later(max(delay, 0.0), self.expire)


class JSONRPCPeer:
    """One end of a JSON-RPC connection: issues requests, answers requests, routes the rest."""

    def __init__(
        self,
        send: Send,
        on_request: RequestHandler | None = None,
        on_notification: NotificationHandler | None = None,
        *,
        answer_ping: bool = True,
        first_id: int = 0,
    ) -> None:
        self._send = send
        self.on_request = on_request
        self.on_notification = on_notification
        self.answer_ping = answer_ping
        self._next_id = first_id  # the first request gets first_id + 1
        self._pending: dict[Any, _Pending] = {}
        self._progress: dict[Any, Any] = {}  # progress token -> request id
        self._running: dict[Any, tuple[asyncio.Task[None], RequestContext]] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._closed: BaseException | None = None

    @property
    def pending(self) -> int:
        return len(self._pending)

    def awaits(self, request_id: Any) -> bool:
        """Whether a request this peer sent with `request_id` is waiting for its answer."""
        return type(request_id) is not bool and request_id in self._pending

    @property
    def closed(self) -> bool:
        return self._closed is not None

    # -- outgoing -------------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        max_timeout: float | None = None,
        on_progress: ProgressHandler | None = None,
        send: Send | None = None,
        clock: RequestClock | None = None,
    ) -> dict[str, Any]:
        if self._closed is not None:
            raise self._closed_error()
        self._next_id += 1
        request_id = self._next_id
        loop = asyncio.get_running_loop()
        pending = _Pending(loop.create_future(), method, partial(self._expire, request_id))
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if on_progress is not None:
            params = dict(params) if params else {}
            meta = dict(params.get("_meta") or {})
            meta["progressToken"] = request_id
            params["_meta"] = meta
            pending.on_progress = on_progress
            self._progress[request_id] = request_id
        if params is not None:
            message["params"] = params
        if timeout is not None:
            pending.timeout = timeout
            pending.handle = loop.call_later(timeout, self._expire, request_id)
            if max_timeout is not None:
                pending.deadline = loop.time() + max(max_timeout, timeout)
        self._pending[request_id] = pending
        if clock is not None:
            clock.attach(pending)
        try:
            await (send or self._send)(message)
            return await pending.future
        except MCPTimeout:
            await self._cancel_remote(request_id, method, "timeout", send)
            raise
        except asyncio.CancelledError:
            if pending.future.cancelled() or not pending.future.done():
                task = asyncio.ensure_future(
                    self._cancel_remote(request_id, method, "cancelled by the caller", send)
                )
                self._background.add(task)
                task.add_done_callback(self._background.discard)
            raise
        finally:
            if clock is not None:
                clock.detach()
            self._pending.pop(request_id, None)
            if on_progress is not None:
                self._progress.pop(request_id, None)
            if pending.handle is not None:
                pending.handle.cancel()

    async def notify(
        self, method: str, params: dict[str, Any] | None = None, *, send: Send | None = None
    ) -> None:
        if self._closed is not None:
            raise self._closed_error()
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await (send or self._send)(message)

    async def _cancel_remote(
        self, request_id: Any, method: str, reason: str, send: Send | None
    ) -> None:
        if method == "initialize" or self._closed is not None:
            return
        try:
            await self.notify(
                "notifications/cancelled",
                {"requestId": request_id, "reason": reason},
                send=send,
            )
        except Exception as exc:  # the connection may be gone; the caller's error stands
            logger.debug("could not send cancellation for %s: %s", request_id, exc)

    def _expire(self, request_id: Any) -> None:
        pending = self._pending.get(request_id)
        if pending is None or pending.future.done():
            return
        timeout = pending.timeout or 0.0
        pending.future.set_exception(
            MCPTimeout(
                f"MCP request {pending.method!r} timed out after {timeout:g}s; raise the "
                f"timeout (the `timeout` setting) if the server is just slow",
                timeout=timeout,
            )
        )

    def _on_progress(self, params: dict[str, Any]) -> bool:
        request_id = self._progress.get(params.get("progressToken"))
        pending = self._pending.get(request_id) if request_id is not None else None
        if pending is None:
            return False
        if pending.handle is not None and pending.timeout is not None:  # None while stopped
            pending.handle.cancel()
            loop = asyncio.get_running_loop()
            delay = pending.timeout
            if pending.deadline is not None:
                delay = min(delay, pending.deadline - loop.time())
            if delay <= 0:  # past the hard maximum: late progress must not postpone the end
                self._expire(request_id)
                return True
            pending.handle = loop.call_later(delay, self._expire, request_id)
        callback = pending.on_progress
        if callback is not None:
            try:
                outcome = callback(
                    params.get("progress", 0.0), params.get("total"), params.get("message")
                )
                if inspect.isawaitable(outcome):
                    self._spawn(outcome)
            except Exception:
                logger.exception("progress callback failed")
        return True

    # -- incoming -------------------------------------------------------------------------------

    def feed(self, message: Any, *, send: Send | None = None, transport: Any = None) -> None:
        """Handle one decoded incoming message (response, request or notification)."""
        if type(message) is not dict:
            if isinstance(message, list):
                error = JSONRPCError(INVALID_REQUEST, "JSON-RPC batches are not supported")
            else:
                error = JSONRPCError(INVALID_REQUEST, "A JSON-RPC message must be an object")
            self._reply(send, {"jsonrpc": "2.0", "id": None, "error": error.to_dict()})
            return
        method = message.get("method")
        if method is None:
            self._on_response(message)
            return
        params = message.get("params")
        if params is None:
            params = {}
        if "id" in message:
            self._on_request(message["id"], method, params, send, transport)
            return
        if type(params) is not dict:
            logger.warning("dropping notification %r with non-object params", method)
            return
        if method == "notifications/progress":
            if self._on_progress(params):
                return
        elif method == "notifications/cancelled":
            self._on_cancelled(params)
            return
        handler = self.on_notification
        if handler is None:
            return
        try:
            outcome = handler(method, params)
        except Exception:
            logger.exception("notification handler failed for %r", method)
            return
        if outcome is not None and inspect.isawaitable(outcome):
            self._spawn(outcome)

    def fail(self, request_id: Any, exc: MCPError) -> None:
        """Fail one pending request with `exc` (a transport that could not deliver it)."""
        pending = self._pending.get(request_id)
        if pending is not None and not pending.future.done():
            pending.future.set_exception(exc)

    def _on_response(self, message: dict[str, Any]) -> None:
        response_id = message.get("id")
        # `true` == 1 in Python: a boolean id must not answer request 1.
        pending = self._pending.get(response_id) if type(response_id) is not bool else None
        if pending is None or pending.future.done():
            if "id" not in message and "result" not in message and "error" not in message:
                logger.warning("dropping message without method, id or result: %.200r", message)
            elif message.get("id") is not None:
                logger.debug("dropping response to unknown request id %r", message.get("id"))
            elif "error" in message:
                logger.warning("peer reported an error: %r", message["error"])
            return
        if "result" in message:
            result = message["result"]
            pending.future.set_result(result if type(result) is dict else {"value": result})
            return
        error = message.get("error")
        if type(error) is dict:
            code = error.get("code")
            pending.future.set_exception(
                JSONRPCError(
                    code if type(code) is int else INTERNAL_ERROR,
                    str(error.get("message", "unknown error")),
                    error.get("data"),
                )
            )
        else:
            pending.future.set_exception(
                JSONRPCError(INVALID_REQUEST, f"malformed response: {message!r:.200}")
            )

    def _on_request(
        self, request_id: Any, method: Any, params: Any, send: Send | None, transport: Any
    ) -> None:
        reply_send = send or self._send
        if type(method) is not str or not valid_id(request_id):
            error = JSONRPCError(
                INVALID_REQUEST, "a request needs a string method and an integer or string id"
            )
            self._reply(send, {"jsonrpc": "2.0", "id": None, "error": error.to_dict()})
            return
        if type(params) is not dict:
            error = JSONRPCError(INVALID_PARAMS, f"params of {method!r} must be an object")
            self._reply(send, {"jsonrpc": "2.0", "id": request_id, "error": error.to_dict()})
            return
        if request_id in self._running:
            # Refused at once, with a null id: the answer must not look like the first one's.
            error = JSONRPCError(
                INVALID_REQUEST,
                f"request id {request_id!r} is already in flight in this session; use a new id",
            )
            self._reply(send, {"jsonrpc": "2.0", "id": None, "error": error.to_dict()})
            return
        if self._closed is not None:
            return
        meta = params.get("_meta")
        ctx = RequestContext(
            self, request_id, method, meta if type(meta) is dict else {}, reply_send, transport
        )
        task = asyncio.ensure_future(self._serve(method, params, ctx))
        self._running[request_id] = (task, ctx)

    async def _serve(self, method: str, params: dict[str, Any], ctx: RequestContext) -> None:
        response: dict[str, Any]
        try:
            if method == "ping" and self.answer_ping:
                result: dict[str, Any] = {}
            elif self.on_request is None:
                raise JSONRPCError(METHOD_NOT_FOUND, f"Method not found: {method}")
            else:
                result = await self.on_request(method, params, ctx)
            response = {"jsonrpc": "2.0", "id": ctx.id, "result": result}
        except asyncio.CancelledError:
            # Cancelled by the remote (it wants no answer) or by close().
            self._running.pop(ctx.id, None)
            return
        except JSONRPCError as exc:
            response = {"jsonrpc": "2.0", "id": ctx.id, "error": exc.to_dict()}
        except MCPError as exc:
            error = JSONRPCError(exc.code if exc.code is not None else INTERNAL_ERROR, str(exc))
            response = {"jsonrpc": "2.0", "id": ctx.id, "error": error.to_dict()}
        except Exception as exc:
            logger.exception("handler for %r failed", method)
            error = JSONRPCError(INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
            response = {"jsonrpc": "2.0", "id": ctx.id, "error": error.to_dict()}
        self._running.pop(ctx.id, None)
        if ctx.cancelled or self._closed is not None:
            return
        try:
            await ctx._send(response)
        except Exception as exc:
            logger.debug("could not send the answer to %r: %s", ctx.id, exc)

    def _on_cancelled(self, params: dict[str, Any]) -> None:
        request_id = params.get("requestId")
        running = self._running.get(request_id)
        if running is None:
            # 2026-07-28 stdio: a server ends a `subscriptions/listen` stream by cancelling it.
            pending = self._pending.get(request_id)
            if pending is not None and not pending.future.done():
                reason = params.get("reason") or "no reason given"
                pending.future.set_exception(
                    MCPError(f"the peer cancelled {pending.method!r}: {reason}")
                )
            return  # otherwise already answered or unknown: the spec says ignore
        task, ctx = running
        ctx.cancelled = True
        task.cancel()

    def _reply(self, send: Send | None, message: dict[str, Any]) -> None:
        if self._closed is None:
            self._spawn((send or self._send)(message))

    def _spawn(self, awaitable: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(awaitable)
        self._background.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.warning("background task failed: %r", task.exception())

    # -- lifecycle ------------------------------------------------------------------------------

    def _closed_error(self) -> MCPError:
        closed = self._closed
        if isinstance(closed, MCPError):
            return MCPConnectionClosed(closed.message)
        return MCPConnectionClosed(f"MCP connection closed: {closed}")

    def close(self, exc: BaseException | None = None) -> None:
        """Fail every pending request and stop every running handler; idempotent."""
        if self._closed is not None:
            return
        self._closed = exc if exc is not None else MCPConnectionClosed()
        for pending in list(self._pending.values()):
            if not pending.future.done():
                pending.future.set_exception(self._closed_error())
                # The awaiting caller will retrieve it; mark it so a caller that went away
                # does not produce "exception was never retrieved" noise.
                pending.future.exception()
            if pending.handle is not None:
                pending.handle.cancel()
        for task, ctx in list(self._running.values()):
            ctx.cancelled = True
            task.cancel()
        self._running.clear()
