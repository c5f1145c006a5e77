"""Failures of the MCP layer, a family of their own under `ToolweaveError` (a connection or
protocol failure is not a failed tool call; `ToolRegistry.invoke` makes one raised by a tool
that call's outcome), and the wire error codes.

An MCP failure is a transport or protocol failure, not a domain error the model can fix by
changing its arguments (a tool's own failure arrives as a result with `isError`), so every class
here is not recoverable by default: the agent loop stops rather than letting the model retry
against a broken connection.
"""

from __future__ import annotations

from typing import Any

from toolweave.errors import ToolweaveError

# JSON-RPC 2.0 error codes, and MCP's own (-32000 and below).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001
RESOURCE_NOT_FOUND = -32002
URL_ELICITATION_REQUIRED = -32042


class MCPError(ToolweaveError):
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
        super().__init__(message)
        self.message, self.tool = message, tool
        if recoverable is not None:
            self.recoverable = recoverable
        self.code = code
        self.data = data


class MCPTimeout(MCPError):
    """A request got no answer within its timeout (or its hard maximum despite progress).

    The request was cancelled on the peer with `notifications/cancelled`; the session stays
    usable.
    """

    def __init__(self, message: str, *, timeout: float, tool: str | None = None) -> None:
        super().__init__(message, code=REQUEST_TIMEOUT, tool=tool)
        self.timeout = timeout


class MCPConnectionClosed(MCPError):
    """The connection to the peer is gone (process exited, stream closed, client closed)."""

    def __init__(self, message: str = "MCP connection closed", *, tool: str | None = None) -> None:
        super().__init__(message, code=CONNECTION_CLOSED, tool=tool)


class OAuthError(MCPError):
    """Authorization against a protected MCP server failed; the message says at which step."""


class JSONRPCError(MCPError):
    """An error as it travels on the wire: `code`, `message` and optional `data`."""

    code: int

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message, code=code, data=data)

    def to_dict(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    def __repr__(self) -> str:
        return f"JSONRPCError({self.code}, {self.message!r})"
