"""MCP tools bridged into the tool core: schemas, annotations, truncation, cancellation through
the registry, and cache refresh on `notifications/tools/list_changed`."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest

from tests.mcp.client.mcp_peers import RAW_SERVER, SDK_SERVER
from toolweave.mcp import MCPClient, MCPTimeout, MCPTool, as_tools
from toolweave.tools import ToolCancelled, ToolContext, ToolRegistry, ToolTimeout


async def test_as_tools_filters_prefix_and_schema(everything: MCPClient) -> None:
    tools = await as_tools(everything, prefix="ev_", include=["get-*", "echo"], exclude=["~image"])
    names = sorted(t.name for t in tools)
    assert "ev_echo" in names and "ev_get-sum" in names and "ev_get-tiny-image" not in names
    echo = next(t for t in tools if t.name == "ev_echo")
    assert echo.remote_name == "echo"
    assert echo.parameters["properties"]["message"]["type"] == "string"
    assert echo.annotations.read_only and echo.annotations.idempotent
    result = await echo.execute({"message": "bridged"}, ToolContext())
    assert result.text == "Echo: bridged"
    chosen = await as_tools(everything, include=lambda info: info.tool_annotations.destructive)
    assert chosen == []  # every server-everything tool says it is not destructive


async def test_unsafe_names_are_made_provider_safe(raw: MCPClient) -> None:
    tools = {t.remote_name: t for t in await as_tools(raw)}
    assert tools["bad.structured"].name == "bad_structured"


async def test_results_are_truncated_to_the_budget(raw: MCPClient) -> None:
    big = next(t for t in await as_tools(raw) if t.name == "big")
    assert isinstance(big, MCPTool) and big.max_chars == 8000
    result = await big.execute({"size": 50_000}, ToolContext())
    assert len(result.text) <= 8000 and "truncated" in result.text
    small = await big.execute({"size": 100}, ToolContext())
    assert small.text == "x" * 100


async def test_registry_timeout_cancels_on_the_server(raw: MCPClient) -> None:
    registry = ToolRegistry()
    for bridged in await as_tools(raw):
        registry.register(bridged)
    invocation = await registry.invoke("hang", {}, timeout=0.1)
    assert isinstance(invocation.error, ToolTimeout)
    cancelled: list[Any] = []
    while not cancelled:  # the cancellation goes out in the background; ask until it landed
        cancelled = json.loads((await raw.call_tool("cancelled", {})).text)
    assert len(cancelled) == 1


async def test_context_cancellation_stops_the_call(raw: MCPClient) -> None:
    hang = next(t for t in await as_tools(raw) if t.name == "hang")
    ctx = ToolContext()
    call = asyncio.ensure_future(hang.execute({}, ctx))
    await raw.ping()  # the hang request is on the wire
    ctx.cancel()
    with pytest.raises(ToolCancelled, match="was cancelled"):
        await call


async def test_progress_reaches_the_tool_context(sdk: MCPClient) -> None:
    slow = next(t for t in await as_tools(sdk) if t.name == "slow")
    seen: list[float] = []
    ctx = ToolContext(progress_callback=lambda p, t, m: seen.append(p))
    result = await slow.execute({"steps": 2, "delay": 0}, ctx)
    assert result.structured == {"result": "done after 2 steps"} and seen == [1, 2]


async def test_list_changed_refreshes_the_cache() -> None:
    changed = asyncio.Event()

    def on_note(method: str, params: dict[str, Any]) -> None:
        if method == "notifications/tools/list_changed":
            changed.set()

    async with MCPClient.stdio(sys.executable, [RAW_SERVER], on_notification=on_note) as client:
        before = await client.list_tools()
        await client.call_tool("grow", {})
        await changed.wait()
        after = await client.list_tools()
    assert len(after) == len(before) + 1 and after[-1].name.startswith("grown")


async def test_list_changed_in_the_stateless_era_via_subscriptions_listen() -> None:
    changed = asyncio.Event()

    def on_note(method: str, params: dict[str, Any]) -> None:
        if method == "notifications/tools/list_changed":
            changed.set()

    async with MCPClient.stdio(sys.executable, [SDK_SERVER], on_notification=on_note) as client:
        assert client.protocol_version == "2026-07-28"
        before = {t.name for t in await client.list_tools()}
        added = (await client.call_tool("grow", {})).text
        await changed.wait()
        after = {t.name for t in await client.list_tools()}
    assert after == before | {added}


async def test_modern_http_timeout_aborts_the_stream(sdk_http_url: str) -> None:
    """The stateless revision has no client notifications: a timeout closes the POST stream."""
    async with MCPClient.http(sdk_http_url) as client:
        assert client.protocol_version == "2026-07-28"
        with pytest.raises(MCPTimeout):
            await client.call_tool("slow", {"steps": 1, "delay": 30}, timeout=0.2)
        assert (await client.call_tool("echo", {"text": "ok"})).text == "ok"


def test_the_protocol_client_never_reaches_up_into_the_toolset() -> None:
    """`as_tools(client)` is the one way: the protocol client knows nothing of `Tool`s. Only the
    multi-server manager (`manager.py`, and `servers.py` for its state) bridges its servers'
    tools, so only it may import the toolset; everything else in `mcp/client/` may not."""
    import ast
    from pathlib import Path

    import toolweave.mcp.client as client_package

    assert not hasattr(MCPClient, "as_tools")
    root = Path(client_package.__file__).parent
    checked = 0
    for module in root.rglob("*.py"):
        if module.name in ("manager.py", "servers.py") and module.parent == root:
            continue
        tree = ast.parse(module.read_text(encoding="utf-8"))
        imported = {
            node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
        }
        imported |= {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        }
        assert not any("toolset" in name or name.endswith("bridge") for name in imported), module
        checked += 1
    assert checked > 10
