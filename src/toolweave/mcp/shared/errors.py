"""Failures of the MCP layer, as members of the `ToolError` family, and the wire error codes.

An MCP failure is a transport or protocol failure, not a domain error the model can fix by
changing its arguments (a tool's own failure arrives as a result with `isError`), so every class
here is not recoverable by default: the agent loop stops rather than letting the model retry
against a broken connection.
"""

from __future__ import annotations

from typing import Any

from toolweave.tools.errors import ToolError

# JSON-RPC 2.0 error codes, and MCP's own (-32000 and below).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001
RESOURCE_NOT_FOUND = -32002
#: 2026-07-28: a mirrored header (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`) disagrees with the body.
HEADER_MISMATCH = -32020
#: 2026-07-28: serving the request needs a client capability the request did not declare.
MISSING_CLIENT_CAPABILITY = -32021
URL_ELICITATION_REQUIRED = -32042


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
        super().__init__(message, code=REQUEST_TIMEOUT, tool=tool)
        self.timeout = timeout


class MCPConnectionClosed(MCPError):
    """The connection to the peer is gone (process exited, stream closed, client closed)."""

    def __init__(self, message: str = "MCP connection closed", *, tool: str | None = None) -> None:
        super().__init__(message, code=CONNECTION_CLOSED, tool=tool)


class OAuthError(MCPError):
    """Authorization against a protected MCP server failed; the message says at which step."""


class InputRequired(MCPError):
    """Raised inside a tool by a question a 2026-07-28 retry has no answer for; the server turns
    it into an input-required result (it never reaches the model or the client as an error)."""

    def __init__(self, requests: dict[str, dict[str, Any]]) -> None:
        super().__init__("the client must answer input requests first")
        self.requests = requests


class SkillVerificationError(MCPError):
    """A skill file a server served differs from its `skills/list` entry (size, digest or
    frontmatter, SEP-2640); its content is not used."""


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
