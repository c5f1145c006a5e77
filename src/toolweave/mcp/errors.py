"""Failures of the MCP layer, as members of the `ToolError` family.

An MCP failure is a transport or protocol failure, not a domain error the model can fix by
changing its arguments (a tool's own failure arrives as a result with `isError`), so every class
here is not recoverable by default: the agent loop stops rather than letting the model retry
against a broken connection.
"""

from __future__ import annotations

from typing import Any

from toolweave.tools.errors import ToolError


class MCPError(ToolError):
    """A request failed: the peer answered with an error, or the connection broke.

    `code` is the JSON-RPC error code when the peer sent one (None for local failures) and
    `data` the error's optional `data` member.
    """

    recoverable = False

    def __init__(
        self,
        message: str,
        *,
        code: int | None = None,
        data: Any = None,
        tool: str | None = None,
        recoverable: bool | None = None,
    ) -> None:
        super().__init__(message, tool=tool, recoverable=recoverable)
        self.code = code
        self.data = data


class MCPTimeout(MCPError):
    """A request got no answer within its timeout (or its hard maximum despite progress).

    The request was cancelled on the peer with `notifications/cancelled`; the session stays
    usable.
    """

    def __init__(self, message: str, *, timeout: float, tool: str | None = None) -> None:
        super().__init__(message, code=-32001, tool=tool)
        self.timeout = timeout


class MCPConnectionClosed(MCPError):
    """The connection to the peer is gone (process exited, stream closed, client closed)."""

    def __init__(self, message: str = "MCP connection closed", *, tool: str | None = None) -> None:
        super().__init__(message, code=-32000, tool=tool)
