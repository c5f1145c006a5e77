"""The 2026-07-28 diagnostic tools the conformance suite's server scenarios call, added to the
conformance example server by `register(server)`.

They show the toolkit's 2026 features at work: questions to the client that become
input-required results (SEP-2322), capability checks (-32021), log levels per request, list
changes on `subscriptions/listen` streams, tasks (SEP-2663) and custom `Mcp-Param-*` headers
(SEP-2243).
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

from pydantic import Field

from toolweave.mcp import Context, MCPServer
from toolweave.mcp.shared.errors import INTERNAL_ERROR, JSONRPCError


def _schema(field: str, kind: str = "string") -> dict[str, Any]:
    return {"type": "object", "properties": {field: {"type": kind}}, "required": [field]}


def _content(answer: dict[str, Any]) -> dict[str, Any]:
    content = answer.get("content")
    return content if isinstance(content, dict) else {}


def register_stateless(server: MCPServer) -> None:
    """Tools the `server-stateless` scenario needs to exercise SEP-2575's rules."""

    @server.tool(description="Asks for sampling whatever the client declared (expects -32021)")
    async def test_missing_capability(ctx: Context) -> str:
        result = await ctx.sample("Say hello", max_tokens=10)
        return json.dumps(result.get("content"))

    @server.tool(description="Reports progress, then asks the user: never a request on the stream")
    async def test_streaming_elicitation(ctx: Context) -> str:
        await ctx.report_progress(1, 2, "about to ask")
        answer = await ctx.elicit("Continue?", _schema("ok", "boolean"), key="continue")
        return f"answered: {answer.get('action')}"

    @server.tool(description="Logs at every level; nothing reaches a client that set no logLevel")
    async def test_logging_tool(ctx: Context) -> str:
        for level in ("debug", "info", "warning", "error"):
            await ctx.log(level, f"a {level} message")
        return "logged"

    @server.tool(description="Tells listeners that the tool list changed")
    async def test_trigger_tool_change() -> str:
        await server.notify_tools_changed()
        return "tools/list_changed sent"

    @server.tool(description="Tells listeners that the prompt list changed")
    async def test_trigger_prompt_change() -> str:
        await server.notify_prompts_changed()
        return "prompts/list_changed sent"


def register_input_required(server: MCPServer) -> None:
    """Tools and a prompt whose questions become input-required results in 2026-07-28."""

    @server.tool(description="Asks the user's name (one elicitation)")
    async def test_input_required_result_elicitation(ctx: Context) -> str:
        answer = await ctx.elicit("What is your name?", _schema("name"), key="user_name")
        return f"Hello, {_content(answer).get('name', 'stranger')}!"

    @server.tool(description="Asks the client's model a question (one sampling request)")
    async def test_input_required_result_sampling(ctx: Context) -> str:
        answer = await ctx.sample(
            "What is the capital of France?", max_tokens=100, key="capital_question"
        )
        return f"The model said: {(answer.get('content') or {}).get('text', '')}"

    @server.tool(description="Asks for the client's roots")
    async def test_input_required_result_list_roots(ctx: Context) -> str:
        roots = await ctx.list_roots(key="client_roots")
        return "Roots: " + ", ".join(str(root.get("uri")) for root in roots)

    async def confirm(ctx: Context) -> bool:
        answer = await ctx.elicit("Please confirm", _schema("ok", "boolean"), key="confirm")
        return bool(_content(answer).get("ok"))

    @server.tool(description="Asks for a confirmation carried with a signed requestState")
    async def test_input_required_result_request_state(ctx: Context) -> str:
        return f"state-ok: confirmed={await confirm(ctx)}"

    @server.tool(description="Asks three questions at once: elicitation, sampling and roots")
    async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
        name, greeting, roots = await asyncio.gather(
            ctx.elicit("What is your name?", _schema("name"), key="user_name"),
            ctx.sample("Generate a greeting", max_tokens=50, key="greeting"),
            ctx.list_roots(key="client_roots"),
        )
        text = (greeting.get("content") or {}).get("text", "")
        return f"{text} {_content(name).get('name')} ({len(roots)} roots)"

    @server.tool(description="Asks two questions, one per round")
    async def test_input_required_result_multi_round(ctx: Context) -> str:
        name = await ctx.elicit("Step 1: What is your name?", _schema("name"), key="step1")
        color = await ctx.elicit(
            "Step 2: What is your favorite color?", _schema("color"), key="step2"
        )
        return f"{_content(name).get('name')} likes {_content(color).get('color')}"

    @server.tool(description="Asks a confirmation; a tampered requestState is refused")
    async def test_input_required_result_tampered_state(ctx: Context) -> str:
        return f"confirmed={await confirm(ctx)}"

    @server.tool(description="Asks only what the client declared it can answer")
    async def test_input_required_result_capabilities(ctx: Context) -> str:
        caps = ctx.client_capabilities
        asks = []
        if "elicitation" in caps:
            asks.append(ctx.elicit("What is your name?", _schema("name"), key="user_name"))
        if "sampling" in caps:
            asks.append(ctx.sample("Say hello", max_tokens=20, key="greeting"))
        answers = await asyncio.gather(*asks)
        return f"{len(answers)} answers"

    @server.prompt(description="A prompt that asks the user for context first")
    async def test_input_required_result_prompt(ctx: Context) -> str:
        answer = await ctx.elicit(
            "What context should the prompt use?", _schema("context"), key="user_context"
        )
        return f"Use this context: {_content(answer).get('context', '')}"


def register_tasks(server: MCPServer) -> None:
    """The fixtures of the `tasks-*` scenarios (SEP-2663)."""

    @server.tool(description="Greets at once (never a task)")
    def greet(name: str) -> str:
        return f"Hello, {name}!"

    @server.tool(description="Sleeps `seconds`, reporting progress, then answers", task="optional")
    async def slow_compute(seconds: float, ctx: Context, label: str = "") -> str:
        if seconds:
            await ctx.report_progress(0, seconds, f"computing {label}")
            await asyncio.sleep(seconds)
        return f"computed {label} in {seconds:g}s"

    @server.tool(description="Fails as a tool after a second (only as a task)", task="required")
    async def failing_job() -> str:
        await asyncio.sleep(1)
        raise RuntimeError("the job failed, as it always does")

    @server.tool(description="Ends in a protocol error (a failed task)", task="optional")
    async def protocol_error_job() -> str:
        await asyncio.sleep(0.1)
        raise JSONRPCError(INTERNAL_ERROR, "the job's backend broke")

    @server.tool(description="Looks the file up, then asks before deleting it", task="optional")
    async def confirm_delete(filename: str, ctx: Context) -> str:
        await asyncio.sleep(0.05)  # the lookup: the call is a task by now
        answer = await ctx.elicit(f"Delete {filename}?", _schema("confirm", "boolean"))
        return f"deleted {filename}" if _content(answer).get("confirm") else "kept"

    @server.tool(description="Asks two questions at once while a task", task="optional")
    async def multi_input(ctx: Context) -> str:
        await asyncio.sleep(0.05)
        first, second = await asyncio.gather(
            ctx.elicit("First name?", _schema("name"), key="first"),
            ctx.elicit("Second name?", _schema("name"), key="second"),
        )
        return f"{_content(first).get('name')} and {_content(second).get('name')}"

    @server.tool(description="Asks the user's name, then works on as a task", task="required")
    async def test_tool_with_task(ctx: Context) -> str:
        answer = await ctx.elicit("What is your name?", _schema("name"), key="user_name")
        await asyncio.sleep(0.2)
        return f"Hello, {_content(answer).get('name')}! (from a task)"


def register_custom_headers(server: MCPServer) -> None:
    """A tool whose `region` argument is mirrored into the `Mcp-Param-Region` header."""

    @server.tool(
        description="Echoes a region routed by the Mcp-Param-Region header (SEP-2243)",
        header_params={"region": "Region"},
    )
    def test_custom_headers(
        region: Annotated[str, Field(description="Where to run")],
        note: str | None = None,
    ) -> str:
        return f"region={region} note={note}"


def register(server: MCPServer) -> None:
    register_stateless(server)
    register_input_required(server)
    register_tasks(server)
    register_custom_headers(server)
