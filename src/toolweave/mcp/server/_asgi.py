"""Mounting and serving the Streamable HTTP endpoint: the Starlette app and the uvicorn run.

Kept apart from the endpoint itself (`_http.py`: sessions, streams, the request rules) so
`MCPServer` stays a light registry: this module, starlette and uvicorn load only when a server
is served over HTTP.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.routing import Route

from toolweave.mcp.server._http import StreamableHTTPApp
from toolweave.mcp.server.event_store import EventStore
from toolweave.mcp.shared.constants import DEFAULT_IDEMPOTENCY_TTL, LOOPBACK_HOSTS

if TYPE_CHECKING:
    from toolweave.mcp.server._view import ServerView
    from toolweave.mcp.server.postgres_sessions import PostgresMCPSessionStore

logger = logging.getLogger("toolweave.mcp.server")


def build_app(
    server: ServerView,
    path: str,
    *,
    allowed_origins: Sequence[str],
    allowed_hosts: Sequence[str] | None,
    auth_token: str | None,
    event_store: EventStore | None,
    sse_retry_ms: int,
    max_body_bytes: int,
    max_sessions: int,
    session_idle_timeout: float,
    body_read_timeout: float,
    tokens: Mapping[str, str] | None,
    session_store: PostgresMCPSessionStore | None = None,
    idempotency_ttl: float = DEFAULT_IDEMPOTENCY_TTL,
) -> Starlette:
    endpoint = StreamableHTTPApp(
        server,
        allowed_origins=allowed_origins,
        allowed_hosts=allowed_hosts,
        auth_token=auth_token,
        event_store=event_store,
        sse_retry_ms=sse_retry_ms,
        max_body_bytes=max_body_bytes,
        max_sessions=max_sessions,
        session_idle_timeout=session_idle_timeout,
        body_read_timeout=body_read_timeout,
        tokens=tokens,
        session_store=session_store,
        idempotency_ttl=idempotency_ttl,
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            endpoint.close_all()

    app = Starlette(
        routes=[Route(path, endpoint, methods=["GET", "POST", "DELETE"])], lifespan=lifespan
    )
    app.state.mcp = endpoint
    return app


def serve_http(
    app: Starlette, *, name: str, host: str, port: int, guarded: bool, log_level: str
) -> None:
    """Run the app of server `name` under uvicorn until interrupted (what `MCPServer.run("http")`
    does); `guarded` says whether the app checks a bearer token."""
    if loopback_hosts(host) is None and not guarded:
        logger.warning(
            "serving %s on %s:%s without auth_token: anyone who can reach this address can "
            "call every tool; pass auth_token=... or bind to 127.0.0.1",
            name,
            host,
            port,
        )
    import uvicorn

    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        timeout_graceful_shutdown=2,
    )


def loopback_hosts(bind: str) -> tuple[str, ...] | None:
    """Bound to loopback, only loopback Host headers are legitimate (DNS-rebinding guard)."""
    return LOOPBACK_HOSTS if bind in LOOPBACK_HOSTS else None
