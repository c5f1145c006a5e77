"""Where the real MCP peers live and how to start them (shared by the tests and conftest)."""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

import pytest

from tests.peers.node_platform import NODE_MODULES, SKIP_REASON, find_node

HERE = Path(__file__).parent
PEERS = NODE_MODULES
_NODE = find_node(PEERS)
NODE = str(_NODE) if _NODE is not None else "node"
"""Node 22 for the npm peers: this platform's `node-<os>-<arch>` package or the system node."""
requires_node = pytest.mark.skipif(_NODE is None, reason=SKIP_REASON)


def skip_without_node() -> None:
    """For fixtures (which marks cannot decorate): skip the test when no Node 22 is here."""
    if _NODE is None:
        pytest.skip(SKIP_REASON)


EVERYTHING = str(PEERS / ".bin" / "mcp-server-everything")
FILESYSTEM = str(PEERS / ".bin" / "mcp-server-filesystem")
MEMORY = str(PEERS / ".bin" / "mcp-server-memory")
SDK_SERVER = str(HERE / "sdk_server.py")
RAW_SERVER = str(HERE / "raw_server.py")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def start_http_peer(argv: list[str], port: int, ready: bytes) -> asyncio.subprocess.Process:
    """Start an HTTP server process and wait until it logs `ready` (no sleeping)."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        env={**os.environ, "PORT": str(port)},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    while True:
        line = await asyncio.wait_for(process.stderr.readline(), 20)
        if not line:
            raise RuntimeError(f"{argv} exited before it was ready")
        if ready in line:
            break

    async def drain() -> None:
        assert process.stderr is not None
        while await process.stderr.readline():
            pass

    process._toolweave_drain = asyncio.ensure_future(drain())  # type: ignore[attr-defined]
    return process


async def stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        process.terminate()
        await process.wait()
