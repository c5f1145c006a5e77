"""One client's view of a server: a stdio process, an HTTP session, or a single stateless request.

MCP is dual-era. A legacy (2025-11-25 and earlier) client opens with `initialize` and the
session remembers its version, identity, capabilities and log level; a modern (2026-07-28)
request carries all of that in its own `_meta`. The session answers both from the same handlers:
`*_for(meta)` picks the per-request value when there is one, and `handle` wraps modern results
with `resultType` and `serverInfo`.

The session sits low in `mcp/server/`: it knows its server only as a `SessionHost` (the method
table the server registered, the server's info and caching hints), so it imports neither the
server nor the handlers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from toolweave.mcp.server._declared import unsupported_version
from toolweave.mcp.shared.constants import (
    HANDSHAKE_ONLY_METHODS,
    LATEST_HANDSHAKE,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    MODERN_VERSIONS,
)
from toolweave.mcp.shared.errors import INVALID_PARAMS, METHOD_NOT_FOUND, JSONRPCError
from toolweave.mcp.shared.jsonrpc import RequestContext

if TYPE_CHECKING:
    from toolweave.mcp.shared.peer import JSONRPCPeer

#: How a session calls the handler of one method (the server binds each handler to itself).
Handler = Callable[["ServerSession", dict[str, Any], RequestContext], Awaitable[dict[str, Any]]]

#: Methods whose modern results must carry caching hints (`ttlMs`, `cacheScope`).
CACHEABLE_METHODS = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "skills/list",
        "skills/get",
    }
)


class SessionHost(Protocol):
    """What a session reads of its server (`MCPServer` is one)."""

    @property
    def handlers(self) -> Mapping[str, Handler]:
        """The handler of each method the server answers."""
        ...

    @property
    def info(self) -> dict[str, Any]: ...

    @property
    def cache_ttl_ms(self) -> int: ...

    @property
    def cache_scope(self) -> str: ...


class ServerSession:
    """Per-client state plus the request dispatcher the JSON-RPC peer calls."""

    def __init__(
        self, server: SessionHost, *, session_id: str | None = None, stateless: bool = False
    ) -> None:
        self.server = server
        self.session_id = session_id
        self.stateless = stateless
        self.peer: JSONRPCPeer | None = None
        self.initialized = False
        #: Opened with `initialize` (2025-era): list changes are broadcast to it.
        self.legacy_client = False
        self.protocol_version: str = LATEST_HANDSHAKE
        self.client_info: dict[str, Any] = {}
        self.client_capabilities: dict[str, Any] = {}
        self.log_level = "debug"
        self.subscriptions: set[str] = set()
        #: Who the transport authenticated (a bearer token's fingerprint, an OAuth subject);
        #: None when nothing was checked. Unlike `client_info`, the client cannot choose it.
        self.principal: str | None = None
        #: The peer's network address (HTTP), None over stdio.
        self.remote_address: str | None = None

    # -- era-aware accessors ----------------------------------------------------------------

    @staticmethod
    def is_modern(meta: dict[str, Any]) -> bool:
        return META_PROTOCOL_VERSION in meta

    def protocol_version_for(self, meta: dict[str, Any]) -> str:
        version = meta.get(META_PROTOCOL_VERSION)
        return version if isinstance(version, str) else self.protocol_version

    def client_info_for(self, meta: dict[str, Any]) -> dict[str, Any]:
        info = meta.get(META_CLIENT_INFO)
        return info if isinstance(info, dict) else self.client_info

    def client_capabilities_for(self, meta: dict[str, Any]) -> dict[str, Any]:
        caps = meta.get(META_CLIENT_CAPABILITIES)
        return caps if isinstance(caps, dict) else self.client_capabilities

    def log_level_for(self, meta: dict[str, Any]) -> str | None:
        """The least severe level the client wants logged; None when it wants no log at all (a
        2026-07-28 request that set no `_meta` logLevel)."""
        level = meta.get(META_LOG_LEVEL)
        if isinstance(level, str):
            return level
        return None if self.is_modern(meta) else self.log_level

    # -- dispatch -------------------------------------------------------------------------------

    async def handle(
        self, method: str, params: dict[str, Any], ctx: RequestContext
    ) -> dict[str, Any]:
        handler = self.server.handlers.get(method)
        meta = ctx.meta
        version = meta.get(META_PROTOCOL_VERSION)
        if version is None:
            if handler is None:
                raise JSONRPCError(METHOD_NOT_FOUND, f"Method not found: {method}")
            return await handler(self, params, ctx)
        if version not in MODERN_VERSIONS:
            raise unsupported_version(version)
        if not isinstance(meta.get(META_CLIENT_CAPABILITIES), dict):
            raise JSONRPCError(
                INVALID_PARAMS,
                f"_meta[{META_CLIENT_CAPABILITIES!r}] is required on {version} requests "
                "(an object, {} when the client has none)",
            )
        if handler is None or method in HANDSHAKE_ONLY_METHODS:
            raise JSONRPCError(METHOD_NOT_FOUND, f"Method not found: {method}")
        result = dict(await handler(self, params, ctx))
        result.setdefault("resultType", "complete")  # "input_required" and "task" stay
        if method in CACHEABLE_METHODS:
            result["ttlMs"] = self.server.cache_ttl_ms
            result["cacheScope"] = self.server.cache_scope
        result["_meta"] = {**(result.get("_meta") or {}), META_SERVER_INFO: self.server.info}
        return result

    # -- stored sessions (`PostgresMCPSessionStore`) ---------------------------------------------

    def stored_state(self) -> dict[str, Any]:
        """What another replica needs to serve this 2025-era session, as JSON."""
        return {
            "protocol_version": self.protocol_version,
            "client_info": self.client_info,
            "client_capabilities": self.client_capabilities,
            "log_level": self.log_level,
            "subscriptions": sorted(self.subscriptions),
            "initialized": self.initialized,
            "legacy_client": self.legacy_client,
        }

    def restore(self, state: dict[str, Any]) -> None:
        """Take the `stored_state()` a replica wrote."""
        self.protocol_version = state["protocol_version"]
        self.client_info = state["client_info"]
        self.client_capabilities = state["client_capabilities"]
        self.log_level = state["log_level"]
        self.subscriptions = set(state["subscriptions"])
        self.initialized = state["initialized"]
        self.legacy_client = state["legacy_client"]

    def on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/initialized":
            self.initialized = True
