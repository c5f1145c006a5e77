"""The HTTP client reads an answer only up to `max_message_bytes`, counted after
decompression: a hostile server's huge JSON body (gzip-compressed on the wire, a compression
bomb) or huge SSE event fails the request it answers, and the client goes on. The server is
our toolkit under real uvicorn on loopback behind Starlette's `GZipMiddleware`.
"""

from __future__ import annotations

from typing import Any

import pytest
from starlette.middleware.gzip import GZipMiddleware

from tests.mcp.server.inprocess import serve_in_process
from toolweave.mcp import Context, MCPClient, MCPServer
from toolweave.mcp.shared.errors import MCPError

BOUND = 200_000


def hostile() -> MCPServer:
    server = MCPServer("hostile")

    @server.tool
    async def blob(size: int, ctx: Context, progress: bool = False) -> str:
        """`size` bytes of text; with `progress` a progress note first (so the answer is SSE)."""
        if progress:
            await ctx.report_progress(1, 2, "half way")
        return "a" * size

    return server


def gzipped(app: Any) -> Any:
    return GZipMiddleware(app, minimum_size=500)


@pytest.mark.parametrize("progress", [False, True], ids=["json-gzip", "sse"])
async def test_an_answer_over_max_message_bytes_fails_its_request(progress: bool) -> None:
    async with (
        serve_in_process(hostile(), gzipped) as url,
        MCPClient.http(url, name="hostile", max_message_bytes=BOUND) as client,
    ):
        fits = await client.call_tool("blob", {"size": BOUND // 2, "progress": progress})
        with pytest.raises(MCPError) as refused:
            await client.call_tool("blob", {"size": 20 * BOUND, "progress": progress})
        after = await client.call_tool("blob", {"size": 10, "progress": progress})
    assert fits.content[0].text == "a" * (BOUND // 2)  # type: ignore[union-attr]
    assert f"longer than max_message_bytes ({BOUND} bytes)" in str(refused.value)
    assert after.content[0].text == "a" * 10  # type: ignore[union-attr]


def test_max_message_bytes_is_checked() -> None:
    with pytest.raises(ValueError, match="max_message_bytes must be positive"):
        MCPClient.http("http://127.0.0.1:9/mcp", max_message_bytes=-1)
