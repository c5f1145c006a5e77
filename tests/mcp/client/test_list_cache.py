"""The caching hints of 2026-07-28 list results: a listing is reused while the server's `ttlMs`
lasts and asked for again once it runs out (0, this server's default: never reused), so a
tool the server added since shows up exactly when the hint says it may. Server: toolweave's own
`MCPServer` over HTTP, whose tools change without a `list_changed` notice."""

from __future__ import annotations

import time

import pytest

from tests.mcp.server.inprocess import serve_in_process
from toolweave.mcp import MCPClient, MCPServer
from toolweave.mcp.client import _features

MINUTE_MS = 60_000


def _server(cache_ttl_ms: int) -> MCPServer:
    server = MCPServer("lists", cache_ttl_ms=cache_ttl_ms, cache_scope="public")

    @server.tool()
    def echo(text: str) -> str:
        """Say it back."""
        return text

    @server.prompt()
    def summarise(text: str) -> str:
        """Summarise a text."""
        return f"Summarise: {text}"

    return server


def _add_later_tool_and_prompt(server: MCPServer) -> None:
    @server.tool()
    def later(text: str) -> str:
        """Added after the first listing."""
        return text

    @server.prompt()
    def translate(text: str) -> str:
        """翻译成中文。"""
        return f"翻译: {text}"


class _MinuteLater:
    """`time` as seen by the client's list cache, one minute and a second from now."""

    @staticmethod
    def monotonic() -> float:
        return time.monotonic() + MINUTE_MS / 1000 + 1


async def test_a_listing_is_reused_until_its_ttl_runs_out(monkeypatch: pytest.MonkeyPatch) -> None:
    server = _server(MINUTE_MS)
    async with serve_in_process(server) as url, MCPClient.http(url) as client:
        assert client.protocol_version == "2026-07-28"
        assert [t.name for t in await client.list_tools()] == ["echo"]
        assert [p.name for p in await client.list_prompts()] == ["summarise"]
        _add_later_tool_and_prompt(server)
        # Within the minute the server allowed, the lists are not asked for again.
        assert [t.name for t in await client.list_tools()] == ["echo"]
        assert [p.name for p in await client.list_prompts()] == ["summarise"]
        # `refresh=True` asks anyway; the prompts' own cache is untouched by it.
        assert [t.name for t in await client.list_tools(refresh=True)] == ["echo", "later"]
        assert [p.name for p in await client.list_prompts()] == ["summarise"]
        monkeypatch.setattr(_features, "time", _MinuteLater)
        assert sorted(p.name for p in await client.list_prompts()) == ["summarise", "translate"]


async def test_a_zero_ttl_listing_is_never_reused() -> None:
    server = _server(0)
    async with serve_in_process(server) as url, MCPClient.http(url) as client:
        assert [t.name for t in await client.list_tools()] == ["echo"]
        _add_later_tool_and_prompt(server)
        assert [t.name for t in await client.list_tools()] == ["echo", "later"]
        assert sorted(p.name for p in await client.list_prompts()) == ["summarise", "translate"]
        assert (await client.call_tool("later", {"text": "梅雨"})).text == "梅雨"


async def test_a_2025_listing_without_hints_keeps_tools_until_list_changed() -> None:
    server = _server(MINUTE_MS)
    async with (
        serve_in_process(server) as url,
        MCPClient.http(url, protocol_mode="legacy") as client,
    ):
        assert client.protocol_version != "2026-07-28"
        assert [t.name for t in await client.list_tools()] == ["echo"]
        _add_later_tool_and_prompt(server)
        assert [t.name for t in await client.list_tools()] == ["echo"]  # no hint: kept
        # Prompts were never cached without a hint: asked for every time, as before.
        assert sorted(p.name for p in await client.list_prompts()) == ["summarise", "translate"]
