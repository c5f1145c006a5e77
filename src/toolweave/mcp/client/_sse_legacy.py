"""The legacy HTTP+SSE transport (MCP 2024-11-05), which many published servers still speak.

As the official SDK's `sse_client`: a GET opens an event stream whose first `endpoint` event
names the URL to POST messages to (resolved against the stream's URL, and refused unless it
has the same scheme, host and port, so a server cannot send our messages elsewhere); every
server message then arrives as a `message` event on that stream, and each POST is only
acknowledged (202). The stream ending closes the connection, as a stdio server exiting does;
so does an event longer than `max_message_bytes` (64 MiB by default, as the Streamable HTTP
transport's bound), which cannot be skipped without reading it whole.
`HTTPTransport` switches to this transport by itself when a url ending in `/sse` answers 405
to the Streamable HTTP POST.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from toolweave._sse import SSEDecoder
from toolweave.mcp.client._stdio import check_message_bytes
from toolweave.mcp.shared.errors import INTERNAL_ERROR, JSONRPCError, MCPConnectionClosed, MCPError
from toolweave.mcp.shared.jsonrpc import decode, encode

if TYPE_CHECKING:
    import httpx

logger = logging.getLogger("toolweave.mcp.sse")


def is_legacy_sse_url(url: str) -> bool:
    """Whether `url` looks like a legacy SSE endpoint (its path ends in `/sse`)."""
    return urlsplit(url).path.rstrip("/").endswith("/sse")


class LegacySSETransport:
    """GET an event stream for server messages, POST client messages to its `endpoint`."""

    def __init__(
        self,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        auth: httpx.Auth | None = None,
        timeout: float = 30.0,
        name: str | None = None,
        max_message_bytes: int | None = None,
    ) -> None:
        self.url = url
        self.max_message_bytes = check_message_bytes(max_message_bytes)
        self.extra_headers = dict(headers or {})
        self.auth = auth
        self.timeout = timeout
        self.name = name or (urlsplit(url).hostname or "sse")
        self.endpoint: str | None = None
        self._client: httpx.AsyncClient | None = None
        self._reader: asyncio.Task[None] | None = None
        self._on_message: Callable[[Any], None] = lambda message: None

    async def start(
        self, on_message: Callable[[Any], None], on_close: Callable[[MCPError], None]
    ) -> None:
        import httpx

        self._on_message = on_message
        client = self._client = httpx.AsyncClient(
            auth=self.auth, timeout=httpx.Timeout(self.timeout, read=None)
        )
        headers = {"Accept": "text/event-stream", **self.extra_headers}
        try:
            response = await client.send(
                client.build_request("GET", self.url, headers=headers), stream=True
            )
        except Exception as exc:
            await self.close()
            raise MCPConnectionClosed(
                f"could not reach the MCP SSE endpoint {self.url}: {type(exc).__name__}: {exc}"
            ) from exc
        ctype = response.headers.get("content-type", "")
        if response.status_code != 200 or not ctype.startswith("text/event-stream"):
            await response.aclose()
            await self.close()
            raise MCPConnectionClosed(
                f"GET {self.url} answered {response.status_code} ({ctype or 'no content type'}), "
                "not an event stream; is this a legacy SSE MCP endpoint?"
            )
        endpoint: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._reader = asyncio.ensure_future(self._read(response, endpoint, on_close))
        try:
            self.endpoint = await asyncio.wait_for(asyncio.shield(endpoint), self.timeout)
        except BaseException:
            await self.close()
            raise

    async def _read(
        self,
        response: httpx.Response,
        endpoint: asyncio.Future[str],
        on_close: Callable[[MCPError], None],
    ) -> None:
        reason = f"the SSE stream from {self.url} ended"
        try:
            decoder = SSEDecoder()
            async for chunk in response.aiter_bytes():
                for event, data in decoder.feed(chunk):
                    if event == "endpoint" and not endpoint.done():
                        self._set_endpoint(endpoint, data.strip())
                    elif event in ("", "message") and data.strip():
                        self._deliver(data)
                if decoder.pending > self.max_message_bytes:  # one event that never ends
                    reason = (
                        f"the SSE stream from {self.url} sent an event longer than "
                        f"max_message_bytes ({self.max_message_bytes} bytes); the stream is "
                        "closed (raise max_message_bytes to accept it)"
                    )
                    break
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            reason = f"the SSE stream from {self.url} failed: {type(exc).__name__}: {exc}"
        finally:
            await response.aclose()
        if not endpoint.done():
            endpoint.set_exception(MCPConnectionClosed(f"{reason} before its `endpoint` event"))
        elif self._client is not None:
            on_close(MCPConnectionClosed(reason))

    def _set_endpoint(self, endpoint: asyncio.Future[str], data: str) -> None:
        target = urljoin(self.url, data)
        ours, theirs = urlsplit(self.url), urlsplit(target)
        if (ours.scheme, ours.netloc) != (theirs.scheme, theirs.netloc):
            endpoint.set_exception(
                MCPConnectionClosed(
                    f"the SSE server at {self.url} named the endpoint {target}, on another "
                    "origin; refusing to send messages there"
                )
            )
        else:
            endpoint.set_result(target)

    def _deliver(self, data: str) -> None:
        try:
            decoded = decode(data)
        except JSONRPCError:
            logger.warning("%s: undecodable SSE message: %.200r", self.name, data)
            return
        for message in decoded if isinstance(decoded, list) else [decoded]:
            self._on_message(message)

    async def send(self, message: dict[str, Any]) -> None:
        client, endpoint = self._client, self.endpoint
        if client is None or endpoint is None:
            raise MCPConnectionClosed(f"SSE transport to {self.url} is closed")
        headers = {"Content-Type": "application/json", **self.extra_headers}
        try:
            response = await client.post(endpoint, content=encode(message), headers=headers)
        except Exception as exc:
            raise MCPConnectionClosed(
                f"POST {endpoint} failed: {type(exc).__name__}: {exc}"
            ) from exc
        if response.status_code >= 400:
            text = response.text.strip()[:300]
            error = JSONRPCError(
                INTERNAL_ERROR, f"HTTP {response.status_code} from {endpoint}: {text}"
            )
            if "method" in message and "id" in message:
                self._on_message({"jsonrpc": "2.0", "id": message["id"], "error": error.to_dict()})
                return
            raise error

    async def close(self) -> None:
        client, self._client = self._client, None
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
        self.endpoint = None
        if client is not None:
            await client.aclose()
