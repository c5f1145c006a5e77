"""The tool core: the `Tool` protocol, `@tool`, results, errors, permissions and the registry.

This layer knows nothing about models or agents; everything above builds on it. Names load on
first use (PEP 562): importing a light submodule (errors, context, result) must not pay for
pydantic, so an MCP stdio server can answer `initialize` before any schema is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "parse_arguments": "arguments",
    "repair_json": "arguments",
    "Tool": "base",
    "CallHandler": "calls",
    "CallMiddleware": "calls",
    "ToolCall": "calls",
    "chain": "calls",
    "ToolAnnotations": "base",
    "ToolDef": "base",
    "tool_def": "base",
    "CancellationSignal": "context",
    "ToolContext": "context",
    "OutputSink": "context",
    "UserOutput": "context",
    "ApprovalRequired": "errors",
    "ExecutionFailed": "errors",
    "InvalidArguments": "errors",
    "PermissionDenied": "errors",
    "ToolCancelled": "errors",
    "ToolError": "errors",
    "ToolNotFound": "errors",
    "ToolTimeout": "errors",
    "FunctionTool": "function_tool",
    "tool": "function_tool",
    "Permission": "permissions",
    "PermissionPolicy": "permissions",
    "ToolInvocation": "registry",
    "ToolRegistry": "registry",
    "ToolStats": "registry",
    "AudioContent": "result",
    "Content": "result",
    "ImageContent": "result",
    "ResourceContent": "result",
    "ResourceLink": "result",
    "TextContent": "result",
    "ToolResult": "result",
    "to_tool_result": "result",
    "shape_result": "shaping",
    "truncate_text": "shaping",
    "wrap_untrusted": "shaping",
}

if TYPE_CHECKING:
    from toolweave.tools.arguments import parse_arguments, repair_json
    from toolweave.tools.base import Tool, ToolAnnotations, ToolDef, tool_def
    from toolweave.tools.calls import CallHandler, CallMiddleware, ToolCall, chain
    from toolweave.tools.context import CancellationSignal, OutputSink, ToolContext, UserOutput
    from toolweave.tools.errors import (
        ApprovalRequired,
        ExecutionFailed,
        InvalidArguments,
        PermissionDenied,
        ToolCancelled,
        ToolError,
        ToolNotFound,
        ToolTimeout,
    )
    from toolweave.tools.function_tool import FunctionTool, tool
    from toolweave.tools.permissions import Permission, PermissionPolicy
    from toolweave.tools.registry import ToolInvocation, ToolRegistry, ToolStats
    from toolweave.tools.result import (
        AudioContent,
        Content,
        ImageContent,
        ResourceContent,
        ResourceLink,
        TextContent,
        ToolResult,
        to_tool_result,
    )
    from toolweave.tools.shaping import shape_result, truncate_text, wrap_untrusted

__all__ = [
    "ApprovalRequired",
    "AudioContent",
    "CallHandler",
    "CallMiddleware",
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
    "ResourceLink",
    "TextContent",
    "Tool",
    "ToolAnnotations",
    "ToolCall",
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
    "chain",
    "parse_arguments",
    "repair_json",
    "shape_result",
    "to_tool_result",
    "tool",
    "tool_def",
    "truncate_text",
    "wrap_untrusted",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
