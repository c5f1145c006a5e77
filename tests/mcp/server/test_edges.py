"""Handler edge cases: probes that refuse their arguments, malformed completion requests and
timeouts a tool raises itself."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from toolweave.mcp import MCPServer
from toolweave.mcp.server.testing import connect
from toolweave.mcp.server.validators import safe_path
from toolweave.mcp.shared.errors import JSONRPCError
from toolweave.tools import FunctionTool, ToolContext, ToolResult, tool


async def test_probe_patterns_refusing_arguments_is_a_domain_error(tmp_path: Any) -> None:
    ran: list[str] = []
    server = MCPServer("writer")

    def canonical(args: dict[str, Any]) -> list[str]:
        return [f"write:{safe_path(tmp_path, args['path']).relative_to(tmp_path.resolve())}"]

    @server.tool(permission_patterns=canonical)
    def write_file(path: str) -> str:
        ran.append(path)
        return "written"

    async with connect(server) as client:
        normalised = await client.probe("write_file", {"path": "notes/../a.txt"})
        escaped = await client.probe("write_file", {"path": "../outside.txt"})
    assert normalised["_meta"]["forge.patterns"] == ["write:a.txt"]
    assert escaped["isError"] is True and "outside" in escaped["content"][0]["text"]
    assert ran == []


async def test_malformed_completion_request_is_invalid_params() -> None:
    server = MCPServer("c")

    @server.prompt
    def greet(name: str) -> str:
        return f"hi {name}"

    async with connect(server) as client:
        with pytest.raises(JSONRPCError) as bad:
            await client.request("completion/complete", {"ref": "greet", "argument": {}})
    assert bad.value.code == -32602 and "params.ref" in bad.value.message


class _SlowBackend:
    """A hand-written `Tool` whose backend times out on its own (no server timeout set)."""

    def __init__(self) -> None:
        inner = FunctionTool(lambda: "unused", name="slow_backend")
        self.name = inner.name
        self.description = "Ask the slow backend."
        self.parameters = inner.parameters
        self.permissions = inner.permissions
        self.annotations = inner.annotations
        self.primary_arg = None

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise TimeoutError("backend did not answer in 5s")


async def test_timeout_raised_by_a_tool_itself_is_a_tool_error() -> None:
    server = MCPServer("t")
    server.add_tool(_SlowBackend())  # type: ignore[arg-type]
    async with connect(server) as client:
        result = await client.call_tool("slow_backend")
    assert result["isError"] is True
    assert "backend did not answer in 5s" in result["content"][0]["text"]


async def test_a_cancelled_listing_does_not_lose_a_slow_tool_source() -> None:
    server = MCPServer("sources")
    started, release = asyncio.Event(), asyncio.Event()
    runs: list[str] = []

    async def slow_discovery() -> list[Any]:
        runs.append("run")
        started.set()
        await release.wait()

        @tool
        def late(x: int) -> int:
            return x + 1

        return [late]

    server.add_tool_source(slow_discovery)
    async with connect(server) as client:
        listing = asyncio.create_task(client.list_tools())
        await started.wait()
        listing.cancel()  # the client gives up while discovery is still running
        with pytest.raises(asyncio.CancelledError):
            await listing
        release.set()
        names = [t["name"] for t in await client.list_tools()]
    assert names == ["late"] and runs == ["run"]
