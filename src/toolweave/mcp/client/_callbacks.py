"""What a client does for its server: roots, sampling, elicitation and log messages.

Kept apart from the connection logic because both eras route here: in 2025-11-25 the server
sends these as requests in the middle of a call, in 2026-07-28 they arrive batched as the
`inputRequests` of an `input_required` result (multi round-trip requests) and the answers go
back with the retried request. Either way the host's callbacks see the same plain params dicts.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from toolweave.mcp.client.protocol import CLIENT_NAME
from toolweave.mcp.client.upstream import FORWARDED_METHODS, CallerRoutes
from toolweave.mcp.shared.constants import TASKS_EXTENSION
from toolweave.mcp.shared.errors import METHOD_NOT_FOUND, JSONRPCError

ServerRequestHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]

LOG_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


class ClientCallbacks:
    """The host's answers to server-initiated requests, and the capabilities they imply."""

    def __init__(
        self,
        sampling_handler: ServerRequestHandler | None,
        elicitation_handler: ServerRequestHandler | None,
        roots: list[dict[str, Any]] | None,
        server_log: logging.Logger,
        routes: CallerRoutes | None = None,
    ) -> None:
        self.sampling_handler = sampling_handler
        self.elicitation_handler = elicitation_handler
        self.roots = roots
        self.server_log = server_log
        self.routes = routes
        """Set when questions go to the caller of the call they belong to (a gateway)."""

    def capabilities(self, *, session: bool = False) -> dict[str, Any]:
        """What the client declares: per request (2026-07-28), or for a whole 2025-11-25
        session (`session`). A gateway forwards roots requests only per request: a session's
        roots would be one caller's folders taken as every caller's by a shared server."""
        capabilities: dict[str, Any] = {"extensions": {TASKS_EXTENSION: {}}}
        if self.roots is not None:
            capabilities["roots"] = {"listChanged": True}
        if self.sampling_handler is not None:
            capabilities["sampling"] = {}
        if self.elicitation_handler is not None or self.routes is not None:
            capabilities["elicitation"] = {"form": {}, "url": {}}
        if self.routes is not None:  # a gateway's: the caller is asked (or refuses, -32021)
            capabilities["sampling"] = {"tools": {}}
            if not session:
                capabilities.setdefault("roots", {})
        return capabilities

    async def dispatch(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Answer one server request; unknown or unsupported ones get METHOD_NOT_FOUND."""
        handler: ServerRequestHandler | None = None
        if self.routes is not None and method in FORWARDED_METHODS:
            return await self.routes.ask(method, params)
        if method == "roots/list" and self.roots is not None:
            return {"roots": list(self.roots)}
        if method == "sampling/createMessage":
            handler = self.sampling_handler
        elif method == "elicitation/create":
            handler = self.elicitation_handler
        elif method == "ping":
            return {}
        if handler is None:
            raise JSONRPCError(METHOD_NOT_FOUND, f"client {CLIENT_NAME} does not handle {method}")
        return await handler(params)

    async def answer_inputs(self, requests: dict[str, Any]) -> dict[str, Any]:
        """Fulfil the `inputRequests` of an `input_required` result, concurrently."""

        async def one(raw: Any) -> dict[str, Any]:
            raw = raw if isinstance(raw, dict) else {}
            params = raw.get("params")
            return await self.dispatch(
                str(raw.get("method")), params if isinstance(params, dict) else {}
            )

        keys = list(requests)
        answers = await asyncio.gather(*(one(requests[k]) for k in keys))
        return dict(zip(keys, answers, strict=True))

    def log_message(self, params: dict[str, Any]) -> None:
        """A `notifications/message` from the server, into Python logging at its level."""
        level = LOG_LEVELS.get(str(params.get("level")), logging.INFO)
        origin = params.get("logger")
        self.server_log.log(level, "%s%s", f"[{origin}] " if origin else "", params.get("data"))


def elicitation_defaults(params: dict[str, Any]) -> dict[str, Any]:
    """The schema's defaults of an `elicitation/create` form (SEP-1034), for a form to show
    pre-filled. The client sends only what the handler returns: a default reaches the server
    only when the person's form submitted it, as the official SDK does."""
    schema = params.get("requestedSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return {}
    return {
        key: spec["default"]
        for key, spec in properties.items()
        if isinstance(spec, dict) and "default" in spec
    }
