"""A file writer that answers forge permission probes: the host learns what a call would touch
(`write:<path>`) before approving it, and the probe itself never writes.

    .venv/bin/python examples/probe_file_writer.py --root /tmp/sandbox

A probe is an ordinary `tools/call` whose params carry `_meta: {"forge.permission_patterns":
true}`; the answer is `{"content": [], "_meta": {"forge.patterns": [...], "forge.always":
[...]}}`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from toolweave.mcp import MCPServer, error_result
from toolweave.mcp.server.validators import safe_path
from toolweave.tools import ToolResult

server = MCPServer("file-writer", "1.0.0")
ROOT = Path.cwd()


def write_patterns(args: dict[str, str]) -> list[str]:
    """The canonical path the call would write, so `notes/../secret.txt` cannot pass for
    `notes/*`; a path escaping the root makes the probe an `isError` result."""
    return [f"write:{safe_path(ROOT, args['path']).relative_to(ROOT.resolve()).as_posix()}"]


@server.tool(
    destructive=True,
    idempotent=True,
    permission_patterns=write_patterns,
    always_patterns=["fs:write"],
)
def write_file(path: str, content: str) -> ToolResult | str:
    """Write text to a file under the server's root directory.

    Args:
        path: File path relative to the root, e.g. notes/today.md
        content: The text to write
    """
    try:
        target = safe_path(ROOT, path)
    except ValueError as exc:
        return error_result(str(exc))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content, encoding="utf-8")
    return f"wrote {len(content.encode())} bytes to {path}"


@server.tool(read_only=True)
def read_file(path: str) -> ToolResult | str:
    """Read a text file under the server's root directory.

    Args:
        path: File path relative to the root
    """
    try:
        target = safe_path(ROOT, path)
    except ValueError as exc:
        return error_result(str(exc))
    if not target.is_file():
        return error_result(f"not found: {path}")
    return target.read_text(encoding="utf-8")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="A probe-able file writer MCP server (stdio).")
    parser.add_argument("--root", default=".", help="directory the tools may touch")
    ROOT = Path(parser.parse_args().root).resolve()
    server.run()
