"""The JSON-RPC 2.0 wire format: message encoding, the callable shapes the peer takes and the
`RequestContext` a request handler is given.

Kept apart from the peer (`toolweave.mcp.shared.peer`) so transports that only frame bytes
(stdio lines, Streamable HTTP bodies, SSE events) import the codec without the peer's state.

- The error codes and `JSONRPCError(code, message, data=None)` (an `MCPError` carrying a wire
  error) live in `toolweave.mcp.shared.errors` with the rest of the MCP errors.
- `encode(message) -> bytes` (compact UTF-8 JSON, no trailing newline) and `decode(data) ->
  Any` (raises `JSONRPCError(PARSE_ERROR)`, also for nesting deeper than `MAX_JSON_DEPTH`, so
  no transport can be made to recurse until it crashes); `valid_id(id)` (an int or a string).
- `RequestContext` (given to `on_request`): `id`, `method`, `meta` (the request's `_meta` or
  `{}`), `progress_token`, `transport`, `cancelled` (True after the remote cancelled it),
  `await ctx.report_progress(progress, total=None, message=None)` (a no-op without a token),
  `await ctx.notify(method, params)` and `await ctx.request(method, params, **kw)`, which go to
  the same `send` as this request's answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Protocol

from toolweave.mcp.shared.constants import MAX_JSON_DEPTH
from toolweave.mcp.shared.errors import PARSE_ERROR, JSONRPCError

Send = Callable[[dict[str, Any]], Awaitable[None]]
ProgressHandler = Callable[[float, float | None, str | None], Awaitable[None] | None]
RequestHandler = Callable[[str, dict[str, Any], "RequestContext"], Awaitable[dict[str, Any]]]
NotificationHandler = Callable[[str, dict[str, Any]], Awaitable[None] | None]

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_loads = json.loads


def encode(message: Any) -> bytes:
    """Compact UTF-8 JSON for one message (transports add their own framing)."""
    return _dumps(message).encode()


def valid_id(request_id: Any) -> bool:
    """A request id MCP accepts: an integer or a string (never a bool, float, null or object)."""
    return type(request_id) is str or type(request_id) is int


# Brackets outside strings: group 1 opens, group 2 closes; a string matches neither group.
_TOKENS_BYTES = re.compile(rb'([\[{])|([\]}])|"(?:[^"\\]|\\.)*"')
_TOKENS_STR = re.compile(r'([\[{])|([\]}])|"(?:[^"\\]|\\.)*"')


def decode(data: str | bytes, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse one message; a malformed or too deeply nested one raises
    `JSONRPCError(PARSE_ERROR)`."""
    if _nesting_exceeds(data, max_depth):
        raise JSONRPCError(PARSE_ERROR, f"Parse error: JSON nested deeper than {max_depth} levels")
    try:
        return _loads(data)
    except ValueError as exc:
        raise JSONRPCError(PARSE_ERROR, f"Parse error: {exc}") from None


def _nesting_exceeds(data: str | bytes, limit: int) -> bool:
    """True when arrays/objects nest deeper than `limit` (brackets in strings do not count)."""
    tokens: Iterator[re.Match[bytes]] | Iterator[re.Match[str]]
    if isinstance(data, bytes):
        if data.count(b"[") + data.count(b"{") <= limit:  # the fast path: cannot be that deep
            return False
        tokens = _TOKENS_BYTES.finditer(data)
    else:
        if data.count("[") + data.count("{") <= limit:
            return False
        tokens = _TOKENS_STR.finditer(data)
    depth = 0
    for token in tokens:
        group = token.lastindex
        if group == 1:
            depth += 1
            if depth > limit:
                return True
        elif group == 2:
            depth -= 1
    return False


class Peer(Protocol):
    """What a `RequestContext` talks back through: `shared.peer.JSONRPCPeer` is the one (a
    protocol here so the codec never imports the peer that imports it)."""

    async def notify(
        self, method: str, params: dict[str, Any] | None = None, *, send: Send | None = None
    ) -> None: ...

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        max_timeout: float | None = None,
        on_progress: ProgressHandler | None = None,
        send: Send | None = None,
    ) -> dict[str, Any]: ...


class RequestContext:
    """What a request handler knows about the request it serves and how it talks back."""

    __slots__ = ("_peer", "_send", "cancelled", "id", "meta", "method", "transport")

    def __init__(
        self,
        peer: Peer,
        request_id: Any,
        method: str,
        meta: dict[str, Any],
        send: Send,
        transport: Any,
    ) -> None:
        self._peer = peer
        self._send = send
        self.id = request_id
        self.method = method
        self.meta = meta
        self.transport = transport
        self.cancelled = False

    @property
    def progress_token(self) -> str | int | None:
        token = self.meta.get("progressToken")
        return token if isinstance(token, str | int) else None

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        token = self.progress_token
        if token is None:
            return
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.notify("notifications/progress", params)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        await self._peer.notify(method, params, send=self._send)

    async def request(
        self, method: str, params: dict[str, Any] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        kwargs.setdefault("send", self._send)
        return await self._peer.request(method, params, **kwargs)
