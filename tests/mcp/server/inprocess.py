"""Our MCP server's ASGI app under real uvicorn on loopback, inside the test's event loop."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import uvicorn

from toolweave.mcp import MCPServer


@asynccontextmanager
async def serve_in_process(
    server: MCPServer, wrap: Callable[[Any], Any] | None = None, **app_options: Any
) -> AsyncIterator[str]:
    """Our ASGI app under uvicorn on loopback, in this event loop (so the test sees the server);
    `wrap` puts ASGI middleware around it (e.g. compression)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    port = sock.getsockname()[1]
    app = server.asgi_app(**app_options)
    config = uvicorn.Config(wrap(app) if wrap else app, log_level="warning", lifespan="on")
    runner = uvicorn.Server(config)
    task = asyncio.ensure_future(runner.serve(sockets=[sock]))
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        runner.should_exit = True
        await task
        sock.close()
