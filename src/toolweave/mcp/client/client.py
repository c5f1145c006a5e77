"""`MCPClient`: one connection to one MCP server, over stdio or Streamable HTTP.

The client owns the MCP semantics on top of the JSON-RPC peer: era negotiation, the `_meta`
envelope of the stateless revision (and its multi-round-trip input requests), paginated and
cached listings, tool-result conversion with output-schema validation, and the callbacks a server
may invoke (sampling, elicitation, roots). Transports only move messages, so reconnecting is just
"new peer, same transport settings".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

from toolweave.mcp.client import protocol
from toolweave.mcp.client._callbacks import ClientCallbacks, ServerRequestHandler
from toolweave.mcp.client._features import ServerFeatures
from toolweave.mcp.client._param_headers import param_headers
from toolweave.mcp.client.models import MCPToolInfo
from toolweave.mcp.client.upstream import (
    DEFAULT_HELD_CALL_TTL,
    DEFAULT_MAX_HELD_CALLS,
    DEFAULT_MAX_HELD_CALLS_PER_CLIENT,
    CallerRoutes,
)
from toolweave.mcp.shared.constants import (
    ELICITATION_COMPLETE,
    PROMPTS_CHANGED,
    RESOURCES_CHANGED,
    TOOLS_CHANGED,
)
from toolweave.mcp.shared.errors import MCPConnectionClosed, MCPError
from toolweave.mcp.shared.jsonrpc import ProgressHandler, RequestContext
from toolweave.mcp.shared.peer import JSONRPCPeer
from toolweave.mcp.shared.trace_context import trace_meta
from toolweave.tools.clock import RequestClock

if TYPE_CHECKING:
    import httpx


#: Default seconds a request may wait for its answer (progress restarts the clock).
DEFAULT_TIMEOUT = 30.0
#: Default hard maximum for one request, however much progress it reports.
DEFAULT_MAX_TIMEOUT = 600.0
#: Most multi-round-trip (`input_required`) rounds one request may take.
MAX_INPUT_ROUNDS = 8

NotificationListener = Callable[[str, dict[str, Any]], Awaitable[None] | None]

logger = logging.getLogger("toolweave.mcp.client")


class Transport(Protocol):
    async def start(
        self, on_message: Callable[[Any], None], on_close: Callable[[MCPError], None]
    ) -> None: ...

    async def send(self, message: dict[str, Any]) -> None: ...

    async def close(self) -> None: ...


class MCPClient(ServerFeatures):
    """A connection to one MCP server. Use `MCPClient.stdio(...)` or `MCPClient.http(...)`.

    `async with client:` connects and negotiates; every request method raises `MCPError` on
    protocol or transport failure and `MCPTimeout` when the server does not answer in time.
    `forward_questions=True` (a gateway's downstream clients) sends the elicitations a call's
    server asks to the caller the call runs for (`toolweave.mcp.client.upstream`), holding at
    most `max_held_calls` calls open between a 2026 caller's rounds (`max_held_calls_per_client`
    for one caller), each for at most `held_call_ttl` seconds.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        name: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_timeout: float = DEFAULT_MAX_TIMEOUT,
        protocol_mode: str = "auto",
        discover_timeout: float = protocol.DEFAULT_DISCOVER_TIMEOUT,
        sampling_handler: ServerRequestHandler | None = None,
        elicitation_handler: ServerRequestHandler | None = None,
        roots: list[dict[str, Any]] | None = None,
        on_notification: NotificationListener | None = None,
        on_disconnect: Callable[[MCPError], None] | None = None,
        forward_questions: bool = False,
        max_held_calls: int = DEFAULT_MAX_HELD_CALLS,
        held_call_ttl: float = DEFAULT_HELD_CALL_TTL,
        max_held_calls_per_client: int = DEFAULT_MAX_HELD_CALLS_PER_CLIENT,
    ) -> None:
        if protocol_mode not in ("auto", "modern", "legacy"):
            raise ValueError(
                f"protocol_mode must be 'auto', 'modern' or 'legacy', not {protocol_mode!r}"
            )
        self.transport = transport
        self.name = name or getattr(transport, "name", None) or "mcp"
        self.timeout = timeout
        self.max_timeout = max_timeout
        self.protocol_mode = protocol_mode
        self.discover_timeout = discover_timeout
        """Seconds the server has to start and complete the handshake (a slow 2026 server
        answers the fallback `initialize` with -32022 and is asked again within it)."""
        self.on_notification = on_notification
        self.on_disconnect = on_disconnect
        """Called when an established connection drops by itself (the server exited, the
        stream broke), never for `close()`: what `MCPManager` reconnects on."""
        self._peer: JSONRPCPeer | None = None
        self._negotiated: protocol.Negotiated | None = None
        self._tools: list[MCPToolInfo] | None = None
        self._tools_by_name: dict[str, MCPToolInfo] = {}
        self._last_listed: dict[str, MCPToolInfo] = {}
        self._list_expiry: dict[str, float] = {}
        self._lists: dict[str, list[dict[str, Any]]] = {}
        self._log_level: str | None = None
        self._connect_lock = asyncio.Lock()
        self._listener: asyncio.Task[None] | None = None
        self.callbacks = ClientCallbacks(
            sampling_handler,
            elicitation_handler,
            roots,
            logging.getLogger(f"toolweave.mcp.server.{self.name}"),
            CallerRoutes(max_held_calls, held_call_ttl, max_held_calls_per_client)
            if forward_questions
            else None,
        )
        self.tools_version = 0

    # -- construction ---------------------------------------------------------------------------

    @classmethod
    def stdio(
        cls,
        command: str,
        args: list[str] | None = None,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        *,
        name: str | None = None,
        max_line_bytes: int | None = None,
        inherit_env: bool = False,
        **options: Any,
    ) -> MCPClient:
        """A client that runs `command args...` and speaks MCP over its stdin/stdout.

        The server gets a minimal environment (`HOME`, `PATH`, `SHELL`, `TERM`, `USER`,
        `LOGNAME` and the locale) plus `env`; `inherit_env=True` passes the whole environment.
        """
        from toolweave.mcp.client._stdio import DEFAULT_MAX_LINE_BYTES, StdioTransport

        transport = StdioTransport(
            command,
            list(args or []),
            env=env,
            cwd=cwd,
            inherit_env=inherit_env,
            max_line_bytes=max_line_bytes or DEFAULT_MAX_LINE_BYTES,
            name=name,
        )
        return cls(transport, name=name, timeout=timeout, **options)

    @classmethod
    def http(
        cls,
        url: str,
        headers: dict[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        *,
        name: str | None = None,
        auth: httpx.Auth | None = None,
        legacy_sse_fallback: bool = True,
        max_message_bytes: int | None = None,
        **options: Any,
    ) -> MCPClient:
        """A client for a Streamable HTTP endpoint; `auth` is any `httpx.Auth`, e.g. an
        `OAuthClientProvider`. With `legacy_sse_fallback`, a url ending in `/sse` that answers
        405 to the POST is connected to again over the legacy HTTP+SSE transport. An answer
        longer than `max_message_bytes` (default 64 MiB, as `max_line_bytes` over stdio) fails
        the request it answers, read no further."""
        from toolweave.mcp.client._http import HTTPTransport

        transport = HTTPTransport(
            url,
            headers=headers,
            auth=auth,
            timeout=timeout,
            name=name,
            legacy_sse_fallback=legacy_sse_fallback,
            max_message_bytes=max_message_bytes,
        )
        return cls(transport, name=name, timeout=timeout, **options)

    @classmethod
    def sse(
        cls,
        url: str,
        headers: dict[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        *,
        name: str | None = None,
        auth: httpx.Auth | None = None,
        max_message_bytes: int | None = None,
        **options: Any,
    ) -> MCPClient:
        """A client for a legacy HTTP+SSE endpoint (MCP 2024-11-05, `"type": "sse"`) as the SDK's
        `sse_client`; an event longer than `max_message_bytes` (64 MiB) closes the stream."""
        from toolweave.mcp.client._sse_legacy import LegacySSETransport

        transport = LegacySSETransport(
            url,
            headers=headers,
            auth=auth,
            timeout=timeout,
            name=name,
            max_message_bytes=max_message_bytes,
        )
        return cls(transport, name=name, timeout=timeout, **options)

    # -- lifecycle ------------------------------------------------------------------------------

    async def __aenter__(self) -> MCPClient:
        await self.connect()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def connected(self) -> bool:
        return self._peer is not None and not self._peer.closed and self._negotiated is not None

    async def connect(self) -> None:
        """Start the transport and negotiate; a no-op when already connected. An HTTP server
        that speaks only the legacy SSE transport is connected to again over that."""
        async with self._connect_lock:
            try:
                await self._connect()
            except MCPError:
                legacy = getattr(self.transport, "legacy_transport", None)
                replacement = legacy() if legacy is not None else None
                if replacement is None:
                    raise
                logger.info("%s: POST answered 405; using the legacy SSE transport", self.name)
                self.transport = replacement
                await self._connect()

    async def _connect(self) -> None:
        if self.connected:
            return
        stale, self._peer = self._peer, None
        if stale is not None:  # the server died: release its process, pipes or HTTP client
            stale.close()
            await self.transport.close()
        peer = JSONRPCPeer(self.transport.send, self._serve, self._notified)
        self._peer = peer
        self._negotiated = None
        await self.transport.start(peer.feed, self._closed_by_transport(peer))
        if hasattr(self.transport, "reinitialize"):
            self.transport.reinitialize = self._renegotiate
        if hasattr(self.transport, "fail_request"):
            self.transport.fail_request = peer.fail
        if hasattr(self.transport, "mirrored_headers"):
            self.transport.mirrored_headers = self._mirrored_headers
        try:
            await self._negotiate(peer)
        except BaseException:
            peer.close()
            await self.transport.close()
            raise
        self._listen()

    def _closed_by_transport(self, peer: JSONRPCPeer) -> Callable[[MCPError], None]:
        def on_close(exc: MCPError) -> None:
            was_up = not peer.closed and self._peer is peer and self._negotiated is not None
            peer.close(exc)
            if was_up and self.on_disconnect is not None:
                self.on_disconnect(exc)

        return on_close

    def _listen(self) -> None:
        """In the stateless era list changes arrive only on a `subscriptions/listen` stream."""
        negotiated = self._negotiated
        if negotiated is None or not negotiated.modern:
            return
        wanted = {
            key: True
            for capability, key in (
                ("tools", "toolsListChanged"),
                ("prompts", "promptsListChanged"),
                ("resources", "resourcesListChanged"),
            )
            if isinstance(negotiated.capabilities.get(capability), dict)
            and negotiated.capabilities[capability].get("listChanged")
        }
        if wanted:
            self._listener = asyncio.ensure_future(self._subscription(wanted))

    async def _subscription(self, wanted: dict[str, bool]) -> None:
        try:
            await self._send_request("subscriptions/listen", {"notifications": wanted}, None, None)
        except MCPError as exc:  # the stream ended (server restart, close); lists stay cached
            self._invalidate()
            self.callbacks.server_log.debug("subscriptions/listen ended: %s", exc)

    async def _negotiate(self, peer: JSONRPCPeer) -> None:
        async def request(method: str, params: dict[str, Any], timeout: float | None) -> Any:
            return await peer.request(method, params, timeout=timeout or self.timeout)

        async def notify(method: str, params: dict[str, Any] | None) -> None:
            await peer.notify(method, params)

        negotiated = await protocol.negotiate(
            request,
            notify,
            self.callbacks.capabilities(session=True),
            mode=self.protocol_mode,
            timeout=self.timeout,
            probe_may_go_unanswered=not getattr(self.transport, "answers_every_request", False),
            discover_timeout=self.discover_timeout,
        )
        self._negotiated = negotiated
        if hasattr(self.transport, "protocol_version"):
            self.transport.protocol_version = negotiated.protocol_version
        self._invalidate()

    async def _renegotiate(self) -> None:
        """Called by the HTTP transport when the server forgot our session (HTTP 404)."""
        if self._peer is not None:
            await self._negotiate(self._peer)

    async def close(self) -> None:
        peer, self._peer = self._peer, None  # first: a close we asked for is no disconnect
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await listener
        if peer is not None:
            peer.close()
        if self.callbacks.routes is not None:
            self.callbacks.routes.close()  # held calls end with their connection
        await self.transport.close()

    async def reconnect(self) -> None:
        """Drop the connection (killing a stdio server) and connect again from scratch."""
        await self.close()
        await self.connect()

    # -- what the server said about itself -----------------------------------------------------

    def _require(self) -> protocol.Negotiated:
        if self._negotiated is None:
            raise MCPConnectionClosed(
                f"MCP client {self.name!r} is not connected; use `async with client:` or "
                f"`await client.connect()` first"
            )
        return self._negotiated

    @property
    def server_info(self) -> protocol.ServerInfo:
        return self._require().server_info

    @property
    def protocol_version(self) -> str:
        return self._require().protocol_version

    @property
    def capabilities(self) -> dict[str, Any]:
        return self._require().capabilities

    @property
    def instructions(self) -> str | None:
        return self._require().instructions

    @property
    def server_pid(self) -> int | None:
        pid = getattr(self.transport, "pid", None)
        return pid if isinstance(pid, int) else None

    # -- requests -------------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressHandler | None = None,
        clock: RequestClock | None = None,
    ) -> dict[str, Any]:
        """Send any request and return its raw result (the typed methods build on this); a
        `clock` lets the caller stop the timeout while it waits for a person."""
        call_timeout = timeout if timeout is not None else self.timeout
        return await self._send_request(method, params, call_timeout, on_progress, clock)

    async def _send_request(
        self,
        method: str,
        params: dict[str, Any] | None,
        call_timeout: float | None,
        on_progress: ProgressHandler | None,
        clock: RequestClock | None = None,
    ) -> dict[str, Any]:
        negotiated = self._require()
        peer = self._peer
        if peer is None:
            raise MCPConnectionClosed(f"MCP client {self.name!r} is closed")
        trace = trace_meta()  # the caller's OpenTelemetry span, when tracing is on
        if trace:
            params = {**(params or {}), "_meta": {**trace, **((params or {}).get("_meta") or {})}}
        bounds: dict[str, Any] = {"timeout": call_timeout, "max_timeout": self.max_timeout}
        bounds.update(on_progress=on_progress, clock=clock)
        if not negotiated.modern:
            return await peer.request(method, params, **bounds)
        params = dict(params or {})
        for _round in range(MAX_INPUT_ROUNDS):
            meta = dict(params.get("_meta") or {})
            meta.update(
                protocol.modern_meta(
                    negotiated.protocol_version, self.callbacks.capabilities(), self._log_level
                )
            )
            params["_meta"] = meta
            result = await peer.request(method, params, **bounds)
            if result.get("resultType", "complete") != "input_required":
                return result
            params.pop("inputResponses", None)
            requests = result.get("inputRequests")
            if isinstance(requests, dict) and requests:
                params["inputResponses"] = await self.callbacks.answer_inputs(requests)
            if "requestState" in result:
                params["requestState"] = result["requestState"]
            else:
                params.pop("requestState", None)
        raise MCPError(
            f"{method} still asked for input after {MAX_INPUT_ROUNDS} rounds; the server "
            f"{self.name!r} is looping"
        )

    def _mirrored_headers(self, message: dict[str, Any]) -> dict[str, str]:
        """The `Mcp-Param-*` headers of a `tools/call`, from the listed tool's declarations."""
        params = message.get("params")
        if message.get("method") != "tools/call" or not isinstance(params, dict):
            return {}
        info = self._last_listed.get(str(params.get("name")))
        arguments = params.get("arguments")
        if info is None or not info.header_bindings or not isinstance(arguments, dict):
            return {}
        return param_headers(info.header_bindings, arguments)

    # -- what the server asks of us -------------------------------------------------------------

    async def _serve(
        self, method: str, params: dict[str, Any], ctx: RequestContext
    ) -> dict[str, Any]:
        return await self.callbacks.dispatch(method, params)

    def _notified(self, method: str, params: dict[str, Any]) -> Awaitable[None] | None:
        if method == TOOLS_CHANGED:
            self._invalidate()
        elif method == RESOURCES_CHANGED:
            self._lists.pop("resources/list", None)
            self._lists.pop("resources/templates/list", None)
        elif method == PROMPTS_CHANGED:
            self._lists.pop("prompts/list", None)
        elif method == "notifications/message":
            self.callbacks.log_message(params)
        elif method == ELICITATION_COMPLETE and self.callbacks.routes is not None:
            return self._relay(method, params)  # a gateway's: to the caller it completes
        if self.on_notification is not None:
            return self.on_notification(method, params)
        return None

    async def _relay(self, method: str, params: dict[str, Any]) -> None:
        assert self.callbacks.routes is not None
        await self.callbacks.routes.relay(method, params)
        if self.on_notification is not None:
            listened = self.on_notification(method, params)
            if listened is not None:
                await listened

    def _invalidate(self) -> None:
        """Forget the listings (tools, and the `ttlMs`-cached resources and prompts)."""
        self._lists.clear()
        self._tools = None
        self._tools_by_name = {}
        self.tools_version += 1
