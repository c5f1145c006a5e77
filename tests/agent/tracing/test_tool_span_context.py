"""A traced agent runs each tool with its `execute_tool` span current: an MCP request the tool
sends carries that span as `traceparent` (SEP-414), seen by a real toolweave MCP server over
HTTP, and a span the tool opens itself is the tool span's child. The real OpenTelemetry SDK's
in-memory exporter holds the spans."""

from __future__ import annotations

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.mcp.server.inprocess import serve_in_process
from toolweave.agent import Agent
from toolweave.agent.tracing import Tracing
from toolweave.llm import Message, ScriptedModel, ToolCallPart
from toolweave.mcp import Context, MCPClient, MCPServer, as_tools
from toolweave.tools import tool


def _server() -> MCPServer:
    server = MCPServer("traced")

    @server.tool(read_only=True)
    def parent(city: str, ctx: Context) -> str:
        """The traceparent this call came with."""
        return f"{city} {ctx.meta.get('traceparent', 'none')}"

    return server


def _traced() -> tuple[TracerProvider, Tracing, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, Tracing(provider), exporter


def _one(spans: tuple[ReadableSpan, ...], name: str) -> ReadableSpan:
    (span,) = [s for s in spans if s.name == name]
    return span


def _script(*calls: ToolCallPart) -> ScriptedModel:
    return ScriptedModel([Message.assistant("", list(calls)), Message.assistant("done")])


async def test_an_agents_mcp_call_names_its_tool_span_as_parent() -> None:
    _, tracing, exporter = _traced()
    calls = [ToolCallPart(f"c{i}", "parent", {"city": city}) for i, city in enumerate("京沪")]
    async with (
        serve_in_process(_server()) as url,
        MCPClient.http(url) as client,
    ):
        agent = Agent(_script(*calls), await as_tools(client), tracing=tracing)
        result = await agent.run("trace it")
    seen = {inv.call_id: inv.result.text for inv in result.invocations}
    spans = exporter.get_finished_spans()
    tool_spans = [s for s in spans if s.name == "execute_tool parent"]
    assert len(tool_spans) == 2  # two calls of one turn, concurrent: each sees its own span
    for span in tool_spans:
        context = span.get_span_context()
        call_id = (span.attributes or {})["gen_ai.tool.call.id"]
        flags = f"{context.trace_flags:02x}"
        city = "京" if call_id == "c0" else "沪"
        assert (
            seen[str(call_id)]
            == f"{city} 00-{context.trace_id:032x}-{context.span_id:016x}-{flags}"
        )
    assert len({s.context.trace_id for s in spans}) == 1


async def test_a_span_the_tool_opens_is_the_tool_spans_child() -> None:
    provider, tracing, exporter = _traced()
    tracer = provider.get_tracer("weather-service")

    @tool
    def lookup(city: str) -> str:
        """Looks a city up, in a span of its own."""
        with tracer.start_as_current_span("station lookup"):
            return f"{city}: 晴"

    agent = Agent(
        _script(ToolCallPart("c1", "lookup", {"city": "杭州"})), [lookup], tracing=tracing
    )
    await agent.run("杭州?")
    spans = exporter.get_finished_spans()
    inner, tool_span = _one(spans, "station lookup"), _one(spans, "execute_tool lookup")
    assert inner.parent is not None and inner.parent.span_id == tool_span.context.span_id
    turn = _one(spans, "turn 1")  # outside the tool, the turn is not the current span
    assert tool_span.parent is not None and tool_span.parent.span_id == turn.context.span_id
