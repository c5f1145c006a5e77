"""The context an MCP tool handler receives: the tool core's `ToolContext` plus the MCP session.

It subclasses `ToolContext` so a parameter annotated `Context` is injected by the very same
schema machinery `@tool` uses (and hidden from the model), and so any toolweave `Tool` added to a
server gets a context it understands. Everything MCP-specific (logging to the client, sampling,
elicitation, the request's `_meta`) goes through the request it serves, on that request's own
stream.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolweave.mcp.server._declared import tasks_declared
from toolweave.mcp.server._input import InputChannel, RetryInputs, SessionInputs, input_key
from toolweave.mcp.shared.constants import CALLER_EXTRA, ELICITATION_COMPLETE
from toolweave.mcp.shared.errors import (
    METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY,
    JSONRPCError,
)
from toolweave.mcp.shared.jsonrpc import RequestContext
from toolweave.mcp.shared.probe import probe_requested
from toolweave.tools.calls import ROUNDS_EXTRA
from toolweave.tools.context import ProgressCallback, ToolContext

if TYPE_CHECKING:
    from toolweave.mcp.server._session import ServerSession

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_LEVEL_RANK = {name: rank for rank, name in enumerate(LOG_LEVELS)}
DEFAULT_SAMPLING_TIMEOUT = 120.0
DEFAULT_ELICITATION_TIMEOUT = 600.0


@dataclass(slots=True)
class _Route:
    """Where a request's progress and logs go: to its client, or (detached) to its task."""

    progress: ProgressCallback | None
    detached: bool = False


class Context(ToolContext):
    """Per-call context of an MCP tool: progress, logging, sampling, elicitation, cancellation.

    `meta` is the request's `_meta`; `client_info` / `client_capabilities` / `protocol_version`
    describe the caller (from `initialize`, or per request in the stateless 2026-07-28 era).
    """

    __slots__ = (
        "_asked",
        "_request",
        "_route",
        "_session",
        "inputs",
        "meta",
        "probe",
        "tool_name",
    )

    def __init__(
        self,
        session: ServerSession,
        request: RequestContext,
        *,
        tool_name: str | None = None,
        deps: Any = None,
        state: dict[str, Any] | None = None,
        inputs: InputChannel | None = None,
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
        #: Where questions go: the session (2025) or the retry's answers (2026, see `_input`).
        self.inputs: InputChannel = inputs or (
            RetryInputs() if session.is_modern(request.meta) else SessionInputs(request)
        )
        if isinstance(self.inputs, RetryInputs):  # the call's stages see which round this is
            self.extras[ROUNDS_EXTRA] = self.inputs.rounds
        self.extras[CALLER_EXTRA] = self  # where a proxied tool's downstream questions go
        self._asked = 0
        # Shared with the copies `for_call` makes: a detach reaches the copy the tool holds.
        self._route = _Route(self.progress_callback)

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
    def may_run_as_task(self) -> bool:
        """True when a call of a task-capable tool becomes a task if it runs long (SEP-2663): a
        2026-07-28 request from a client that declared the tasks extension."""
        return self._session.is_modern(self.meta) and tasks_declared(self.client_capabilities)

    @property
    def protocol_version(self) -> str:
        return self._session.protocol_version_for(self.meta)

    # -- logging --------------------------------------------------------------------------------

    async def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        """Send `notifications/message` to the client if `level` passes its log level."""
        rank = _LEVEL_RANK.get(level)
        if rank is None:
            raise ValueError(f"log level {level!r} is not one of {', '.join(LOG_LEVELS)}")
        wanted = self._session.log_level_for(self.meta)
        if self._route.detached or wanted is None or rank < _LEVEL_RANK.get(wanted, 0):
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

    # -- questions to the client (a request in a 2025 session, an input-required result in 2026)

    def _require(self, capability: str, what: str, feature: str | None = None) -> None:
        """Refuse (-32021, naming the capability) what the client did not declare it handles."""
        declared = self.client_capabilities.get(capability)
        if isinstance(declared, dict) and (feature is None or feature in declared):
            return
        needed: dict[str, Any] = {capability: {feature: {}} if feature else {}}
        raise JSONRPCError(
            MISSING_CLIENT_CAPABILITY,
            f"the client did not declare the {capability!r}"
            + (f" capability's {feature!r} feature" if feature else " capability")
            + f", so {what} is unavailable; check ctx.client_capabilities before asking",
            {"requiredCapabilities": needed},
        )

    async def _ask(
        self, method: str, params: dict[str, Any], key: str | None, timeout: float
    ) -> dict[str, Any]:
        self._asked += 1
        with self.waiting_for_person():  # the call's timeout does not count the person's wait
            return await self.inputs.ask(
                key or input_key(method, self._asked), method, params, timeout
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
        tools: list[dict[str, Any]] | None = None,
        tool_choice: dict[str, Any] | None = None,
        key: str | None = None,
        timeout: float = DEFAULT_SAMPLING_TIMEOUT,
    ) -> dict[str, Any]:
        """Ask the client's model for a completion (`sampling/createMessage`).

        `messages` is a prompt string or MCP sampling messages; returns the client's result
        (`role`, `content`, `model`, `stopReason`). `tools` / `tool_choice` let the client's
        model call tools (SEP-1577; the client must declare `sampling.tools`). `key` names the
        question in a 2026-07-28 input-required result (default `sampling-<n>`).
        """
        self._require("sampling", "sampling")
        if tools is not None:
            self._require("sampling", "sampling with tools", "tools")
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
        if tools is not None:
            params["tools"] = tools
        if tool_choice is not None:
            params["toolChoice"] = tool_choice
        return await self._ask("sampling/createMessage", params, key, timeout)

    async def elicit(
        self,
        message: str,
        requested_schema: dict[str, Any],
        *,
        key: str | None = None,
        timeout: float = DEFAULT_ELICITATION_TIMEOUT,
    ) -> dict[str, Any]:
        """Ask the user for input (`elicitation/create`, form mode).

        `requested_schema` is a flat JSON Schema object of primitive properties; returns
        `{"action": "accept" | "decline" | "cancel", "content": {...}}`. `key` names the
        question in a 2026-07-28 input-required result (default `elicitation-<n>`).
        """
        self._require("elicitation", "elicitation")
        if requested_schema.get("type") != "object":
            raise ValueError(
                "requested_schema must be a JSON Schema with type 'object' and flat primitive "
                "properties, e.g. {'type': 'object', 'properties': {'name': {'type': 'string'}}}"
            )
        params = {"message": message, "requestedSchema": requested_schema}
        return await self._ask("elicitation/create", params, key, timeout)

    async def elicit_url(
        self,
        message: str,
        url: str,
        *,
        elicitation_id: str | None = None,
        key: str | None = None,
        timeout: float = DEFAULT_ELICITATION_TIMEOUT,
    ) -> dict[str, Any]:
        """Send the user to a web page (`elicitation/create`, URL mode, SEP-1036): for what must
        not pass through the client (a payment, an OAuth consent). Returns the client's
        `{"action": ...}`; the page's outcome reaches the server out of band."""
        self._require("elicitation", "URL-mode elicitation", "url")
        if not url.startswith(("https://", "http://")):
            raise ValueError(f"url must be an http(s) URL the user can open, not {url!r}")
        params = {
            "mode": "url",
            "message": message,
            "url": url,
            "elicitationId": elicitation_id or uuid.uuid4().hex,
        }
        return await self._ask("elicitation/create", params, key, timeout)

    async def ask_caller(
        self, method: str, params: dict[str, Any], key: str | None = None
    ) -> dict[str, Any]:
        """Put a question a downstream server asked during this call (a gateway's proxied tool)
        to this call's client, as sent: an `elicitation/create` in form or URL mode, a
        `sampling/createMessage` or a `roots/list`, named `key` in an input-required round.
        Refused (-32021, naming it) when the client did not declare the capability it needs."""
        if method == "elicitation/create":
            url = params.get("mode") == "url"
            what = "a downstream server's " + ("URL-mode elicitation" if url else "elicitation")
            self._require("elicitation", what, "url" if url else None)
            return await self._ask(method, params, key, DEFAULT_ELICITATION_TIMEOUT)
        if method == "sampling/createMessage":
            tools = "tools" in params
            what = "a downstream server's sampling" + (" with tools" if tools else "")
            self._require("sampling", what, "tools" if tools else None)
        elif method == "roots/list":
            self._require("roots", "a downstream server's roots request")
        else:
            raise JSONRPCError(METHOD_NOT_FOUND, f"{method} is not forwarded to the caller")
        return await self._ask(method, params, key, DEFAULT_SAMPLING_TIMEOUT)

    async def notify_caller(self, method: str, params: dict[str, Any]) -> None:
        """Pass a downstream server's URL-mode completion (`notifications/elicitation/complete`)
        about this call to this call's client, on the call's own request; dropped for a
        2026-07-28 request, whose revision has no such notification."""
        if method != ELICITATION_COMPLETE:
            raise ValueError(f"{method} is not passed on to the caller")
        if not self._session.is_modern(self.meta):
            await self._request.notify(method, params)

    async def complete_elicitation(self, elicitation_id: str) -> None:
        """Tell the client that the out-of-band interaction of a URL-mode elicitation
        (`elicit_url(..., elicitation_id=...)`) finished (`notifications/elicitation/complete`,
        SEP-1036), on this call's request: send it before the tool returns. A 2026-07-28 request
        gets nothing: that revision removed the notification (its client retries the call once
        the person is done, and the retry carries the answer)."""
        await self.notify_caller(ELICITATION_COMPLETE, {"elicitationId": elicitation_id})

    async def list_roots(
        self, *, key: str | None = None, timeout: float = DEFAULT_SAMPLING_TIMEOUT
    ) -> list[dict[str, Any]]:
        """The client's roots (`roots/list`): the folders it lets this server work in."""
        self._require("roots", "listing roots")
        result = await self._ask("roots/list", {}, key, timeout)
        roots = result.get("roots")
        return list(roots) if isinstance(roots, list) else []

    def detach(self, progress: ProgressCallback) -> None:
        """The call became a task: its request is answered, so progress goes to `progress` (the
        task's status message) and log messages are dropped."""
        self._route.detached = True
        self._route.progress = self.progress_callback = progress

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Tell the client how far the tool got (the task's status once the call is a task)."""
        self.progress_callback = self._route.progress
        await super().report_progress(progress, total, message)

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
