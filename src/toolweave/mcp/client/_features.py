"""The request/response half of `MCPClient`: paginated listings, resources, prompts,
completion, logging level and ping.

These methods are plain "send one request, convert the answer" code with no connection state of
their own, so they live apart from the connection, era and tool logic in `client.py`; `MCPClient`
inherits them. They rely only on `request()` and `_require()`, declared below for the type
checker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolweave.mcp.client._callbacks import LOG_LEVELS
from toolweave.mcp.client.models import (
    MCPPrompt,
    MCPPromptMessage,
    MCPPromptResult,
    MCPResource,
    MCPResourceTemplate,
    content_from_wire,
    resource_from_wire,
)
from toolweave.tools.result import ResourceContent

if TYPE_CHECKING:
    from toolweave.mcp.client import protocol
    from toolweave.mcp.shared.jsonrpc import ProgressHandler


class ServerFeatures:
    """Listings and the non-tool server features, on top of `request()`."""

    _log_level: str | None

    if TYPE_CHECKING:

        async def request(
            self,
            method: str,
            params: dict[str, Any] | None = None,
            *,
            timeout: float | None = None,
            on_progress: ProgressHandler | None = None,
        ) -> dict[str, Any]: ...

        def _require(self) -> protocol.Negotiated: ...

    async def _paginate(self, method: str, key: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            result = await self.request(method, {"cursor": cursor} if cursor else None)
            page = result.get(key)
            if isinstance(page, list):
                items.extend(item for item in page if isinstance(item, dict))
            next_cursor = result.get("nextCursor")
            if not isinstance(next_cursor, str) or not next_cursor or next_cursor in seen:
                return items
            seen.add(next_cursor)
            cursor = next_cursor

    async def list_resources(self) -> list[MCPResource]:
        return [
            MCPResource.from_wire(r) for r in await self._paginate("resources/list", "resources")
        ]

    async def list_resource_templates(self) -> list[MCPResourceTemplate]:
        raw = await self._paginate("resources/templates/list", "resourceTemplates")
        return [MCPResourceTemplate.from_wire(r) for r in raw]

    async def read_resource(self, uri: str) -> list[ResourceContent]:
        result = await self.request("resources/read", {"uri": uri})
        contents = result.get("contents")
        return (
            [resource_from_wire(c) for c in contents if isinstance(c, dict)]
            if isinstance(contents, list)
            else []
        )

    async def subscribe_resource(self, uri: str) -> None:
        await self.request("resources/subscribe", {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        await self.request("resources/unsubscribe", {"uri": uri})

    async def list_prompts(self) -> list[MCPPrompt]:
        return [MCPPrompt.from_wire(p) for p in await self._paginate("prompts/list", "prompts")]

    async def get_prompt(self, name: str, args: dict[str, str] | None = None) -> MCPPromptResult:
        params: dict[str, Any] = {"name": name}
        if args:
            params["arguments"] = {k: str(v) for k, v in args.items()}
        result = await self.request("prompts/get", params)
        messages = [
            MCPPromptMessage(
                role=str(m.get("role", "user")), content=content_from_wire(m.get("content"))
            )
            for m in result.get("messages") or []
            if isinstance(m, dict)
        ]
        description = result.get("description")
        return MCPPromptResult(messages, description if isinstance(description, str) else None)

    async def complete(
        self,
        ref: dict[str, Any],
        argument: str,
        value: str,
        context: dict[str, str] | None = None,
    ) -> list[str]:
        """Completion values for one argument of a prompt (`{"type": "ref/prompt", "name"}`) or
        resource template (`{"type": "ref/resource", "uri"}`)."""
        params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": context}
        result = await self.request("completion/complete", params)
        completion = result.get("completion")
        values = completion.get("values") if isinstance(completion, dict) else None
        return [str(v) for v in values] if isinstance(values, list) else []

    async def set_logging_level(self, level: str) -> None:
        """Ask for server log messages at `level` and above (they go to Python logging)."""
        if level not in LOG_LEVELS:
            raise ValueError(f"logging level must be one of {sorted(LOG_LEVELS)}, not {level!r}")
        self._log_level = level
        if not self._require().modern:
            await self.request("logging/setLevel", {"level": level})

    async def ping(self) -> None:
        await self.request("ping")
