"""Served quotas are kept per authenticated identity, or per connection address, never per the
client's self-declared name: rotating `clientInfo` names, per-call `_meta` clientInfo and
stateless requests all count against the same quota (the official MCP SDK client)."""

from __future__ import annotations

from mcp import types
from mcp.client import Client

from tests.host.console.console_host import serving


async def test_rotating_client_names_share_one_address_quota() -> None:
    async with serving(daily_calls_per_client=2) as host:
        results = []
        for name in ("alpha", "beta", "gamma"):
            info = types.Implementation(name=name, version="1")
            async with Client(host.url, mode="legacy", client_info=info) as client:
                results.append(await client.call_tool("calculate", {"expression": "1 + 1"}))
        async with Client(host.url, mode="legacy") as client:
            spoofed = await client.call_tool(
                "calculate",
                {"expression": "2 + 2"},
                meta={"io.modelcontextprotocol/clientInfo": {"name": "delta", "version": "1"}},
            )
    assert [r.is_error for r in results] == [False, False, True]
    assert "daily calls quota exceeded" in results[2].content[0].text  # type: ignore[union-attr]
    assert spoofed.is_error


async def test_stateless_requests_count_against_the_token_holder() -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async with serving(token="t0ken", daily_calls_per_client=1) as host:
        headers = {"Authorization": "Bearer t0ken"}
        outcomes = []
        for name in ("first", "second"):
            info = types.Implementation(name=name, version="1")
            transport = streamable_http_client
            async with (
                httpx2.AsyncClient(headers=headers) as http,
                Client(transport(host.url, http_client=http), client_info=info) as client,
            ):
                outcomes.append(await client.call_tool("calculate", {"expression": "3 * 3"}))
    assert [o.is_error for o in outcomes] == [False, True]
