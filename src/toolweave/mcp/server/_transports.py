"""How an `MCPServer` is served: stdio, an ASGI app to mount, or uvicorn on a port.

Kept apart from the registration API in `app.py`; starlette and uvicorn load only when an HTTP
transport is asked for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, cast

from toolweave.mcp.shared.constants import (
    DEFAULT_BODY_READ_TIMEOUT,
    DEFAULT_IDEMPOTENCY_TTL,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE_TIMEOUT,
)

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from toolweave.mcp.server._view import ServerView
    from toolweave.mcp.server.event_store import EventStore
    from toolweave.mcp.server.postgres_sessions import PostgresMCPSessionStore


class Transports:
    """The serving methods `MCPServer` inherits."""

    @property
    def _server(self) -> ServerView:
        return cast("ServerView", self)

    async def run_stdio(self, *, max_line_bytes: int | None = None) -> None:
        """Serve one client over stdin/stdout until stdin closes; a message (line) over
        `max_line_bytes` (default `MAX_LINE_BYTES`, 64 MiB) gets an error and is dropped."""
        from toolweave.mcp.server._stdio import MAX_LINE_BYTES, serve_stdio

        await serve_stdio(self._server, max_line_bytes=max_line_bytes or MAX_LINE_BYTES)

    def asgi_app(
        self,
        path: str = "/mcp",
        *,
        allowed_origins: Sequence[str] = (),
        allowed_hosts: Sequence[str] | None = None,
        auth_token: str | None = None,
        event_store: EventStore | None = None,
        sse_retry_ms: int = 1000,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        session_idle_timeout: float = DEFAULT_SESSION_IDLE_TIMEOUT,
        body_read_timeout: float = DEFAULT_BODY_READ_TIMEOUT,
        tokens: Mapping[str, str] | None = None,
        session_store: PostgresMCPSessionStore | None = None,
        idempotency_ttl: float = DEFAULT_IDEMPOTENCY_TTL,
    ) -> Starlette:
        """A Starlette app serving Streamable HTTP at `path` (mount it in FastAPI if you like).

        A browser `Origin` other than loopback is refused unless listed in `allowed_origins`
        (DNS-rebinding protection). `allowed_hosts` lists the `Host` header values to accept
        (`run()` passes the loopback names when bound to loopback); None skips the Host check,
        for apps behind a proxy that picks the host. With `auth_token`, every request needs
        `Authorization: Bearer <token>` (compared in constant time); `tokens` (client name ->
        token) gives each client its own token and its own principal (`client:<name>`).

        Limits (every one a client could otherwise push): a POST without `Content-Type:
        application/json` gets 415; a request body over `max_body_bytes` gets 413 (checked
        while reading, chunked bodies too), one not received within `body_read_timeout`
        seconds 408; at most `max_sessions` sessions live, and past that a new one gets 429
        (nobody's session is closed for it); a session unused for `session_idle_timeout`
        seconds is closed. `event_store` keeps SSE events (a shared `PostgresEventStore` lets
        any replica resume a stream) and `session_store` 2025-era sessions (a
        `PostgresMCPSessionStore`: any replica serves any session, without sticky routing). A
        2026-era `tools/call` with an idempotency key runs at most once per key (see
        `toolweave.mcp.server.idempotency`), the keys kept `idempotency_ttl` seconds (in
        `session_store` when given, else in this process).
        """
        try:
            from toolweave.mcp.server._asgi import build_app
        except ImportError as exc:
            raise ImportError(
                f"Streamable HTTP needs starlette and uvicorn ({exc.name} is missing): "
                "pip install 'toolweave[server]'"
            ) from exc

        return build_app(
            self._server,
            path,
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

    def run(
        self,
        transport: str = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        path: str = "/mcp",
        auth_token: str | None = None,
        log_level: str = "info",
    ) -> None:
        """Serve until interrupted: `"stdio"` (logs go to stderr only) or `"http"`.

        Over HTTP, uvicorn logs its startup line (`Uvicorn running on ...`) to stderr at the
        default `log_level`; per-request access logs are off. Binding beyond loopback without
        `auth_token` logs a warning: anyone who can reach the port can call every tool.
        """
        if transport == "stdio":
            asyncio.run(self.run_stdio())
            return
        if transport != "http":
            raise ValueError(f"transport must be 'stdio' or 'http', not {transport!r}")
        from toolweave._extras import require

        require("server", 'MCPServer.run("http")')
        from toolweave.mcp.server._asgi import loopback_hosts, serve_http

        app = self.asgi_app(path, allowed_hosts=loopback_hosts(host), auth_token=auth_token)
        serve_http(
            app,
            name=self._server.name,
            host=host,
            port=port,
            guarded=auth_token is not None,
            log_level=log_level,
        )
