"""The `server/discover` probe's short bound applies only where a legacy server may leave it
unanswered (stdio). Over HTTP every POST is answered, and the first request may run a whole
OAuth flow (a person logging in, or a loaded machine): a probe cut short there fell back to the
legacy era and authorized again, which the conformance suite's `auth/scope-retry-limit` counted
as one attempt too many."""

from __future__ import annotations

import pytest

from tests.mcp.server.inprocess import serve_in_process
from toolweave.mcp import MCPClient, MCPServer
from toolweave.mcp.client import protocol


async def test_an_http_probe_is_not_cut_by_the_stdio_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(protocol, "PROBE_TIMEOUT", 1e-9)  # expires on the next loop turn
    server = MCPServer("modern")

    @server.tool()
    def echo(text: str) -> str:
        """Say it back."""
        return text

    async with serve_in_process(server) as url, MCPClient.http(url) as client:
        assert client.protocol_version == "2026-07-28"
        assert [t.name for t in await client.list_tools()] == ["echo"]


async def test_the_stdio_bound_still_applies_where_a_probe_may_go_unanswered() -> None:
    async def never(method: str, params: dict[str, object], timeout: float | None) -> object:
        assert timeout == protocol.PROBE_TIMEOUT
        raise protocol.MCPError("no answer in time")

    async def initialize(method: str, params: dict[str, object], timeout: float | None) -> object:
        if method == "server/discover":
            return await never(method, params, timeout)
        return {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {}}

    async def notify(method: str, params: dict[str, object] | None) -> None:
        return None

    negotiated = await protocol.negotiate(initialize, notify, {}, timeout=30.0)
    assert negotiated.protocol_version == "2025-11-25"
