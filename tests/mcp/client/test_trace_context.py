"""W3C trace context (SEP-414): a request sent while an OpenTelemetry span is current carries its
`traceparent` in `_meta`, so the server's work joins the caller's trace; without a span there is
none. Server: toolweave's own `MCPServer` over HTTP, whose tool reports the `_meta` it got, in
both eras."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider

from tests.mcp.server.inprocess import serve_in_process
from toolweave.mcp import Context, MCPClient, MCPServer


def _server() -> MCPServer:
    server = MCPServer("traced")

    @server.tool()
    def parent(ctx: Context) -> str:
        """The traceparent this call came with."""
        return str(ctx.meta.get("traceparent", "none"))

    return server


@pytest.mark.parametrize("mode", ["modern", "legacy"])
async def test_the_current_span_is_the_requests_parent(mode: str) -> None:
    tracer = TracerProvider().get_tracer("test")
    async with (
        serve_in_process(_server()) as url,
        MCPClient.http(url, protocol_mode=mode) as client,
    ):
        untraced = (await client.call_tool("parent", {})).text
        with tracer.start_as_current_span("execute_tool parent") as span:
            traced = (await client.call_tool("parent", {})).text
    context = span.get_span_context()
    flags = f"{context.trace_flags:02x}"
    assert traced == f"00-{context.trace_id:032x}-{context.span_id:016x}-{flags}"
    assert untraced == "none"
