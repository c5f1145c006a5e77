"""toolweave: typed tools, provider-neutral tool calling, MCP and an agent loop.

Public names are loaded on first use (PEP 562) so `import toolweave` stays fast; pydantic and
the rest are imported only when a name that needs them is touched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave._lazy import lazy_exports
from toolweave.version import __version__

_EXPORTS: dict[str, str] = {
    name: "toolweave.tools"
    for name in (
        "ApprovalRequired",
        "AudioContent",
        "CancellationSignal",
        "Content",
        "ExecutionFailed",
        "FunctionTool",
        "ImageContent",
        "InvalidArguments",
        "OutputSink",
        "Permission",
        "PermissionDenied",
        "PermissionPolicy",
        "ResourceContent",
        "TextContent",
        "Tool",
        "ToolAnnotations",
        "ToolCancelled",
        "ToolContext",
        "ToolDef",
        "ToolError",
        "ToolInvocation",
        "ToolNotFound",
        "ToolRegistry",
        "ToolResult",
        "ToolStats",
        "ToolTimeout",
        "UserOutput",
        "parse_arguments",
        "repair_json",
        "shape_result",
        "to_tool_result",
        "tool",
        "tool_def",
        "truncate_text",
        "wrap_untrusted",
    )
}
_EXPORTS.update({name: "toolweave.agent" for name in ("Agent", "RunResult", "Session")})
_EXPORTS.update(
    {name: "toolweave.errors" for name in ("ConfigError", "MissingDependency", "ToolweaveError")}
)
_EXPORTS.update(
    {
        name: "toolweave.mcp"
        for name in ("MCPClient", "MCPError", "MCPManager", "MCPServer", "MCPTimeout")
    }
)
_EXPORTS.update(
    {
        name: "toolweave.llm"
        for name in (
            "FunctionModel",
            "Message",
            "ModelConfigError",
            "ModelError",
            "ModelRequest",
            "ModelResponse",
            "ScriptedModel",
            "model_from_string",
        )
    }
)

if TYPE_CHECKING:
    from toolweave.agent import Agent, RunResult, Session
    from toolweave.errors import ConfigError, MissingDependency, ToolweaveError
    from toolweave.llm import (
        FunctionModel,
        Message,
        ModelConfigError,
        ModelError,
        ModelRequest,
        ModelResponse,
        ScriptedModel,
        model_from_string,
    )
    from toolweave.mcp import MCPClient, MCPError, MCPManager, MCPServer, MCPTimeout
    from toolweave.tools import (
        ApprovalRequired,
        AudioContent,
        CancellationSignal,
        Content,
        ExecutionFailed,
        FunctionTool,
        ImageContent,
        InvalidArguments,
        OutputSink,
        Permission,
        PermissionDenied,
        PermissionPolicy,
        ResourceContent,
        TextContent,
        Tool,
        ToolAnnotations,
        ToolCancelled,
        ToolContext,
        ToolDef,
        ToolError,
        ToolInvocation,
        ToolNotFound,
        ToolRegistry,
        ToolResult,
        ToolStats,
        ToolTimeout,
        UserOutput,
        parse_arguments,
        repair_json,
        shape_result,
        to_tool_result,
        tool,
        tool_def,
        truncate_text,
        wrap_untrusted,
    )


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


# A literal list: mypy --strict users need it to see these names as exported (a test checks
# it against _EXPORTS and the TYPE_CHECKING imports).
__all__ = [
    "Agent",
    "ApprovalRequired",
    "AudioContent",
    "CancellationSignal",
    "ConfigError",
    "Content",
    "ExecutionFailed",
    "FunctionModel",
    "FunctionTool",
    "ImageContent",
    "InvalidArguments",
    "MCPClient",
    "MCPError",
    "MCPManager",
    "MCPServer",
    "MCPTimeout",
    "Message",
    "MissingDependency",
    "ModelConfigError",
    "ModelError",
    "ModelRequest",
    "ModelResponse",
    "OutputSink",
    "Permission",
    "PermissionDenied",
    "PermissionPolicy",
    "ResourceContent",
    "RunResult",
    "ScriptedModel",
    "Session",
    "TextContent",
    "Tool",
    "ToolAnnotations",
    "ToolCancelled",
    "ToolContext",
    "ToolDef",
    "ToolError",
    "ToolInvocation",
    "ToolNotFound",
    "ToolRegistry",
    "ToolResult",
    "ToolStats",
    "ToolTimeout",
    "ToolweaveError",
    "UserOutput",
    "__version__",
    "model_from_string",
    "parse_arguments",
    "repair_json",
    "shape_result",
    "to_tool_result",
    "tool",
    "tool_def",
    "truncate_text",
    "wrap_untrusted",
]
