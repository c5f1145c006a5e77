"""Protocol versions and the era negotiation a client runs when it connects.

MCP has two eras. Up to 2025-11-25 a connection starts with an `initialize` handshake and
(over HTTP) a session. From 2026-07-28 it is stateless: every request carries the protocol
version, the client's identity and capabilities in `_meta`, and `server/discover` replaces the
handshake. Today almost every server is of the first era, so the client probes with
`server/discover` and falls back to `initialize` on anything that is not positive evidence of a
modern server, exactly as the 2026-07-28 stdio and HTTP bindings prescribe. The result of the
probe is kept per connection.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from toolweave.mcp.shared.constants import (
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE,
    LATEST_MODERN,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    MODERN_VERSIONS,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from toolweave.mcp.shared.errors import JSONRPCError, MCPError

#: How long the `server/discover` probe may go unanswered before the client also tries
#: `initialize`, over a transport where a legacy server may ignore it (stdio). An HTTP server
#: always answers a POST (a legacy one with 400 or an error), so over HTTP the probe has the
#: whole start budget, which leaves room for an OAuth flow that the first request runs.
PROBE_TIMEOUT = 10.0
#: Default seconds a server has to start and complete the handshake (`discover_timeout`): the
#: probe, the `initialize` fallback and the 2026 retry after a -32022 all share it, so a 2026
#: server that takes 30 s to start is still connected.
DEFAULT_DISCOVER_TIMEOUT = 60.0
#: Most `server/discover` attempts in one connection (version retries and -32022 retries).
MAX_DISCOVER_ATTEMPTS = 3

CLIENT_NAME = "toolweave"
logger = logging.getLogger("toolweave.mcp.client")


def client_version() -> str:
    from toolweave.version import __version__

    return __version__


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """Who the server says it is (`serverInfo` / `io.modelcontextprotocol/serverInfo`)."""

    name: str
    version: str
    title: str | None = None

    @classmethod
    def from_wire(cls, raw: Any) -> ServerInfo:
        raw = raw if isinstance(raw, dict) else {}
        return cls(
            name=str(raw.get("name", "unknown")),
            version=str(raw.get("version", "")),
            title=raw.get("title") if isinstance(raw.get("title"), str) else None,
        )


@dataclass(slots=True)
class Negotiated:
    """The outcome of connecting: era, version and what the server offers."""

    protocol_version: str
    server_info: ServerInfo
    capabilities: dict[str, Any] = field(default_factory=dict)
    instructions: str | None = None

    @property
    def modern(self) -> bool:
        return self.protocol_version in MODERN_VERSIONS


Requester = Callable[[str, dict[str, Any], float | None], Awaitable[dict[str, Any]]]
Notifier = Callable[[str, dict[str, Any] | None], Awaitable[None]]


def modern_meta(
    version: str,
    capabilities: dict[str, Any],
    log_level: str | None = None,
) -> dict[str, Any]:
    """The `_meta` envelope every 2026-era request carries."""
    meta: dict[str, Any] = {
        META_PROTOCOL_VERSION: version,
        META_CLIENT_INFO: {"name": CLIENT_NAME, "version": client_version()},
        META_CLIENT_CAPABILITIES: capabilities,
    }
    if log_level is not None:
        meta[META_LOG_LEVEL] = log_level
    return meta


def _supported(error: JSONRPCError) -> list[str] | None:
    data = error.data
    if isinstance(data, dict) and isinstance(data.get("supported"), list):
        return [str(v) for v in data["supported"]]
    return None


async def negotiate(
    request: Requester,
    notify: Notifier,
    capabilities: dict[str, Any],
    *,
    mode: str = "auto",
    timeout: float | None = None,
    probe_may_go_unanswered: bool = True,
    discover_timeout: float = DEFAULT_DISCOVER_TIMEOUT,
) -> Negotiated:
    """Connect in the newest era both sides speak.

    `mode` is "auto" (probe `server/discover`, fall back to `initialize`), "modern" (discover
    only) or "legacy" (initialize only). `request(method, params, timeout)` sends one request;
    the caller's transport must already stamp the version header it is told about.
    `probe_may_go_unanswered` bounds the probe by `PROBE_TIMEOUT`; a transport where every
    request gets an answer passes False. The handshake as a whole may take `discover_timeout`
    seconds (at least `timeout`): a server still starting answers the fallback `initialize`
    late, and one committed to 2026 answers it with -32022, upon which the 2026 handshake is
    tried again, as the official SDK does.
    """
    if mode not in ("auto", "modern", "legacy"):
        raise ValueError(f"protocol mode must be 'auto', 'modern' or 'legacy', not {mode!r}")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max(discover_timeout, timeout or 0.0)

    def remaining() -> float:
        return max(deadline - loop.time(), 0.001)

    if mode == "legacy":
        return await initialize(request, notify, capabilities, timeout=timeout)
    version = LATEST_MODERN
    bounded = probe_may_go_unanswered
    for _attempt in range(MAX_DISCOVER_ATTEMPTS):
        try:
            return await _discover(
                request,
                capabilities,
                version,
                min(PROBE_TIMEOUT, remaining()) if bounded else remaining(),
            )
        except JSONRPCError as exc:
            supported = _supported(exc) if exc.code == UNSUPPORTED_PROTOCOL_VERSION else None
            mutual = [v for v in MODERN_VERSIONS if v in (supported or ())]
            if mutual:  # the server speaks 2026 but not the version we sent, or not yet
                version = mutual[-1]
                continue
            if supported is not None and not any(v in HANDSHAKE_VERSIONS for v in supported):
                raise _unsupported(supported, exc.code) from exc
            if mode == "modern":
                raise
        except MCPError:
            if mode == "modern":
                raise
            # no answer in time: a legacy server that ignores pre-initialize requests, or one
            # still starting (the fallback below finds out which)
        try:
            return await initialize(request, notify, capabilities, timeout=remaining())
        except JSONRPCError as exc:
            supported = _supported(exc) if exc.code == UNSUPPORTED_PROTOCOL_VERSION else None
            mutual = [v for v in MODERN_VERSIONS if v in (supported or ())]
            if not mutual:
                raise
            logger.info("the server refused initialize with -32022; asking server/discover again")
            version, bounded = mutual[-1], False  # a 2026 server that started late: ask again
    raise MCPError(
        f"the server did not complete the 2026-07-28 handshake in {MAX_DISCOVER_ATTEMPTS} attempts"
    )


async def _discover(
    request: Requester, capabilities: dict[str, Any], version: str, timeout: float
) -> Negotiated:
    """One `server/discover`; `MCPError` when the server offers no modern version."""
    result = await request(
        "server/discover", {"_meta": modern_meta(version, capabilities)}, timeout
    )
    offered = result.get("supportedVersions")
    mutual = [v for v in MODERN_VERSIONS if isinstance(offered, list) and v in offered]
    if not mutual:
        raise MCPError(f"the server offers no modern protocol version: {offered!r}")
    meta = result.get("_meta") if isinstance(result.get("_meta"), dict) else {}
    info = (meta or {}).get(META_SERVER_INFO) or result.get("serverInfo")
    return Negotiated(
        protocol_version=mutual[-1],
        server_info=ServerInfo.from_wire(info),
        capabilities=dict(result.get("capabilities") or {}),
        instructions=result.get("instructions"),
    )


def _unsupported(supported: list[str], code: int) -> MCPError:
    return MCPError(
        f"the server supports only protocol versions {supported}; this client speaks "
        f"{list(HANDSHAKE_VERSIONS + MODERN_VERSIONS)}",
        code=code,
    )


async def initialize(
    request: Requester,
    notify: Notifier,
    capabilities: dict[str, Any],
    *,
    timeout: float | None = None,
) -> Negotiated:
    """The 2025-era handshake: `initialize`, check the version, `notifications/initialized`."""
    result = await request(
        "initialize",
        {
            "protocolVersion": LATEST_HANDSHAKE,
            "capabilities": capabilities,
            "clientInfo": {"name": CLIENT_NAME, "version": client_version()},
        },
        timeout,
    )
    version = result.get("protocolVersion")
    if version not in HANDSHAKE_VERSIONS:
        raise MCPError(
            f"the server answered initialize with protocol version {version!r}; this client "
            f"supports {list(HANDSHAKE_VERSIONS)}"
        )
    await notify("notifications/initialized", None)
    return Negotiated(
        protocol_version=str(version),
        server_info=ServerInfo.from_wire(result.get("serverInfo")),
        capabilities=dict(result.get("capabilities") or {}),
        instructions=result.get("instructions"),
    )
