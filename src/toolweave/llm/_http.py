"""What every HTTP adapter shares: API keys, the httpx client, retries and streamed bodies.

Retries follow the providers' own guidance: 408/409/429/5xx and dropped connections are
retried with exponential backoff, honouring `retry-after-ms` / `Retry-After` when the server
sends them; any other 4xx fails at once with the provider's own message, because repeating a
bad request only burns quota.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import random
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, Self

import httpx

from toolweave._bounded import read_bounded
from toolweave._sse import SSEDecoder
from toolweave.llm.errors import ModelConfigError, ModelError
from toolweave.llm.types import ModelResponse, StreamEvent, response_events

RETRYABLE_STATUS = frozenset({408, 409, 429})
BACKOFF_BASE = 0.5
"""Seconds before the first retry when the server gives no hint; doubles each attempt."""
BACKOFF_MAX = 8.0
"""Ceiling for computed backoff."""
RETRY_AFTER_MAX = 60.0
"""Longest server-requested wait honoured; longer hints fall back to computed backoff."""
DEFAULT_TIMEOUT = 600.0
"""Seconds per request; long generations with thinking can take minutes."""
CONNECT_TIMEOUT = 10.0
"""Seconds to open a connection; an unreachable server should fail fast."""
MAX_ANSWER_BYTES = 64 * 1024 * 1024
"""The default `HTTPModel.max_answer_bytes`: the largest answer read into memory (a JSON body,
an error body, or one event of a stream), as the MCP client's `max_message_bytes`."""


def resolve_api_key(
    api_key: str | None, env_vars: Sequence[str], owner: str, *, required: bool = True
) -> tuple[str | None, str]:
    """The explicit key, else the first set environment variable, else a clear error; with
    where it came from (`api_key=...` or the variable's name), for a 401 to point at."""
    if api_key:
        return api_key, "api_key=..."
    for name in env_vars:
        value = os.environ.get(name)
        if value:
            return value, name
    if not required:
        return None, " or ".join(env_vars)
    names = " or ".join(env_vars)
    raise ModelConfigError(
        f"{owner} needs an API key: set the environment variable {names} "
        f"(export {env_vars[0]}=...) or pass api_key=...",
        setting=env_vars[0],
    )


def dumps(body: Any) -> bytes:
    """Compact UTF-8 JSON, the way request bodies are sent."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def _retry_after(headers: httpx.Headers) -> float | None:
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, float(parsed.timestamp()) - time.time())


def backoff_delay(attempt: int, headers: httpx.Headers | None) -> float:
    hinted = _retry_after(headers) if headers is not None else None
    if hinted is not None and 0 <= hinted <= RETRY_AFTER_MAX:
        return hinted
    delay: float = min(BACKOFF_BASE * 2.0**attempt, BACKOFF_MAX)
    return delay * (1 - 0.25 * random.random())


RETRYABLE_CODES = frozenset(
    {
        "rate_limit_error",
        "rate_limit_exceeded",
        "overloaded_error",
        "api_error",
        "timeout_error",
        "server_error",
        "internal_server_error",
        "service_unavailable",
        "RESOURCE_EXHAUSTED",
        "UNAVAILABLE",
        "DEADLINE_EXCEEDED",
        "INTERNAL",
    }
)
"""Provider error codes that mean "try again later" (rate limits, overload, timeouts, faults)."""
FINAL_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached"})
"""Codes sent with a 429 that no wait will fix."""
ERROR_TEXT_MAX = 500
"""Characters of an unreadable error body (or an upstream's raw words) kept in a message."""


def _code(error: dict[str, Any]) -> tuple[str | None, int | None]:
    kind = error.get("type") or error.get("status")
    code = error.get("code")
    if isinstance(code, int) and not isinstance(code, bool):
        return (kind if isinstance(kind, str) else None), code
    if isinstance(code, str) and code:
        return code, None
    return (kind if isinstance(kind, str) else None), None


def _upstream(error: dict[str, Any]) -> str:
    """OpenRouter's `metadata.raw` (the upstream provider's own error), read when it is JSON."""
    metadata = error.get("metadata")
    if not isinstance(metadata, dict) or not metadata.get("raw"):
        return ""
    raw = metadata["raw"]
    words = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
    try:
        inner = json.loads(words)
    except ValueError:
        inner = None
    if inner is not None:
        words = provider_error(inner)[0]
    name = metadata.get("provider_name")
    prefix = f"{name} says" if isinstance(name, str) else "upstream says"
    return f" ({prefix}: {words[:ERROR_TEXT_MAX]})"


def provider_error(data: Any) -> tuple[str, str | None, int | None]:
    """The provider's words from a parsed error body: (message, code, status in the body).

    Reads OpenAI's and OpenAI-compatible hosts' `{"error": {"message", "type", "code"}}`,
    OpenRouter's `error.metadata.raw`, Anthropic's `{"type": "error", "error": {"type",
    "message"}}` and Gemini's `{"error": {"code", "message", "status"}}` (also in a list).
    """
    if isinstance(data, list) and data:
        data = data[0]
    if not isinstance(data, dict):
        return str(data)[:ERROR_TEXT_MAX], None, None
    error = data.get("error", data)
    if isinstance(error, str):
        return error, None, None
    if not isinstance(error, dict):
        return json.dumps(data, ensure_ascii=False)[:ERROR_TEXT_MAX], None, None
    code, status = _code(error)
    message = error.get("message") or error.get("msg") or error.get("detail")
    if not message:
        return json.dumps(data, ensure_ascii=False)[:ERROR_TEXT_MAX], code, status
    text = f"{code}: {message}" if code else str(message)
    return text + _upstream(error), code, status


def _read_error(body: bytes) -> tuple[str, str | None, int | None]:
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text[:ERROR_TEXT_MAX] or "empty error body", None, None
    return provider_error(data)


def stream_error(data: Any) -> ModelError:
    """A `ModelError` for an error sent inside a stream (or a 200 body), with the status the
    body gives (Gemini, OpenRouter): retryable only when its code or status says rate limit,
    overload, timeout or a server fault."""
    message, code, status = provider_error(data)
    retryable = code in RETRYABLE_CODES or (
        code not in FINAL_CODES and status is not None and is_retryable(status)
    )
    return ModelError(status, message, retryable, code)


def is_retryable(status: int) -> bool:
    return status in RETRYABLE_STATUS or status >= 500


class HTTPModel:
    """Base of the adapters: one lazily created `httpx.AsyncClient` per event loop."""

    provider = "http"
    #: The largest answer read into memory: a JSON body, an error body or one stream event.
    #: A server that sends more (an endless event from a broken `openai-compat:` endpoint)
    #: fails the call naming this setting instead of growing memory until the timeout.
    max_answer_bytes: int = MAX_ANSWER_BYTES

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        max_retries: int,
        timeout: float,
        headers: Mapping[str, str] | None,
        client: httpx.AsyncClient | None,
    ) -> None:
        if not model:
            raise ModelConfigError(f"{type(self).__name__}: model must be a non-empty name")
        if max_retries < 0:
            raise ModelConfigError(f"max_retries must be >= 0, got {max_retries}")
        if not base_url.startswith(("http://", "https://")):
            raise ModelConfigError(
                f"{type(self).__name__}: base_url must start with http:// or https://, "
                f"got {base_url!r} (e.g. 'http://localhost:8000/v1')",
                setting="base_url",
            )
        self._model = model
        self.base_url = base_url.rstrip("/")
        self.max_retries = max_retries
        self.timeout = timeout
        self._extra_headers = dict(headers or {})
        self._client = client
        self._owns_client = client is None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.key_source = ""
        """Where the API key came from (a variable name or `api_key=...`), named on a 401."""

    def _use_key(
        self, api_key: str | None, env_vars: Sequence[str], *, required: bool = True
    ) -> str | None:
        key, self.key_source = resolve_api_key(
            api_key, env_vars, type(self).__name__, required=required
        )
        return key

    @property
    def model_name(self) -> str:
        return self._model

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._model!r}, base_url={self.base_url!r})"

    def _headers(self) -> dict[str, str]:
        raise NotImplementedError

    def _http(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or (self._owns_client and self._loop is not loop):
            # A pooled connection belongs to the loop that opened it (run_sync makes new loops).
            timeout = httpx.Timeout(self.timeout, connect=min(self.timeout, CONNECT_TIMEOUT))
            self._client = httpx.AsyncClient(timeout=timeout)
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None and self._owns_client:
            await self._client.aclose()
            self._client = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def _read(self, response: httpx.Response, url: str) -> bytes:
        """The body of a streamed `response`, read no further than `max_answer_bytes`."""
        body = await read_bounded(_chunks(response), self.max_answer_bytes)
        if body is None:
            raise self._too_long(response.status_code, url)
        return body

    def _too_long(self, status: int | None, url: str) -> ModelError:
        return ModelError(
            status,
            f"the answer from {url} is longer than max_answer_bytes ({self.max_answer_bytes}"
            " bytes); not read further (raise the model's max_answer_bytes to accept it)",
        )

    async def _send(
        self, url: str, body: Any, *, headers: Mapping[str, str] | None = None
    ) -> httpx.Response:
        """POST with retries; returns a successful response, open for reading. `headers` are
        this request's own (e.g. a beta flag a provider tool needs)."""
        client = self._http()
        headers = {
            **self._headers(),
            **(headers or {}),
            **self._extra_headers,
            "content-type": "application/json",
        }
        content = dumps(body)
        attempt = 0
        while True:
            request = client.build_request("POST", url, content=content, headers=headers)
            try:  # always streamed, so that no body is read past `max_answer_bytes`
                response = await client.send(request, stream=True)
            except httpx.TransportError as exc:
                if attempt >= self.max_retries:
                    raise ModelError(None, f"{type(exc).__name__}: {exc} ({url})", True) from exc
                await asyncio.sleep(backoff_delay(attempt, None))
                attempt += 1
                continue
            if response.status_code < 400:
                return response
            try:
                raw = await self._read(response, url)
            finally:
                await response.aclose()
            message, code, _ = _read_error(raw)
            # OpenAI and Anthropic may override the status-based rule with x-should-retry.
            hint = response.headers.get("x-should-retry")
            if hint in ("true", "false"):
                retryable = hint == "true"
            else:
                retryable = is_retryable(response.status_code) and code not in FINAL_CODES
            if not retryable or attempt >= self.max_retries:
                if response.status_code in (401, 403) and self.key_source:
                    message += f" (the API key from {self.key_source} was refused by {url})"
                raise ModelError(response.status_code, message, retryable, code)
            await asyncio.sleep(backoff_delay(attempt, response.headers))
            attempt += 1

    async def _post_json(
        self, url: str, body: Any, headers: Mapping[str, str] | None = None
    ) -> Any:
        response = await self._send(url, body, headers=headers)
        try:
            raw = await self._read(response, url)
        finally:
            await response.aclose()
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise ModelError(response.status_code, f"invalid JSON from {url}: {exc}") from exc

    async def _stream_events(
        self,
        url: str,
        body: Any,
        feed: Callable[[str], list[StreamEvent]],
        whole: Callable[[Any], ModelResponse],
        headers: Mapping[str, str] | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Yield what `feed` makes of each SSE payload; a payload it cannot read is a ModelError.

        Some OpenAI-compatible servers ignore `"stream": true` and answer with one JSON body:
        that body is read with `whole` (the adapter's non-streaming parser) and replayed as
        stream events ending in `Finished`, after which the caller must stop (it sees the
        `Finished`). The response is closed as soon as this generator stops, even when the
        caller raises.
        """
        response = await self._send(url, body, headers=headers)
        try:
            content_type = response.headers.get("content-type", "")
            if "json" in content_type and "event-stream" not in content_type:
                raw = await self._read(response, url)
                try:
                    parsed = whole(json.loads(raw))
                except (ValueError, LookupError, TypeError, AttributeError) as exc:
                    raise ModelError(
                        response.status_code, f"unreadable JSON answer from {url} ({exc!r})"
                    ) from exc
                async for event in response_events(parsed):
                    yield event
                return
            decoder = SSEDecoder()
            async for chunk in _chunks(response):
                for _event, data in decoder.feed(chunk):
                    try:
                        events = feed(data)
                    except (ValueError, LookupError, TypeError, AttributeError) as exc:
                        raise ModelError(
                            None, f"unreadable stream event from {url} ({exc!r}): {data[:200]}"
                        ) from exc
                    for event in events:
                        yield event
                if decoder.pending > self.max_answer_bytes:  # an event that never ends
                    raise self._too_long(None, url)
        finally:
            await response.aclose()


async def _chunks(response: httpx.Response) -> AsyncIterator[bytes]:
    """The body's bytes; a connection dropped mid-stream is a retryable ModelError."""
    try:
        async for chunk in response.aiter_bytes():
            yield chunk
    except httpx.TransportError as exc:
        raise ModelError(None, f"stream interrupted: {type(exc).__name__}: {exc}", True) from exc
