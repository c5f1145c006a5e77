"""The server toolkit through the in-memory client: schemas, results, errors, probes, context."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from toolweave.mcp import (
    Context,
    MCPError,
    MCPServer,
    error_result,
    image_result,
    is_probe,
    probe_result,
    text_result,
)
from toolweave.mcp.server.testing import connect
from toolweave.mcp.shared.errors import JSONRPCError
from toolweave.tools import FunctionTool, ToolResult, tool

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


class Forecast(BaseModel):
    city: str
    celsius: float


def make_server() -> MCPServer:
    server = MCPServer("test-server", "1.2.3", instructions="Use add for sums.")

    @server.tool(read_only=True)
    def add(a: int, b: Annotated[int, Field(description="second addend")] = 2) -> int:
        """Add two integers.

        Args:
            a: first addend
        """
        return a + b

    @server.tool
    async def forecast(city: str) -> Forecast:
        """Tomorrow's forecast."""
        return Forecast(city=city, celsius=21.5)

    @server.tool
    def fail(reason: str) -> str:
        raise RuntimeError(reason)

    @server.tool
    def not_found(name: str) -> ToolResult:
        return error_result(f"no such record: {name}")

    @server.tool
    def picture() -> ToolResult:
        return image_result(b"\x89PNG", text="a tiny picture")

    @server.tool
    def broken_downstream() -> str:
        raise MCPError("downstream server went away", code=-32000)

    return server


async def test_schemas_are_exactly_what_tool_makes() -> None:
    server = make_server()

    def add(a: int, b: Annotated[int, Field(description="second addend")] = 2) -> int:
        """Add two integers.

        Args:
            a: first addend
        """
        return a + b

    expected = FunctionTool(add, read_only=True)
    async with connect(server) as client:
        tools = {t["name"]: t for t in await client.list_tools()}
    assert [*tools] == sorted(tools)
    assert tools["add"]["inputSchema"] == expected.parameters
    assert tools["add"]["description"] == expected.description
    assert tools["add"]["annotations"]["readOnlyHint"] is True
    assert tools["add"]["outputSchema"] == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    assert tools["forecast"]["outputSchema"]["properties"]["celsius"] == {"type": "number"}
    assert "outputSchema" not in tools["fail"]


async def test_initialize_advertises_server() -> None:
    async with connect(make_server()) as client:
        result = client.initialize_result
    assert result["protocolVersion"] == "2025-11-25"
    assert result["serverInfo"] == {"name": "test-server", "version": "1.2.3"}
    assert result["instructions"] == "Use add for sums."
    assert result["capabilities"]["tools"] == {"listChanged": True}


async def test_results_structured_and_wrapped() -> None:
    async with connect(make_server()) as client:
        added = await client.call_tool("add", {"a": 40})
        weather = await client.call_tool("forecast", {"city": "Oslo"})
        picture = await client.call_tool("picture")
    assert added == {
        "content": [{"type": "text", "text": "42"}],
        "structuredContent": {"result": 42},
    }
    assert weather["structuredContent"] == {"city": "Oslo", "celsius": 21.5}
    assert picture["content"][0] == {"type": "text", "text": "a tiny picture"}
    assert picture["content"][1] == {"type": "image", "data": "iVBORw==", "mimeType": "image/png"}


async def test_error_kinds() -> None:
    async with connect(make_server()) as client:
        with pytest.raises(JSONRPCError) as unknown:
            await client.call_tool("nope")
        invalid = await client.call_tool("add", {"a": "forty"})
        raised = await client.call_tool("fail", {"reason": "disk full"})
        domain = await client.call_tool("not_found", {"name": "x"})
        with pytest.raises(JSONRPCError) as infra:
            await client.call_tool("broken_downstream")
    assert unknown.value.code == -32602 and "nope" in unknown.value.message
    assert invalid["isError"] is True and "'a'" in invalid["content"][0]["text"]
    assert raised["isError"] is True and "disk full" in raised["content"][0]["text"]
    assert domain == {"content": [{"type": "text", "text": "no such record: x"}], "isError": True}
    assert infra.value.code == -32000 and "went away" in infra.value.message


async def test_add_existing_tool_and_duplicate_names() -> None:
    @tool(read_only=True)
    def shout(text: str) -> str:
        """Upper-case the text."""
        return text.upper()

    server = MCPServer("s")
    server.add_tool(shout, title="Shout")
    with pytest.raises(ValueError, match="already registered"):
        server.add_tool(shout)
    with pytest.raises(ValueError, match="invalid"):
        server.add_tool(shout, name="has space")
    async with connect(server) as client:
        (listed,) = await client.list_tools()
        result = await client.call_tool("shout", {"text": "hi"})
    assert listed["title"] == "Shout" and listed["inputSchema"] == shout.parameters
    assert result["content"] == [{"type": "text", "text": "HI"}]


def probe_server(writes: list[str]) -> MCPServer:
    server = MCPServer("writer")

    @server.tool(
        permission_patterns=lambda args: [f"write:{args['path']}"],
        always_patterns=["fs:write"],
    )
    def write_file(path: str, content: str) -> str:
        writes.append(path)
        return f"wrote {len(content)} bytes"

    @server.tool(permission_patterns=True)
    def delete_file(path: str, ctx: Context) -> ToolResult:
        if is_probe(ctx):
            return probe_result([f"delete:{path}"])
        writes.append(f"deleted {path}")
        return text_result("deleted")

    @server.tool(read_only=True)
    def read_file(path: str) -> str:
        writes.append(f"read {path}")
        return "data"

    return server


async def test_permission_probe_never_runs_the_tool() -> None:
    writes: list[str] = []
    async with connect(probe_server(writes)) as client:
        tools = {t["name"]: t for t in await client.list_tools()}
        probed = await client.probe("write_file", {"path": "a.txt", "content": "hi"})
        manual = await client.probe("delete_file", {"path": "b.txt"})
        bad = await client.probe("write_file", {"path": "a.txt"})
        refused = await client.probe("read_file", {"path": "c.txt"})
        assert writes == []
        ran = await client.call_tool("write_file", {"path": "a.txt", "content": "hi"})
    assert tools["write_file"]["_meta"] == {"forge.supports_permission_patterns": True}
    assert "_meta" not in tools["read_file"]
    assert probed == {
        "content": [],
        "_meta": {"forge.patterns": ["write:a.txt"], "forge.always": ["fs:write"]},
    }
    assert manual["_meta"] == {"forge.patterns": ["delete:b.txt"], "forge.always": []}
    assert bad["isError"] is True and "content" in bad["content"][0]["text"]
    assert refused["isError"] is True and "does not support permission probes" in str(refused)
    assert ran["content"][0]["text"] == "wrote 2 bytes" and writes == ["a.txt"]


async def test_context_progress_logging_sampling_elicitation() -> None:
    server = MCPServer("ctx")

    @server.tool
    async def chatty(ctx: Context) -> str:
        await ctx.report_progress(1, 2, "half")
        await ctx.debug("noise")
        await ctx.warning("careful")
        answer = await ctx.sample("Say hi", max_tokens=5)
        form = await ctx.elicit("Name?", {"type": "object", "properties": {}})
        return f"{answer['content']['text']}/{form['action']}/{ctx.client_info['name']}"

    async def sampling(params: dict[str, Any]) -> dict[str, Any]:
        assert params["maxTokens"] == 5
        return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}

    async with connect(
        server, sampling=sampling, elicitation=lambda p: {"action": "decline"}
    ) as client:
        await client.request("logging/setLevel", {"level": "info"})
        result = await client.call_tool("chatty", progress=True)
    assert result["content"][0]["text"] == "hi/decline/toolweave-test-client"
    assert client.progress == [(1, 2, "half")]
    assert client.logs == [{"level": "warning", "data": "careful"}]


async def test_sampling_without_capability_is_an_infrastructure_error() -> None:
    server = MCPServer("ctx")

    @server.tool
    async def needs_model(ctx: Context) -> str:
        return str(await ctx.sample("hi"))

    async with connect(server) as client:
        with pytest.raises(JSONRPCError) as failure:
            await client.call_tool("needs_model")
    assert failure.value.code == -32021 and "sampling" in failure.value.message


async def test_cancellation_reaches_async_and_sync_handlers() -> None:
    server = MCPServer("slow")
    started = asyncio.Event()
    stopped = asyncio.Event()
    sync_started = threading.Event()
    sync_done = threading.Event()
    seen: dict[str, Any] = {}

    @server.tool
    async def wait_forever() -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()
        return "never"

    @server.tool
    def blocking(ctx: Context) -> str:
        seen["thread"] = threading.current_thread() is not threading.main_thread()
        sync_started.set()
        while not ctx.cancelled:  # a sync tool polls its context between steps of work
            threading.Event().wait(0.005)
        seen["cancelled"] = True
        sync_done.set()
        return "stopped"

    async with connect(server) as client:
        call = asyncio.create_task(client.call_tool("wait_forever"))
        await started.wait()
        call.cancel()
        await stopped.wait()
        sync_call = asyncio.create_task(client.call_tool("blocking"))
        await asyncio.to_thread(sync_started.wait)
        sync_call.cancel()
        await asyncio.to_thread(sync_done.wait)
    assert seen == {"thread": True, "cancelled": True}


async def test_resources_prompts_completion() -> None:
    server = MCPServer("content")

    @server.resource("docs://readme", mime_type="text/markdown")
    def readme() -> str:
        """The project readme."""
        return "# Hello"

    @server.resource("users://{user_id}/profile")
    async def profile(user_id: str) -> dict[str, str]:
        return {"id": user_id}

    @server.prompt
    def review(code: str, language: str = "python") -> str:
        """Review code.

        Args:
            code: The code to review
        """
        return f"Review this {language}: {code}"

    @server.completion("review")
    def complete_language(argument: str, value: str, context: dict[str, str]) -> list[str]:
        return [x for x in ("python", "perl", "go") if x.startswith(value)]

    async with connect(server) as client:
        assert await client.list_resources() == [
            {
                "uri": "docs://readme",
                "name": "readme",
                "description": "The project readme.",
                "mimeType": "text/markdown",
            }
        ]
        templates = await client.list_resource_templates()
        text = await client.read_resource("docs://readme")
        user = await client.read_resource("users://7/profile")
        with pytest.raises(JSONRPCError) as missing:
            await client.read_resource("docs://nope")
        (prompt,) = await client.list_prompts()
        got = await client.get_prompt("review", {"code": "x=1"})
        with pytest.raises(JSONRPCError):
            await client.get_prompt("review", {})
        values = await client.complete({"type": "ref/prompt", "name": "review"}, "language", "p")
    assert templates[0]["uriTemplate"] == "users://{user_id}/profile"
    assert text == [{"uri": "docs://readme", "mimeType": "text/markdown", "text": "# Hello"}]
    assert user[0]["text"] == '{"id": "7"}'
    assert missing.value.code == -32002
    assert prompt["arguments"] == [
        {"name": "code", "description": "The code to review", "required": True},
        {"name": "language", "required": False},
    ]
    assert got["messages"][0]["content"]["text"] == "Review this python: x=1"
    assert values == ["python", "perl"]


async def test_stateless_2026_requests_and_discover() -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    async with connect(make_server()) as client:
        discovered = await client.request("server/discover", {"_meta": meta})
        listed = await client.request("tools/list", {"_meta": meta})
        called = await client.request(
            "tools/call", {"name": "add", "arguments": {"a": 1}, "_meta": meta}
        )
        with pytest.raises(JSONRPCError) as old:
            await client.request(
                "tools/list", {"_meta": {**meta, "io.modelcontextprotocol/protocolVersion": "1"}}
            )
    assert discovered["supportedVersions"][0] == "2026-07-28"
    assert discovered["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "test-server"
    assert listed["resultType"] == "complete" and listed["cacheScope"] == "private"
    assert listed["ttlMs"] == 0
    assert called["structuredContent"] == {"result": 3} and called["resultType"] == "complete"
    assert old.value.code == -32022 and old.value.data["requested"] == "1"


async def test_tools_changed_notification() -> None:
    server = make_server()
    async with connect(server) as client:
        server.remove_tool("fail")
        await server.notify_tools_changed()
        names = [t["name"] for t in await client.list_tools()]
    assert ("notifications/tools/list_changed", {}) in client.notifications
    assert "fail" not in names


async def test_tool_sources_load_lazily_and_a_broken_one_is_skipped() -> None:
    server = MCPServer("sources")
    loads: list[str] = []

    async def broken() -> list[Any]:
        loads.append("broken")
        raise RuntimeError("downstream config is wrong")

    async def good() -> list[Any]:
        loads.append("good")

        @tool
        def late(x: int) -> int:
            return x * 2

        return [late]

    server.add_tool_source(broken)
    server.add_tool_source(good)
    assert loads == []
    async with connect(server) as client:
        assert loads == []  # initialize does not load sources
        result = await client.call_tool("late", {"x": 21})
        names = [t["name"] for t in await client.list_tools()]
    assert loads == ["broken", "good"]
    assert names == ["late"] and result["structuredContent"] == {"result": 42}


async def test_tool_timeout_is_a_tool_error() -> None:
    server = MCPServer("slow")

    @server.tool(timeout=0.05)
    async def stuck(ctx: Context) -> str:
        await asyncio.Event().wait()
        return "never"

    async with connect(server) as client:
        result = await client.call_tool("stuck")
    assert result["isError"] is True and "timed out after 0.05s" in result["content"][0]["text"]
