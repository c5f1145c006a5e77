"""MCP tools as toolweave `Tool`s, and the forge permission-pattern probe.

A bridged tool carries the server's input schema and annotations unchanged, so the model and
the permission layer see exactly what the server declared. Results are capped (8000 characters
by default) because a huge tool result stays in the conversation for every later turn. Names are
made safe for every LLM provider (letters, digits, `_`, `-`, at most 64) while the original name
is kept for the wire.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolweave.mcp.client.models import MCPToolInfo
from toolweave.mcp.client.upstream import Caller, asking_caller
from toolweave.mcp.shared.constants import (
    CALLER_EXTRA,
    PROBE_ALWAYS,
    PROBE_PATTERNS,
    PROBE_REQUEST,
    PROBE_SUPPORTED,
)
from toolweave.mcp.shared.errors import MCPError
from toolweave.tools.base import ToolAnnotations
from toolweave.tools.calls import call_rounds
from toolweave.tools.clients import client_key
from toolweave.tools.context import ToolContext
from toolweave.tools.errors import ToolCancelled
from toolweave.tools.permissions import Permission
from toolweave.tools.result import Content, ResourceContent, TextContent, ToolResult
from toolweave.tools.shaping import DEFAULT_MAX_CHARS, truncate_text

if TYPE_CHECKING:
    from toolweave.mcp.client import MCPClient


_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
ToolFilter = Iterable[str] | Callable[[MCPToolInfo], bool]


def safe_tool_name(name: str) -> str:
    """`name` with every character providers reject replaced by `_`, cut to 64 characters."""
    return (_UNSAFE.sub("_", name) or "_")[:64]


def matches(info: MCPToolInfo, spec: ToolFilter | None, *, default: bool) -> bool:
    """Does a tool pass a filter? Strings are exact names, `prefix*` patterns or `~keyword`
    (matched case-insensitively in the name or description); a callable decides itself."""
    if spec is None:
        return default
    if callable(spec):
        return bool(spec(info))
    for item in spec:
        if item.startswith("~"):
            word = item[1:].lower()
            if word in info.name.lower() or word in info.description.lower():
                return True
        elif item.endswith("*"):
            if info.name.startswith(item[:-1]):
                return True
        elif item == info.name:
            return True
    return False


def select(
    tools: Iterable[MCPToolInfo], include: ToolFilter | None, exclude: ToolFilter | None
) -> list[MCPToolInfo]:
    return [
        t
        for t in tools
        if matches(t, include, default=True) and not matches(t, exclude, default=False)
    ]


@dataclass(frozen=True, slots=True)
class PermissionPatterns:
    """What a probed tool says it would touch: argument-dependent and always-applying patterns."""

    patterns: list[str]
    always: list[str]


class MCPTool:
    """One MCP server tool behind the `Tool` protocol."""

    def __init__(
        self,
        client: MCPClient,
        info: MCPToolInfo,
        *,
        name: str | None = None,
        max_chars: int = DEFAULT_MAX_CHARS,
        server: str | None = None,
    ) -> None:
        self.client = client
        self.info = info
        self.remote_name = info.name
        self.server = server or client.name
        self._name = safe_tool_name(name or info.name)
        self.max_chars = max_chars
        self.tags = frozenset({"mcp", f"mcp:{self.server}"})
        self.category = "mcp"

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return self.info.description or self.info.title or self.info.name

    @property
    def parameters(self) -> dict[str, Any]:
        return self.info.input_schema

    @property
    def permissions(self) -> frozenset[Permission]:
        return frozenset()

    @property
    def annotations(self) -> ToolAnnotations:
        return self.info.tool_annotations

    @property
    def primary_arg(self) -> str | None:
        return None

    @property
    def destructive_declared(self) -> bool:
        """The server said `destructiveHint: true` (and not `readOnlyHint`): governance asks
        before such a call by default, as for a local tool marked `destructive=True`. A tool
        that says nothing keeps MCP's implied hint, which does not ask."""
        hints = self.info.annotations
        return hints.get("destructiveHint") is True and hints.get("readOnlyHint") is not True

    @property
    def supports_permission_probe(self) -> bool:
        return self.info.meta.get(PROBE_SUPPORTED) is True

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        on_progress = ctx.report_progress if ctx.progress_callback is not None else None
        # Its server's questions go to the caller; a retried round goes on with a held call.
        caller = ctx.extras.get(CALLER_EXTRA)
        timed = _TimedCaller(caller, ctx) if caller is not None else None
        with asking_caller(timed, call_rounds(ctx), client_key(ctx)):
            call = asyncio.ensure_future(
                self.client.call_tool(self.remote_name, args, on_progress=on_progress)
            )
        waiter = asyncio.ensure_future(ctx.wait_cancelled())
        try:
            await asyncio.wait({call, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
            if not call.done():
                call.cancel()  # the client tells the server with notifications/cancelled
                with contextlib.suppress(asyncio.CancelledError):
                    await call
        if call.cancelled():
            raise ToolCancelled(f"MCP tool '{self.name}' was cancelled.", tool=self.name)
        return self.shape(call.result())

    def shape(self, result: ToolResult) -> ToolResult:
        """Cap the text the model will read at `max_chars`; other parts pass unchanged."""
        texts = [p for p in result.content if isinstance(p, TextContent)]
        total = sum(len(p.text) for p in texts)
        total += sum(len(p.text or "") for p in result.content if isinstance(p, ResourceContent))
        if total <= self.max_chars:
            return result
        content: list[Content] = []
        merged = result.text
        content.append(TextContent(truncate_text(merged, self.max_chars)))
        content.extend(
            p for p in result.content if not isinstance(p, TextContent | ResourceContent)
        )
        content.extend(
            ResourceContent(p.uri, p.mime_type, None, None, p.name)
            for p in result.content
            if isinstance(p, ResourceContent)
        )
        return ToolResult(content, result.structured, result.is_error, dict(result.metadata))

    async def permission_patterns(self, args: dict[str, Any]) -> PermissionPatterns | None:
        """Ask the server which permission patterns a call would need, without running it.

        Returns None, sending nothing, for tools that do not advertise
        `forge.supports_permission_patterns`: an unaware server would run the tool for real.
        An errored probe answer (`isError`) raises `MCPError`: it is never an empty grant.
        """
        if not self.supports_permission_probe:
            return None
        result = await self.client.call_tool(self.remote_name, args, meta={PROBE_REQUEST: True})
        if result.is_error:  # refused arguments or a broken probe: never read as "nothing needed"
            raise MCPError(
                f"the permission probe of MCP tool {self.name!r} failed, so the call is refused: "
                f"{result.text or 'no detail'}",
                tool=self.name,
            )
        meta = result.metadata.get("meta") or {}
        patterns = meta.get(PROBE_PATTERNS)
        always = meta.get(PROBE_ALWAYS)
        return PermissionPatterns(
            patterns=[str(p) for p in patterns] if isinstance(patterns, list) else [],
            always=[str(p) for p in always] if isinstance(always, list) else [],
        )

    def __repr__(self) -> str:
        return f"MCPTool({self.name!r}, server={self.server!r})"


async def as_tools(
    client: MCPClient,
    prefix: str | None = None,
    include: ToolFilter | None = None,
    exclude: ToolFilter | None = None,
    *,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> list[MCPTool]:
    """The client's tools (filtered) as `Tool`s, names prefixed with `prefix` when given."""
    infos = select(await client.list_tools(), include, exclude)
    return [
        MCPTool(client, info, name=f"{prefix or ''}{info.name}", max_chars=max_chars)
        for info in infos
    ]


class _TimedCaller:
    """The caller of a proxied call, asked with the call's timeout stopped: the wait for the
    person answering a downstream server's question is not the tool's running time."""

    def __init__(self, caller: Caller, ctx: ToolContext) -> None:
        self.caller = caller
        self.ctx = ctx

    async def ask_caller(
        self, method: str, params: dict[str, Any], key: str | None = None
    ) -> dict[str, Any]:
        with self.ctx.waiting_for_person():
            return await self.caller.ask_caller(method, params, key)

    async def notify_caller(self, method: str, params: dict[str, Any]) -> None:
        await self.caller.notify_caller(method, params)
