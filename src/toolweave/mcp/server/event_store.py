"""SSE plumbing for the Streamable HTTP transport: reply streams and the event store.

A `ReplyStream` is the answer channel of one POSTed request. The first message decides its
shape: the final response alone becomes a plain JSON body (the fast path), anything earlier
(a notification, a server-to-client request, an explicit close) turns it into an SSE stream.
Every SSE event is kept in the `EventStore` so a client whose stream dropped, or was closed on
purpose (SEP-1699 polling), resumes with `Last-Event-ID` and misses nothing.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import deque
from collections.abc import AsyncIterator
from typing import Any, Protocol

from toolweave.mcp.shared.jsonrpc import encode

MAX_EVENTS_PER_STREAM = 1000


class EventStore(Protocol):
    """Where SSE events wait for a reconnecting client (swap in Redis for several workers)."""

    async def store(self, stream_id: str, message: dict[str, Any]) -> str: ...

    async def replay_after(self, last_event_id: str) -> tuple[str, list[tuple[str, bytes]]] | None:
        """The stream an event id belongs to and the events after it; None if unknown."""
        ...


class InMemoryEventStore:
    """Keeps the last `max_events` events of each stream in memory."""

    def __init__(self, max_events: int = MAX_EVENTS_PER_STREAM) -> None:
        self.max_events = max_events
        self._streams: dict[str, deque[tuple[int, bytes]]] = {}
        self._seq: dict[str, int] = {}

    async def store(self, stream_id: str, message: dict[str, Any]) -> str:
        seq = self._seq.get(stream_id, 0) + 1
        self._seq[stream_id] = seq
        events = self._streams.get(stream_id)
        if events is None:
            events = self._streams[stream_id] = deque(maxlen=self.max_events)
        events.append((seq, encode(message)))
        return f"{stream_id}.{seq}"

    async def replay_after(self, last_event_id: str) -> tuple[str, list[tuple[str, bytes]]] | None:
        stream_id, _, seq_text = last_event_id.rpartition(".")
        if not stream_id or not seq_text.isdigit():
            return None
        after = int(seq_text)
        events = self._streams.get(stream_id, ())
        return stream_id, [(f"{stream_id}.{s}", data) for s, data in events if s > after]

    def forget(self, stream_id: str) -> None:
        self._streams.pop(stream_id, None)
        self._seq.pop(stream_id, None)


def sse_event(event_id: str | None, data: bytes) -> bytes:
    head = f"id: {event_id}\n".encode() if event_id is not None else b""
    return head + b"data: " + data + b"\n\n"


class ReplyStream:
    """The answer channel of one POSTed request (see the module docstring)."""

    __slots__ = (
        "decided",
        "final",
        "finished",
        "first_queue",
        "id",
        "json_ok",
        "mode",
        "queue",
        "request_id",
    )

    def __init__(self, request_id: Any, *, json_ok: bool, sse_ok: bool) -> None:
        self.id = uuid.uuid4().hex
        self.request_id = request_id
        self.json_ok = json_ok
        self.mode: str | None = None if sse_ok else "json-only"
        self.decided = asyncio.get_running_loop().create_future()
        self.final: dict[str, Any] | None = None
        self.finished = False
        self.queue: asyncio.Queue[bytes | None] | None = asyncio.Queue()
        # What the POST's own response drains, even if the handler closed the stream before
        # the response started (the events sent until then still reach the client).
        self.first_queue = self.queue

    def _decide(self, mode: str) -> None:
        self.mode = mode
        if not self.decided.done():
            self.decided.set_result(None)

    def _is_final(self, message: dict[str, Any]) -> bool:
        if "method" in message:
            return False
        # An error with a null id on this request's own stream is about this request: one the
        # peer refused before it could be attributed (a bad or duplicate id). It ends the POST.
        return message.get("id") == self.request_id or (
            message.get("id") is None and "error" in message
        )

    async def send(self, message: dict[str, Any], store: EventStore) -> None:
        if self.finished:  # answered or abandoned: a late notification has nowhere to go
            return
        final = self._is_final(message)
        if self.mode is None and final and self.json_ok:
            self.final = message
            self.finished = True
            self._decide("json")
            return
        if self.mode == "json-only":  # the client cannot take a stream: only the answer counts
            if final:
                self.final = message
                self.finished = True
                self._decide("json")
            return
        if self.mode is None:
            self._decide("sse")
        event_id = await store.store(self.id, message)
        if self.queue is not None:
            self.queue.put_nowait(sse_event(event_id, encode(message)))
        if final:
            self.finished = True
            if self.queue is not None:
                self.queue.put_nowait(None)

    def abandon(self) -> None:
        """The request ended without an answer (cancelled, or its session closed).

        Nothing sent yet: the POST is answered `202 Accepted` with no body (the JSON-RPC
        exchange has no response to give). Already streaming: the SSE stream ends.
        """
        self.finished = True
        if not self.decided.done():
            self._decide("none")
        elif self.queue is not None:
            self.queue.put_nowait(None)

    def keepalive(self) -> None:
        """An SSE comment line on a quiet long-lived stream (a `subscriptions/listen` answer)."""
        if self.mode == "sse" and not self.finished and self.queue is not None:
            self.queue.put_nowait(b":\n\n")

    def close_stream(self) -> None:
        """Close the SSE stream now; later messages wait in the event store for a resume."""
        if self.mode is None:
            self._decide("sse")
        if self.queue is not None:
            self.queue.put_nowait(None)
            self.queue = None


async def drain(queue: asyncio.Queue[bytes | None]) -> AsyncIterator[bytes]:
    while True:
        chunk = await queue.get()
        if chunk is None:
            return
        yield chunk
