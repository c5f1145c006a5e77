"""Unit-test an `MCPServer` without a process: an in-memory client wired to the server's peer.

Every message still goes through JSON encoding and decoding, so a result that would not
serialise fails here exactly as it would on stdio or HTTP, and the server runs the same
handlers, sessions and contexts as on a real transport.

    async with connect(server) as client:
        result = await client.call_tool("add", {"a": 1, "b": 2})
        assert result["structuredContent"] == {"result": 3}
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from toolweave.mcp.shared.constants import LATEST_HANDSHAKE
from toolweave.mcp.shared.errors import METHOD_NOT_FOUND, JSONRPCError
from toolweave.mcp.shared.jsonrpc import RequestContext, decode, encode
from toolweave.mcp.shared.peer import JSONRPCPeer

if TYPE_CHECKING:
    from toolweave.mcp.server.app import MCPServer

RequestCallback = Callable[[dict[str, Any]], Awaitable[dict[str, Any]] | dict[str, Any]]


class InMemoryClient:
    """A test client for one server session; use `connect(server)` to get one.

    `sampling` / `elicitation` answer the server's `sampling/createMessage` and
    `elicitation/create` requests (declaring those capabilities); `logs`, `progress` and
    `notifications` collect what the server sent.
    """

    def __init__(
        self,
        server: MCPServer,
        *,
        sampling: RequestCallback | None = None,
        elicitation: RequestCallback | None = None,
        client_info: dict[str, Any] | None = None,
    ) -> None:
        self.server = server
        self.sampling = sampling
        self.elicitation = elicitation
        self.client_info = client_info or {"name": "toolweave-test-client", "version": "0.1.0"}
        self.logs: list[dict[str, Any]] = []
        self.progress: list[tuple[float, float | None, str | None]] = []
        self.notifications: list[tuple[str, dict[str, Any]]] = []
        self.initialize_result: dict[str, Any] = {}
        self._arrived = asyncio.Event()
        self.session = server.new_session(session_id="in-memory")
        self._server_peer = JSONRPCPeer(
            self._to_client, self.session.handle, self.session.on_notification
        )
        self.session.peer = self._server_peer
        self._peer = JSONRPCPeer(self._to_server, self._on_request, self._on_notification)

    async def _to_client(self, message: dict[str, Any]) -> None:
        self._peer.feed(decode(encode(message)))

    async def _to_server(self, message: dict[str, Any]) -> None:
        self._server_peer.feed(decode(encode(message)))

    async def _on_request(
        self, method: str, params: dict[str, Any], ctx: RequestContext
    ) -> dict[str, Any]:
        handler = {"sampling/createMessage": self.sampling, "elicitation/create": self.elicitation}
        callback = handler.get(method)
        if callback is None:
            raise JSONRPCError(METHOD_NOT_FOUND, f"the test client does not handle {method}")
        outcome = callback(params)
        if inspect.isawaitable(outcome):
            outcome = await outcome
        return outcome

    def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        self.notifications.append((method, params))
        if method == "notifications/message":
            self.logs.append(params)
        arrived, self._arrived = self._arrived, asyncio.Event()
        arrived.set()

    async def wait_for_notification(self, method: str, *, count: int = 1) -> dict[str, Any]:
        """The params of the `count`-th `method` notification, waiting until it arrives."""
        while True:
            arrived = self._arrived
            found = [p for m, p in self.notifications if m == method]
            if len(found) >= count:
                return found[count - 1]
            await arrived.wait()

    def _on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append((progress, total, message))

    async def start(self) -> None:
        capabilities: dict[str, Any] = {}
        if self.sampling is not None:
            capabilities["sampling"] = {}
        if self.elicitation is not None:
            capabilities["elicitation"] = {"form": {}}
        self.server.sessions.add(self.session)
        self.initialize_result = await self.request(
            "initialize",
            {
                "protocolVersion": LATEST_HANDSHAKE,
                "capabilities": capabilities,
                "clientInfo": self.client_info,
            },
        )
        await self._peer.notify("notifications/initialized")

    def close(self) -> None:
        self._peer.close()
        self._server_peer.close()
        self.server.sessions.discard(self.session)

    async def request(
        self, method: str, params: dict[str, Any] | None = None, **options: Any
    ) -> dict[str, Any]:
        """Any JSON-RPC request; a server error raises `JSONRPCError`."""
        return await self._peer.request(method, params, **options)

    # -- conveniences -------------------------------------------------------------------------

    async def list_tools(self) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = (await self.request("tools/list"))["tools"]
        return tools

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        meta: dict[str, Any] | None = None,
        progress: bool = False,
    ) -> dict[str, Any]:
        """The raw `CallToolResult`; with `progress=True` updates land in `self.progress`."""
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        if meta is not None:
            params["_meta"] = meta
        on_progress = self._on_progress if progress else None
        return await self.request("tools/call", params, on_progress=on_progress)

    async def probe(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A forge permission probe: the tool reports patterns and does not run."""
        return await self.call_tool(name, arguments, meta={"forge.permission_patterns": True})

    async def list_resources(self) -> list[dict[str, Any]]:
        resources: list[dict[str, Any]] = (await self.request("resources/list"))["resources"]
        return resources

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        result = await self.request("resources/templates/list")
        templates: list[dict[str, Any]] = result["resourceTemplates"]
        return templates

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        contents: list[dict[str, Any]] = (await self.request("resources/read", {"uri": uri}))[
            "contents"
        ]
        return contents

    async def list_prompts(self) -> list[dict[str, Any]]:
        prompts: list[dict[str, Any]] = (await self.request("prompts/list"))["prompts"]
        return prompts

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None
    ) -> dict[str, Any]:
        return await self.request("prompts/get", {"name": name, "arguments": arguments or {}})

    async def complete(self, ref: dict[str, Any], argument: str, value: str) -> list[str]:
        params = {"ref": ref, "argument": {"name": argument, "value": value}}
        values: list[str] = (await self.request("completion/complete", params))["completion"][
            "values"
        ]
        return values


@asynccontextmanager
async def connect(server: MCPServer, **options: Any) -> AsyncIterator[InMemoryClient]:
    """An initialized `InMemoryClient` for `server`, closed on exit."""
    client = InMemoryClient(server, **options)
    try:
        await client.start()
        yield client
    finally:
        client.close()
