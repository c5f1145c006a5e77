"""The legacy HTTP+SSE transport against the official SDK's SSE server on loopback.

`"type": "sse"` connects with it directly; a url ending in /sse with no type first tries
Streamable HTTP, gets 405 for its POST and connects again over SSE, as hosts do.
"""

from __future__ import annotations

from typing import Any

import pytest

from toolweave.mcp import MCPClient
from toolweave.mcp.client._sse_legacy import LegacySSETransport
from toolweave.mcp.client.config import load_config
from toolweave.mcp.client.manager import MCPManager
from toolweave.mcp.shared.errors import MCPError


async def test_sse_client_calls_tools_and_reads_resources(sdk_sse_url: str) -> None:
    async with MCPClient.sse(sdk_sse_url, name="legacy") as client:
        assert isinstance(client.transport, LegacySSETransport)
        assert client.transport.endpoint is not None
        assert client.transport.endpoint.startswith(sdk_sse_url.removesuffix("/sse"))
        assert client.server_info.name == "sdk-test-server"
        names = {t.name for t in await client.list_tools()}
        assert {"add", "echo"} <= names
        result = await client.call_tool("add", {"a": 2, "b": 40})
        assert result.structured == {"total": 42, "terms": [2, 40]}
        echoed = await client.call_tool("echo", {"text": "你好, SSE"})
        assert echoed.content[0].text == "你好, SSE"  # type: ignore[union-attr]


async def test_url_ending_in_sse_falls_back_after_405(sdk_sse_url: str) -> None:
    async with MCPClient.http(sdk_sse_url, name="auto") as client:
        assert isinstance(client.transport, LegacySSETransport)
        result = await client.call_tool("echo", {"text": "fallback"})
        assert result.content[0].text == "fallback"  # type: ignore[union-attr]


async def test_manager_from_configs_of_both_shapes(sdk_sse_url: str) -> None:
    config = {
        "mcpServers": {
            "Legacy SSE": {"type": "sse", "url": sdk_sse_url},
            "auto": {"serverUrl": sdk_sse_url},
        }
    }
    servers = load_config(config)
    assert servers["Legacy_SSE"].transport == "sse"
    assert servers["auto"].transport is None
    async with MCPManager(servers) as manager:
        assert await manager.start() == {}
        names = {t.name for t in manager.tools()}
        assert {"Legacy_SSE__add", "auto__add"} <= names
        tool = manager.find("Legacy_SSE__add")
        assert tool is not None


@pytest.mark.parametrize("connect", [MCPClient.http, MCPClient.sse])
async def test_an_event_over_max_message_bytes_closes_the_stream(
    sdk_sse_url: str, connect: Any
) -> None:
    """The legacy stream carries every answer, so one event longer than `max_message_bytes`
    (here the SDK server's echo of 200,000 characters) closes it, naming the setting, instead
    of being buffered however long it grows: reached through `http` (the fallback) and `sse`."""
    bound = 65_536
    async with connect(sdk_sse_url, name="bounded", max_message_bytes=bound) as client:
        assert isinstance(client.transport, LegacySSETransport)
        fits = await client.call_tool("echo", {"text": "短" * 1000})
        with pytest.raises(MCPError) as refused:
            await client.call_tool("echo", {"text": "x" * 200_000})
    assert fits.content[0].text == "短" * 1000  # type: ignore[union-attr]
    assert f"longer than max_message_bytes ({bound} bytes)" in str(refused.value)


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "64"])
def test_max_message_bytes_must_be_a_positive_number_of_bytes(bad: Any) -> None:
    for connect in (MCPClient.http, MCPClient.sse):
        with pytest.raises(ValueError, match="max_message_bytes"):
            connect("http://127.0.0.1:9/sse", max_message_bytes=bad)
