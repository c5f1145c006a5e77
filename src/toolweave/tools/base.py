"""The `Tool` protocol every tool implements, its annotations, and the definition models see.

Anything with these attributes and an async `execute` is a tool: function tools, MCP-proxied
tools, built-ins. The registry and the agent loop depend only on this protocol.

An all-in-one tool whose actions differ (the `note`, `kb` and `memory` tools: `list` reads,
`add` writes, `delete` destroys) declares the annotations of one call with `annotations_for`
(`PerCallAnnotations`); `call_annotations` is what governance's read-only, plan-mode and
ask-by-default checks consult, so a read-only action runs where the whole tool would ask.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

from toolweave.tools.context import ToolContext
from toolweave.tools.permissions import Permission
from toolweave.tools.result import ToolResult


@dataclass(frozen=True, slots=True)
class ToolAnnotations:
    """Behaviour hints, with the same meaning as MCP's tool annotations.

    Defaults follow MCP: a tool is assumed to write, possibly destructively, not idempotently,
    and to reach the open world, unless it says otherwise. As in the MCP spec, `destructive`
    and `idempotent` mean something only when `read_only` is false: a read-only tool changes
    nothing, so it is never destructive and always idempotent (normalised at construction, so
    a `readOnlyHint: true` tool can never be republished or converted as destructive).
    """

    read_only: bool = False
    destructive: bool = True
    idempotent: bool = False
    open_world: bool = True
    title: str | None = None

    def __post_init__(self) -> None:
        if self.read_only:
            object.__setattr__(self, "destructive", False)
            object.__setattr__(self, "idempotent", True)

    def to_mcp(self) -> dict[str, Any]:
        """The MCP wire form (`readOnlyHint`, ...)."""
        hints: dict[str, Any] = {
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": self.open_world,
        }
        if self.title is not None:
            hints["title"] = self.title
        return hints

    @classmethod
    def from_mcp(cls, hints: dict[str, Any] | None) -> ToolAnnotations:
        hints = hints or {}
        return cls(
            read_only=bool(hints.get("readOnlyHint", False)),
            destructive=bool(hints.get("destructiveHint", True)),
            idempotent=bool(hints.get("idempotentHint", False)),
            open_world=bool(hints.get("openWorldHint", True)),
            title=hints.get("title"),
        )


@dataclass(frozen=True, slots=True)
class ToolDef:
    """What a model is told about a tool: name, description and JSON Schema parameters."""

    name: str
    description: str
    parameters: dict[str, Any]


@runtime_checkable
class Tool(Protocol):
    """A callable capability with an exact JSON Schema."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def parameters(self) -> dict[str, Any]: ...

    @property
    def permissions(self) -> frozenset[Permission]: ...

    @property
    def annotations(self) -> ToolAnnotations: ...

    @property
    def primary_arg(self) -> str | None:
        """The argument policy rules match on (`command` for a shell, `path` for files)."""
        ...

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult: ...


def tool_def(tool: Tool) -> ToolDef:
    return ToolDef(name=tool.name, description=tool.description, parameters=tool.parameters)


@runtime_checkable
class PerCallAnnotations(Protocol):
    """A tool whose annotations depend on its arguments declares those of one call."""

    def annotations_for(self, args: Mapping[str, Any]) -> ToolAnnotations: ...


def call_annotations(tool: Tool, args: Mapping[str, Any] | None) -> ToolAnnotations:
    """The annotations of calling `tool` with `args`: the tool's `annotations_for(args)` where it
    declares them per call, else its annotations (also when `args` is None)."""
    if args is not None and isinstance(tool, PerCallAnnotations):
        return tool.annotations_for(args)
    return tool.annotations


def action_annotations(
    whole: ToolAnnotations,
    action: object,
    *,
    reads: Collection[str],
    writes: Collection[str],
    deletes: Collection[str],
) -> ToolAnnotations:
    """One call's annotations of an all-in-one tool chosen by an `action` argument: an action in
    `reads` is read-only, one in `writes` writes without destroying, one in `deletes` is
    destructive; any other (or a missing) action keeps the whole tool's `whole`."""
    if not isinstance(action, str):
        return whole
    if action in reads:
        return replace(whole, read_only=True)
    if action in writes:
        return replace(whole, read_only=False, destructive=False)
    if action in deletes:
        return replace(whole, read_only=False, destructive=True)
    return whole
