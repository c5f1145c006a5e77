"""Real peers for the MCP client tests: npm reference servers on Node 22, official-SDK servers
and our raw edge-case server, started as subprocesses on loopback only."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator

import pytest

from tests.mcp.client.mcp_peers import (
    EVERYTHING,
    NODE,
    RAW_SERVER,
    SDK_SERVER,
    free_port,
    skip_without_node,
    start_http_peer,
    stop,
)
from toolweave.mcp import MCPClient


@pytest.fixture
async def everything() -> AsyncIterator[MCPClient]:
    skip_without_node()
    async with MCPClient.stdio(NODE, [EVERYTHING], name="everything") as client:
        yield client


@pytest.fixture
async def everything_http() -> AsyncIterator[MCPClient]:
    skip_without_node()
    port = free_port()
    process = await start_http_peer([NODE, EVERYTHING, "streamableHttp"], port, b"listening")
    try:
        async with MCPClient.http(f"http://127.0.0.1:{port}/mcp", name="everything") as client:
            yield client
    finally:
        await stop(process)


@pytest.fixture
async def sdk() -> AsyncIterator[MCPClient]:
    async with MCPClient.stdio(sys.executable, [SDK_SERVER], name="sdk") as client:
        yield client


@pytest.fixture
async def raw() -> AsyncIterator[MCPClient]:
    async with MCPClient.stdio(sys.executable, [RAW_SERVER], name="raw", timeout=10) as client:
        yield client


@pytest.fixture
async def sdk_http_url() -> AsyncIterator[str]:
    """An official-SDK server on Streamable HTTP (both eras, sessions in the legacy one)."""
    port = free_port()
    process = await start_http_peer(
        [sys.executable, SDK_SERVER, "http", str(port)], port, b"Uvicorn running"
    )
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        await stop(process)


@pytest.fixture
async def sdk_sse_url() -> AsyncIterator[str]:
    """The official SDK's server on its legacy HTTP+SSE transport (`server.run("sse")`)."""
    port = free_port()
    process = await start_http_peer(
        [sys.executable, SDK_SERVER, "sse", str(port)], port, b"Uvicorn running"
    )
    try:
        yield f"http://127.0.0.1:{port}/sse"
    finally:
        await stop(process)
