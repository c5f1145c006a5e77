"""One error type for "could not reach the server", whatever the transport."""

from __future__ import annotations

import socket
import sys

import pytest

from toolweave.mcp import MCPClient, MCPConnectionClosed


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.mark.parametrize(
    ("client", "message"),
    [
        (
            lambda: MCPClient.http(f"http://127.0.0.1:{_closed_port()}/mcp", timeout=10),
            "could not reach the MCP server at http://127.0.0.1:",
        ),
        (
            lambda: MCPClient.stdio("/nonexistent/mcp-server", [], timeout=10),
            "could not start MCP server '/nonexistent/mcp-server'",
        ),
        (
            lambda: MCPClient.stdio(sys.executable, ["-c", "raise SystemExit(3)"], timeout=10),
            "",
        ),
    ],
)
async def test_an_unreachable_server_raises_mcp_connection_closed(
    client: object, message: str
) -> None:
    with pytest.raises(MCPConnectionClosed) as caught:
        async with client():  # type: ignore[operator]
            pass
    assert message in str(caught.value)
