"""`GovernedTool`: how `toolweave serve` wraps every published tool, so the host's call chain
(accounting, then governance: rules, hooks, approvals) runs around it; `ToolHost._publish` (in
host/app.py) makes one per tool."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolweave.governance.errors import GovernanceError
from toolweave.mcp.server import is_probe, probe_result
from toolweave.mcp.server.context import Context
from toolweave.mcp.shared.errors import MCPError
from toolweave.tools.base import Tool, ToolAnnotations
from toolweave.tools.calls import CallMiddleware, ToolCall, chain
from toolweave.tools.context import ToolContext
from toolweave.tools.errors import ToolError
from toolweave.tools.function_tool import FunctionTool
from toolweave.tools.permissions import Permission
from toolweave.tools.registry import ToolRegistry
from toolweave.tools.result import TextContent, ToolResult


class GovernedTool:
    """A published tool behind the host's call chain: accounting, then governance (rules,
    hooks, approvals), around `ToolRegistry.invoke` of the host's registry, which runs the tool
    under `timeout` (running it only: a person's answer may take longer), or `task_timeout`
    when the call may become an MCP task (given, and the client declared tasks). Adds
    `mcp:<server>` to proxied tools' permissions (the policy decided at publication, in
    `ToolHost._publish`).
    """

    def __init__(
        self,
        inner: Tool,
        registry: ToolRegistry,
        middlewares: Sequence[CallMiddleware] = (),
        timeout: float | None = None,
        task_timeout: float | None = None,
    ) -> None:
        self.inner = inner
        self.timeout = timeout
        self.task_timeout = task_timeout
        self._handler = chain(middlewares, registry.run_call)
        server = getattr(inner, "server", None)
        extra = {Permission.custom(f"mcp:{server.lower()}")} if isinstance(server, str) else set()
        self._permissions = frozenset(inner.permissions | extra)
        # A wrapped function tool keeps the outputSchema derived from its return type.
        self.func = inner.func if isinstance(inner, FunctionTool) else None

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def description(self) -> str:
        return self.inner.description

    @property
    def parameters(self) -> dict[str, Any]:
        return self.inner.parameters

    @property
    def permissions(self) -> frozenset[Permission]:
        return self._permissions

    @property
    def annotations(self) -> ToolAnnotations:
        return self.inner.annotations

    @property
    def primary_arg(self) -> str | None:
        return self.inner.primary_arg

    @property
    def supports_probe(self) -> bool:
        return getattr(self.inner, "supports_permission_probe", False) is True

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if is_probe(ctx):  # only published tools are called: the policy let this one through
            found = await self.inner.permission_patterns(args)  # type: ignore[attr-defined]
            if found is None:
                raise ToolError(f"tool {self.name!r} does not support permission probes")
            return probe_result(found.patterns, found.always)
        timeout = self.timeout
        if self.task_timeout is not None and isinstance(ctx, Context) and ctx.may_run_as_task:
            timeout = self.task_timeout  # past task_after it is a task: no request to time out
        call = ToolCall(self.name, ctx.call_id, args, self.inner, ctx, timeout)
        try:
            inv = await self._handler(call)
        except (GovernanceError, ToolError) as refused:
            return ToolResult.error(refused.message)
        failure = inv.error.__cause__ if inv.error is not None else None
        if isinstance(failure, MCPError):
            raise failure  # a downstream failure: a JSON-RPC error, as the server maps it
        result = inv.result
        if call.notes:
            content = [*result.content, *(TextContent(n) for n in call.notes)]
            result = ToolResult(content, result.structured, result.is_error, result.metadata)
        return result


def unwrapped(tool: Tool) -> Tool:
    """The tool a served entry runs: the inner tool of a `GovernedTool`, else `tool` itself
    (what the console, `toolweave policy` and the agent's `--config` tools inspect)."""
    return tool.inner if isinstance(tool, GovernedTool) else tool
