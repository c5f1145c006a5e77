"""The Claude Code shape of what hooks read and write: `tool_input` with the `file_path` alias
a file tool's hooks expect, a hook's `updatedInput` without that alias, and `tool_response` as
an object (a shell's output as `stdout`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolweave.governance._rule_patterns import resolve_path
from toolweave.tools import Tool


def _claude_input(args: Mapping[str, Any], tool: Tool | None) -> dict[str, Any]:
    """`tool_input` with Claude Code's `file_path` (absolute) beside a file tool's `path`, so
    hooks written for Read/Write/Edit (`jq -r .tool_input.file_path`) find the file."""
    tool_input = dict(args)
    root = getattr(tool, "permission_cwd", None)
    path = args.get("path")
    if isinstance(root, str) and isinstance(path, str) and "file_path" not in args:
        tool_input["file_path"] = resolve_path(path, root)
    return tool_input


def _own_arguments(updated: dict[str, Any] | None, tool: Tool) -> dict[str, Any] | None:
    """A hook's `updatedInput` without the `file_path` alias the tool does not take."""
    if updated is None or "file_path" not in updated:
        return updated
    if "file_path" in tool.parameters.get("properties", {}):
        return updated
    return {k: v for k, v in updated.items() if k != "file_path"}


def _response_object(name: str, response: Any) -> dict[str, Any]:
    """`tool_response` as Claude Code sends it: an object (a shell's output as `stdout`)."""
    if isinstance(response, dict):
        return response
    if name == "Bash" and isinstance(response, str):
        return {"stdout": response, "stderr": "", "interrupted": False, "isImage": False}
    return {"output": response}
