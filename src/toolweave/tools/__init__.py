"""The tool core: the `Tool` protocol, `@tool`, results, errors, permissions and the registry.

This layer knows nothing about models or agents; everything above builds on it.
"""

from __future__ import annotations

from .arguments import parse_arguments, repair_json
from .base import Tool, ToolAnnotations, ToolDef, tool_def
from .context import CancellationSignal, ToolContext
from .errors import (
    ExecutionFailed,
    InvalidArguments,
    PermissionDenied,
    ToolCancelled,
    ToolError,
    ToolNotFound,
    ToolTimeout,
)
from .function_tool import FunctionTool, tool
from .permissions import Permission, PermissionPolicy
from .registry import ToolInvocation, ToolRegistry, ToolStats
from .result import (
    AudioContent,
    Content,
    ImageContent,
    ResourceContent,
    TextContent,
    ToolResult,
    to_tool_result,
)
from .shaping import shape_result, truncate_text, wrap_untrusted

__all__ = [
    "AudioContent",
    "CancellationSignal",
    "Content",
    "ExecutionFailed",
    "FunctionTool",
    "ImageContent",
    "InvalidArguments",
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
    "parse_arguments",
    "repair_json",
    "shape_result",
    "to_tool_result",
    "tool",
    "tool_def",
    "truncate_text",
    "wrap_untrusted",
]
