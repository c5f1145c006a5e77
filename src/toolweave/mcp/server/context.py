"""The context an MCP tool handler receives: the tool core's `ToolContext` plus the MCP session.

It subclasses `ToolContext` so a parameter annotated `Context` is injected by the very same
schema machinery `@tool` uses (and hidden from the model), and so any toolweave `Tool` added to a
server gets a context it understands. Everything MCP-specific (logging to the client, sampling,
elicitation, the request's `_meta`) goes through the request it serves, on that request's own
stream.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolweave.mcp.shared.errors import MCPError
from toolweave.mcp.shared.jsonrpc import RequestContext
from toolweave.mcp.shared.probe import probe_requested
from toolweave.tools.context import ToolContext

if TYPE_CHECKING:
    from toolweave.mcp.server._session import ServerSession

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_LEVEL_RANK = {name: rank for rank, name in enumerate(LOG_LEVELS)}
DEFAULT_SAMPLING_TIMEOUT = 120.0
DEFAULT_ELICITATION_TIMEOUT = 600.0


class Context(ToolContext):
    """Per-call context of an MCP tool: progress, logging, sampling, elicitation, cancellation.

    `meta` is the request's `_meta`; `client_info` / `client_capabilities` / `protocol_version`
    describe the caller (from `initialize`, or per request in the stateless 2026-07-28 era).
    """

    __slots__ = ("_request", "_session", "meta", "probe", "tool_name")

    def __init__(
        self,
        session: ServerSession,
        request: RequestContext,
        *,
        tool_name: str | None = None,
        deps: Any = None,
        state: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(
            session_id=session.session_id,
            call_id=str(request.id),
            deps=deps,
            state=state,
            # Only when the caller asked for progress, so proxied tools skip it downstream too.
            progress_callback=request.report_progress
            if request.progress_token is not None
            else None,
        )
        self._session = session
        self._request = request
        self.meta: dict[str, Any] = request.meta
        self.probe = probe_requested(request.meta)  # a malformed probe key: invalid params
        self.tool_name = tool_name

    @property
    def request_id(self) -> Any:
        return self._request.id

    @property
    def client_info(self) -> dict[str, Any]:
        return self._session.client_info_for(self.meta)

    @property
    def principal(self) -> str | None:
        """Who the transport authenticated (see `ServerSession.principal`), or None."""
        return self._session.principal

    @property
    def remote_address(self) -> str | None:
        """The client's network address over HTTP; None over stdio."""
        return self._session.remote_address

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self._session.client_capabilities_for(self.meta)

    @property
    def protocol_version(self) -> str:
        return self._session.protocol_version_for(self.meta)

    # -- logging --------------------------------------------------------------------------------

    async def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        """Send `notifications/message` to the client if `level` passes its log level."""
        rank = _LEVEL_RANK.get(level)
        if rank is None:
            raise ValueError(f"log level {level!r} is not one of {', '.join(LOG_LEVELS)}")
        if rank < _LEVEL_RANK[self._session.log_level_for(self.meta)]:
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self._request.notify("notifications/message", params)

    async def debug(self, data: Any) -> None:
        await self.log("debug", data)

    async def info(self, data: Any) -> None:
        await self.log("info", data)

    async def warning(self, data: Any) -> None:
        await self.log("warning", data)

    async def error(self, data: Any) -> None:
        await self.log("error", data)

    # -- server-to-client requests --------------------------------------------------------------

    def _require(self, capability: str, what: str) -> None:
        if self._session.is_modern(self.meta):
            raise MCPError(
                f"{what} needs a session (protocol 2025-11-25 with initialize); this request is a "
                "stateless 2026-07-28 request, which has no server-to-client channel",
                code=-32021,
            )
        if capability not in self.client_capabilities:
            raise MCPError(
                f"the client did not declare the {capability!r} capability, so {what} is "
                "unavailable; check ctx.client_capabilities before asking",
                code=-32021,
                data={"requiredCapabilities": {capability: {}}},
            )

    async def sample(
        self,
        messages: str | list[dict[str, Any]],
        *,
        max_tokens: int = 1024,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: list[str] | None = None,
        model_preferences: dict[str, Any] | None = None,
        timeout: float = DEFAULT_SAMPLING_TIMEOUT,
    ) -> dict[str, Any]:
        """Ask the client's model for a completion (`sampling/createMessage`).

        `messages` is a prompt string or MCP sampling messages; returns the client's result
        (`role`, `content`, `model`, `stopReason`).
        """
        self._require("sampling", "sampling")
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        params: dict[str, Any] = {"messages": messages, "maxTokens": max_tokens}
        if system_prompt is not None:
            params["systemPrompt"] = system_prompt
        if temperature is not None:
            params["temperature"] = temperature
        if stop_sequences:
            params["stopSequences"] = stop_sequences
        if model_preferences is not None:
            params["modelPreferences"] = model_preferences
        return await self._request.request("sampling/createMessage", params, timeout=timeout)

    async def elicit(
        self,
        message: str,
        requested_schema: dict[str, Any],
        *,
        timeout: float = DEFAULT_ELICITATION_TIMEOUT,
    ) -> dict[str, Any]:
        """Ask the user for input (`elicitation/create`, form mode).

        `requested_schema` is a flat JSON Schema object of primitive properties; returns
        `{"action": "accept" | "decline" | "cancel", "content": {...}}`.
        """
        self._require("elicitation", "elicitation")
        if requested_schema.get("type") != "object":
            raise ValueError(
                "requested_schema must be a JSON Schema with type 'object' and flat primitive "
                "properties, e.g. {'type': 'object', 'properties': {'name': {'type': 'string'}}}"
            )
        params = {"message": message, "requestedSchema": requested_schema}
        return await self._request.request("elicitation/create", params, timeout=timeout)

    def close_sse_stream(self) -> None:
        """Close this request's SSE stream now (Streamable HTTP polling, SEP-1699).

        The client reconnects with `Last-Event-ID` and receives the rest from the event store;
        on other transports this does nothing.
        """
        closer = getattr(self._request.transport, "close_stream", None)
        if closer is not None:
            closer()


def is_probe(ctx: ToolContext | None) -> bool:
    """True when this call is a forge permission probe: report patterns, change nothing."""
    return isinstance(ctx, Context) and ctx.probe
