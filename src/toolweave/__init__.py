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
        "ExecutionFailed",
        "FunctionTool",
        "InvalidArguments",
        "Permission",
        "PermissionDenied",
        "PermissionPolicy",
        "Tool",
        "ToolAnnotations",
        "ToolCancelled",
        "ToolContext",
        "ToolDef",
        "ToolError",
        "ToolNotFound",
        "ToolRegistry",
        "ToolResult",
        "ToolTimeout",
        "tool",
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
        ExecutionFailed,
        FunctionTool,
        InvalidArguments,
        Permission,
        PermissionDenied,
        PermissionPolicy,
        Tool,
        ToolAnnotations,
        ToolCancelled,
        ToolContext,
        ToolDef,
        ToolError,
        ToolNotFound,
        ToolRegistry,
        ToolResult,
        ToolTimeout,
        tool,
    )


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


# A literal list: mypy --strict users need it to see these names as exported (a test checks
# it against _EXPORTS and the TYPE_CHECKING imports).
__all__ = [
    "Agent",
    "ApprovalRequired",
    "ConfigError",
    "ExecutionFailed",
    "FunctionModel",
    "FunctionTool",
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
    "Permission",
    "PermissionDenied",
    "PermissionPolicy",
    "RunResult",
    "ScriptedModel",
    "Session",
    "Tool",
    "ToolAnnotations",
    "ToolCancelled",
    "ToolContext",
    "ToolDef",
    "ToolError",
    "ToolNotFound",
    "ToolRegistry",
    "ToolResult",
    "ToolTimeout",
    "ToolweaveError",
    "__version__",
    "model_from_string",
    "tool",
]
