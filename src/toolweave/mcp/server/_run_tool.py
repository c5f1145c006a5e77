"""Running one published tool call: the tool's own failures become error results.

Below both callers, the `tools/call` handler and the task runner (`_tasks`), which each hand it
the entry, the tool and the call's `Context`. Error policy (spec 2025-11-25 and the forge
contract): invalid arguments and anything the tool itself raises are a result with
`isError: true` naming the problem, so the model can correct itself; MCP/transport failures
inside a tool (a proxied server died, sampling timed out) and questions for the client
(`InputRequired`) propagate.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import TYPE_CHECKING, Any

from toolweave.mcp.server.results import error_result
from toolweave.mcp.shared.constants import PROBE_ALWAYS, PROBE_PATTERNS
from toolweave.mcp.shared.errors import MCPError
from toolweave.tools.errors import ToolError
from toolweave.tools.result import ToolResult

if TYPE_CHECKING:
    from toolweave.mcp.server._tools import ToolEntry
    from toolweave.mcp.server.context import Context
    from toolweave.tools.base import Tool


async def run_tool(entry: ToolEntry, tool: Tool, args: dict[str, Any], ctx: Context) -> ToolResult:
    """Run one call of `tool` (or answer its probe): its failures become error results, MCP
    failures and questions for the client (`InputRequired`) propagate."""
    name = entry.name
    try:
        if ctx.probe:
            return await _probe(entry, tool, args, ctx)
        if entry.timeout is not None:
            async with asyncio.timeout(entry.timeout):
                return await tool.execute(args, ctx)
        return await tool.execute(args, ctx)
    except asyncio.CancelledError:
        ctx.cancel()  # a sync handler in a worker thread can poll ctx.cancelled
        raise
    except MCPError:
        raise  # infrastructure failure: a JSON-RPC error, not something the model can fix
    except ToolError as exc:
        return error_result(exc.message)
    except TimeoutError as exc:
        if entry.timeout is None:  # raised by the tool itself (a `Tool` added with add_tool)
            return error_result(f"Tool {name!r} timed out: {exc or 'no detail'}")
        ctx.cancel()
        return error_result(
            f"Tool {name!r} timed out after {entry.timeout:g}s; try a smaller request"
        )


async def _probe(entry: Any, tool: Any, args: dict[str, Any], ctx: Context) -> ToolResult:
    """Answer a forge permission probe without running the tool (unless it handles probes)."""
    if not entry.supports_probe:
        return error_result(
            f"Tool {entry.name!r} does not support permission probes (it declares no "
            "permission patterns); call it without _meta['forge.permission_patterns']"
        )
    if entry.probe is True:  # the tool answers probes itself (is_probe(ctx) / probe_result)
        result: ToolResult = await tool.execute(args, ctx)
        return result
    schema = getattr(tool, "schema", None)
    if schema is not None:  # validate first so patterns are computed from well-formed input
        args = schema.validate(entry.name, args)
    try:
        patterns = entry.probe(args)
        if inspect.isawaitable(patterns):
            patterns = await patterns
    except ValueError as exc:  # e.g. a validator refusing the path the call would write
        return error_result(f"Tool {entry.name!r} refuses these arguments: {exc}")
    meta = {PROBE_PATTERNS: list(patterns), PROBE_ALWAYS: list(entry.always)}
    return ToolResult(content=[], metadata={"_meta": meta})
