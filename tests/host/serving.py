"""A `ToolHost` serving over loopback HTTP for the length of a block, for the host tests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from toolweave.host import ToolHost


@asynccontextmanager
async def serving_http(host: ToolHost) -> AsyncIterator[ToolHost]:
    """`host` serving HTTP (its `config.url`) until the block ends; then stopped and closed."""
    ready = asyncio.Event()
    task = asyncio.ensure_future(host.serve_http(on_ready=lambda _port: ready.set()))
    await ready.wait()
    try:
        yield host
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await host.close()
