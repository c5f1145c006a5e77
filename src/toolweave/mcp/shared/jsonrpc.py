"""The JSON-RPC 2.0 wire format: message encoding and the callable shapes the peer takes.

Kept apart from the peer (`toolweave.mcp.shared.peer`) so transports that only frame bytes
(stdio lines, Streamable HTTP bodies, SSE events) import the codec without the peer's state.

- The error codes and `JSONRPCError(code, message, data=None)` (an `MCPError` carrying a wire
  error) live in `toolweave.mcp.shared.errors` with the rest of the MCP errors.
- `encode(message) -> bytes` (compact UTF-8 JSON, no trailing newline) and `decode(data) ->
  Any` (raises `JSONRPCError(PARSE_ERROR)`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .errors import PARSE_ERROR, JSONRPCError

if TYPE_CHECKING:
    from .peer import RequestContext

Send = Callable[[dict[str, Any]], Awaitable[None]]
ProgressHandler = Callable[[float, float | None, str | None], Awaitable[None] | None]
RequestHandler = Callable[[str, dict[str, Any], "RequestContext"], Awaitable[dict[str, Any]]]
NotificationHandler = Callable[[str, dict[str, Any]], Awaitable[None] | None]

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_loads = json.loads


def encode(message: Any) -> bytes:
    """Compact UTF-8 JSON for one message (transports add their own framing)."""
    return _dumps(message).encode()


def decode(data: str | bytes) -> Any:
    """Parse one message; a malformed one raises `JSONRPCError(PARSE_ERROR)`."""
    try:
        return _loads(data)
    except ValueError as exc:
        raise JSONRPCError(PARSE_ERROR, f"Parse error: {exc}") from None
