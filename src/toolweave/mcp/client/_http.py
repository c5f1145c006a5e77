"""The Streamable HTTP transport (2025-11-25 sessions and the 2026-07-28 stateless shape).

Every outgoing message is one POST. `send` returns once the server has accepted it: a JSON
answer is fed to the peer at once, an SSE answer is consumed by a background task so many
requests stream concurrently. HTTP failures are raised from `send` as `JSONRPCError`s so they
reach the waiting request directly (and the era probe can read them). SSE streams that end
before their answer are resumed with GET + `Last-Event-ID` after the server's `retry` delay;
a 404 on a known session means the server forgot us, so the client negotiates again and the
message is resent. Authentication is any `httpx.Auth` on the client (OAuth: the `auth/` package).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from toolweave._bounded import read_bounded
from toolweave._sse import SSEDecoder
from toolweave.mcp.client._param_headers import encode_header_value
from toolweave.mcp.client._sse_legacy import LegacySSETransport, is_legacy_sse_url
from toolweave.mcp.client._stdio import check_message_bytes
from toolweave.mcp.shared.constants import (
    META_PROTOCOL_VERSION,
    MODERN_VERSIONS,
    NAME_PARAMS,
    PROTOCOL_VERSION_HEADER,
)
from toolweave.mcp.shared.errors import (
    CONNECTION_CLOSED,
    INTERNAL_ERROR,
    JSONRPCError,
    MCPConnectionClosed,
    MCPError,
)
from toolweave.mcp.shared.jsonrpc import decode, encode

if TYPE_CHECKING:
    import httpx

logger = logging.getLogger("toolweave.mcp.http")

#: Reconnection delay when the server did not send `retry:` (milliseconds).
DEFAULT_RETRY_MS = 1000
#: Most times one message is resent after its session expired (a 404), starting a new one.
MAX_SESSION_RENEWALS = 2
#: Most reconnection attempts for one interrupted stream before its request fails.
MAX_RESUME_ATTEMPTS = 5


class _Stream:
    """Where one SSE stream stands: last event id, retry delay, requests still unanswered."""

    __slots__ = ("last_event_id", "retry_ms", "waiting")

    def __init__(self, waiting: set[Any]) -> None:
        self.last_event_id: str | None = None
        self.retry_ms = DEFAULT_RETRY_MS
        self.waiting = waiting


class HTTPTransport:
    answers_every_request = True
    """Every POST gets an HTTP answer, so a probe never needs a shorter timeout."""

    def __init__(
        self,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        auth: httpx.Auth | None = None,
        timeout: float = 30.0,
        name: str | None = None,
        legacy_sse_fallback: bool = True,
        max_message_bytes: int | None = None,
    ) -> None:
        self.url = url
        #: The largest answer (a JSON body or one SSE event, decompressed) read into memory.
        self.max_message_bytes = check_message_bytes(max_message_bytes)
        self.legacy_sse_fallback = legacy_sse_fallback
        self.rejected_post = False  # a 405: set for `legacy_transport`
        self.extra_headers = dict(headers or {})
        self.auth = auth
        self.timeout = timeout
        self.name = name or (urlsplit(url).hostname or "http")
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.reinitialize: Callable[[], Awaitable[None]] | None = None
        self._client: httpx.AsyncClient | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._by_request: dict[Any, asyncio.Task[None]] = {}
        self._reinit_lock = asyncio.Lock()
        self._on_message: Callable[[Any], None] = lambda message: None
        self.fail_request: Callable[[Any, MCPError], None] = lambda request_id, exc: None
        """Set by the client to its peer's `fail`: a POST that never reached the server fails
        its request with `MCPConnectionClosed`, the error stdio raises too."""
        self._get_started = False
        self._initialize_id: Any = None
        self.mirrored_headers: Callable[[dict[str, Any]], dict[str, str]] = lambda message: {}
        """Set by the client: the `Mcp-Param-*` headers of a 2026-era request (SEP-2243)."""

    async def start(
        self, on_message: Callable[[Any], None], on_close: Callable[[MCPError], None]
    ) -> None:
        import httpx

        self._on_message = on_message
        self.session_id = None
        self.protocol_version = None
        self._get_started = False
        if self._client is None:
            self._client = httpx.AsyncClient(
                auth=self.auth,
                timeout=httpx.Timeout(self.timeout, read=None),
                limits=httpx.Limits(max_connections=256, max_keepalive_connections=64),
            )

    # -- sending --------------------------------------------------------------------------------

    def _headers(self, message: dict[str, Any] | None, *, accept: str) -> dict[str, str]:
        headers = {"Accept": accept, **self.extra_headers}
        if message is not None:
            headers["Content-Type"] = "application/json"
        version = self.protocol_version
        params = message.get("params") if message is not None else None
        if isinstance(params, dict) and isinstance(params.get("_meta"), dict):
            version = params["_meta"].get(META_PROTOCOL_VERSION, version)
        if version is not None:
            headers[PROTOCOL_VERSION_HEADER] = str(version)
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        method = message.get("method") if message is not None else None
        if version in MODERN_VERSIONS and isinstance(method, str):
            headers["Mcp-Method"] = method
            key = NAME_PARAMS.get(method)
            if key and isinstance(params, dict) and isinstance(params.get(key), str):
                headers["Mcp-Name"] = encode_header_value(params[key])
            headers.update(self.mirrored_headers(message or {}))
        return headers

    async def send(self, message: dict[str, Any]) -> None:
        """Requests are posted in the background (their answers may take as long as the work);
        notifications and responses are posted before returning."""
        if self._client is None:
            raise MCPConnectionClosed(f"HTTP transport to {self.url} is closed")
        method = message.get("method")
        if method == "notifications/cancelled":
            params = message.get("params") or {}
            task = self._by_request.pop(params.get("requestId"), None)
            if task is not None:
                task.cancel()  # drop the request's POST or SSE stream
            if self.protocol_version in MODERN_VERSIONS:
                return  # the stateless revision has no client notifications: that was it
        if method == "initialize":
            self._initialize_id = message.get("id")
        if method is not None and "id" in message:
            task = asyncio.ensure_future(self._request(message))
            self._track(task, message["id"])
            return
        await self._post(message)

    async def _request(self, message: dict[str, Any]) -> None:
        """Post one request; a failure becomes that request's error answer."""
        try:
            await self._post(message)
        except MCPConnectionClosed as exc:
            self.fail_request(message["id"], exc)
        except JSONRPCError as exc:
            self._on_message({"jsonrpc": "2.0", "id": message["id"], "error": exc.to_dict()})
        except Exception as exc:
            failure = MCPConnectionClosed(f"POST {self.url} failed: {type(exc).__name__}: {exc}")
            self.fail_request(message["id"], failure)

    async def _post(self, message: dict[str, Any]) -> None:
        client = self._client
        if client is None:
            raise MCPConnectionClosed(f"HTTP transport to {self.url} is closed")
        method = message.get("method")
        body = encode(message)
        for attempt in range(MAX_SESSION_RENEWALS + 1):
            session_used = self.session_id
            headers = self._headers(message, accept="application/json, text/event-stream")
            request = client.build_request("POST", self.url, content=body, headers=headers)
            try:
                response = await client.send(request, stream=True)
            except Exception as exc:
                raise MCPConnectionClosed(
                    f"could not reach the MCP server at {self.url}: {type(exc).__name__}: {exc}"
                ) from exc
            status = response.status_code
            if status in (401, 403) and self.auth is not None:
                await response.aclose()
                raise JSONRPCError(
                    CONNECTION_CLOSED, f"the server at {self.url} refused authorization ({status})"
                )
            if (
                status == 404
                and session_used is not None
                and method != "initialize"
                and attempt < MAX_SESSION_RENEWALS
            ):
                await response.aclose()
                await self._session_expired(session_used)
                continue
            await self._accept(response, message)
            return

    async def _session_expired(self, session_used: str) -> None:
        async with self._reinit_lock:
            if self.session_id != session_used:
                return  # another request already started a new session
            logger.info("%s: session %s expired; initializing again", self.name, session_used)
            self.session_id = None
            self._get_started = False
            if self.reinitialize is None:
                raise MCPConnectionClosed(f"the session at {self.url} expired")
            await self.reinitialize()

    async def _accept(self, response: httpx.Response, message: dict[str, Any]) -> None:
        status = response.status_code
        self.rejected_post = self.rejected_post or status == 405
        if status >= 400:
            raise _http_error(status, await self._bounded_body(response), self.url)
        session = response.headers.get("mcp-session-id")
        if session and message.get("method") == "initialize":
            self.session_id = session
        ctype = response.headers.get("content-type", "")
        request_id = message.get("id") if "method" in message else None
        if ctype.startswith("text/event-stream"):
            waiting = {request_id} if request_id is not None else set()
            task = asyncio.ensure_future(self._consume(response, _Stream(waiting)))
            self._track(task, request_id)
        else:
            raw = await self._bounded_body(response)
            if raw.strip() and ctype.startswith("application/json"):
                self._feed_all(decode(raw))
        if message.get("method") == "notifications/initialized":
            await self._start_get()

    async def _bounded_body(self, response: httpx.Response) -> bytes:
        """The body, read (decompressed) only up to `max_message_bytes`; over it the answer
        is refused before more is read (a huge or endless body, a compression bomb)."""
        try:
            body = await read_bounded(response.aiter_bytes(), self.max_message_bytes)
        finally:
            await response.aclose()
        if body is None:
            raise JSONRPCError(INTERNAL_ERROR, self._too_long())
        return body

    def _too_long(self) -> str:
        return (
            f"the answer from {self.url} is longer than max_message_bytes "
            f"({self.max_message_bytes} bytes); not read further (raise max_message_bytes to "
            "accept it)"
        )

    def _track(self, task: asyncio.Task[None], request_id: Any) -> None:
        self._tasks.add(task)
        if request_id is not None:
            self._by_request[request_id] = task

        def done(t: asyncio.Task[None]) -> None:
            self._tasks.discard(t)
            if request_id is not None and self._by_request.get(request_id) is t:
                del self._by_request[request_id]

        task.add_done_callback(done)

    def _feed_all(self, decoded: Any, stream: _Stream | None = None) -> None:
        for message in decoded if isinstance(decoded, list) else [decoded]:
            if isinstance(message, dict) and "method" not in message:
                if stream is not None:
                    stream.waiting.discard(message.get("id"))
                if self._initialize_id is not None and message.get("id") == self._initialize_id:
                    self._adopt_version(message.get("result"))
            self._on_message(message)

    def _adopt_version(self, result: Any) -> None:
        """Stamp the negotiated version from the initialize answer on, so that
        `notifications/initialized` and the GET stream carry `MCP-Protocol-Version` too."""
        self._initialize_id = None
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        if isinstance(version, str):
            self.protocol_version = version

    # -- SSE ------------------------------------------------------------------------------------

    async def _consume(self, response: httpx.Response, stream: _Stream) -> None:
        """Read a POST's SSE answer, resuming with GET + Last-Event-ID while answers are due.

        Up to `MAX_RESUME_ATTEMPTS` reconnects in a row, each the server's `retry:` delay after
        the stream (or the failed attempt before) ended; a resumed stream that delivers new
        events starts the count again.
        """
        loop = asyncio.get_running_loop()
        failures = 0
        while True:
            seen = stream.last_event_id
            try:
                await self._read_events(response, stream)
            except Exception as exc:
                logger.debug("%s: SSE stream broke: %r", self.name, exc)
            finally:
                ended = loop.time()
                await response.aclose()
            if not stream.waiting or self._client is None:
                return
            if stream.last_event_id is None:
                self._fail(stream, "the server closed the stream before answering")
                return
            if stream.last_event_id != seen:
                failures = 0  # progress: the budget starts again
            resumed: httpx.Response | None = None
            while resumed is None:
                if failures >= MAX_RESUME_ATTEMPTS:
                    self._fail(stream, f"the stream could not be resumed in {failures} attempts")
                    return
                failures += 1
                resumed = await self._get(stream.last_event_id, after=(ended, stream.retry_ms))
                ended = loop.time()
            response = resumed

    def _fail(self, stream: _Stream, reason: str) -> None:
        for request_id in list(stream.waiting):
            self._on_message(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": CONNECTION_CLOSED, "message": f"{self.url}: {reason}"},
                }
            )
        stream.waiting.clear()

    async def _read_events(self, response: httpx.Response, stream: _Stream) -> None:
        decoder = SSEDecoder()
        async for chunk in response.aiter_bytes():
            for _event, payload in decoder.feed(chunk):
                if not payload.strip():
                    continue  # a priming event: it only carries an id to resume from
                try:
                    decoded = decode(payload)
                except JSONRPCError as exc:  # e.g. nested too deeply: fail what waits, now
                    logger.warning("%s: undecodable SSE event: %.200r", self.name, payload)
                    self._fail(stream, f"an undecodable answer: {exc.message}")
                    continue
                self._feed_all(decoded, stream)
            if decoder.pending > self.max_message_bytes:  # an event that never ends
                self._fail(stream, self._too_long())
                await response.aclose()
                return
            # Only ids of events dispatched so far count: a drop mid-event resumes before it.
            if decoder.last_event_id is not None:
                stream.last_event_id = decoder.last_event_id or None
            if decoder.retry is not None:
                stream.retry_ms = decoder.retry

    async def _get(
        self, last_event_id: str | None, *, after: tuple[float, int] | None = None
    ) -> httpx.Response | None:
        """Open a GET stream; `after=(ended, retry_ms)` reconnects `retry_ms` after the loop
        time `ended`, however long the work since `ended` took (so the server's delay is met,
        not exceeded by it)."""
        if after is not None:
            ended, retry_ms = after
            await asyncio.sleep(
                max(0.0, ended + retry_ms / 1000 - asyncio.get_running_loop().time())
            )
        client = self._client
        if client is None:
            return None
        headers = self._headers(None, accept="text/event-stream")
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        try:
            response = await asyncio.wait_for(
                client.send(client.build_request("GET", self.url, headers=headers), stream=True),
                self.timeout,
            )
        except Exception as exc:
            logger.debug("%s: GET failed: %r", self.name, exc)
            return None
        if response.status_code != 200 or not response.headers.get("content-type", "").startswith(
            "text/event-stream"
        ):
            await response.aclose()
            return None
        return response

    async def _start_get(self) -> None:
        """Open the standalone GET stream before any further request, so server messages for
        those requests have somewhere to go; then keep it open in the background."""
        if self._get_started or self.protocol_version in MODERN_VERSIONS:
            return
        self._get_started = True
        first = await self._get(None)
        if first is None:
            return  # the server offers no GET stream (405); that is allowed
        task = asyncio.ensure_future(self._listen(first))
        self._track(task, None)

    async def _listen(self, response: httpx.Response | None) -> None:
        """Read the standalone GET stream, reconnecting (with Last-Event-ID) when it drops."""
        loop = asyncio.get_running_loop()
        stream = _Stream(set())
        failures = 0
        while self._client is not None and failures < MAX_RESUME_ATTEMPTS:
            if response is None:
                failures += 1
            else:
                failures = 0
                with contextlib.suppress(Exception):
                    await self._read_events(response, stream)
            ended = loop.time()
            if response is not None:
                await response.aclose()
            response = await self._get(stream.last_event_id, after=(ended, stream.retry_ms))

    def legacy_transport(self) -> LegacySSETransport | None:
        """The legacy HTTP+SSE transport to connect with instead, when this url ends in `/sse`
        and answered 405 to a POST (a server that speaks only the old transport)."""
        if not (self.legacy_sse_fallback and self.rejected_post and is_legacy_sse_url(self.url)):
            return None
        return LegacySSETransport(
            self.url,
            headers=self.extra_headers,
            auth=self.auth,
            timeout=self.timeout,
            name=self.name,
            max_message_bytes=self.max_message_bytes,
        )

    # -- shutdown -------------------------------------------------------------------------------

    async def close(self) -> None:
        client, self._client = self._client, None
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if client is None:
            return
        if self.session_id is not None:
            headers = self._headers(None, accept="application/json")
            with contextlib.suppress(Exception):
                await client.delete(self.url, headers=headers, timeout=min(self.timeout, 5.0))
            self.session_id = None
        await client.aclose()


def _http_error(status: int, raw: bytes, url: str) -> JSONRPCError:
    """A JSON-RPC error from a failed POST: the server's own error body when it sent one."""
    with contextlib.suppress(JSONRPCError):
        decoded = decode(raw) if raw.strip() else None
        if isinstance(decoded, dict) and isinstance(decoded.get("error"), dict):
            error = decoded["error"]
            code = error.get("code")
            return JSONRPCError(
                code if isinstance(code, int) else INTERNAL_ERROR,
                str(error.get("message", f"HTTP {status}")),
                error.get("data"),
            )
    text = raw.decode(errors="replace").strip()[:300]
    return JSONRPCError(
        CONNECTION_CLOSED if status >= 500 else INTERNAL_ERROR,
        f"HTTP {status} from {url}" + (f": {text}" if text else ""),
    )
