"""A loopback HTTP server that replays recorded-format provider responses.

It runs real uvicorn on 127.0.0.1 in a background thread, so adapters go through httpx,
TCP, chunked transfer and SSE exactly as against a provider. Streamed fixtures are cut into
small uneven chunks (splitting lines and UTF-8 sequences) to exercise the SSE decoder.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections import deque
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

FIXTURES = Path(__file__).parent / "fixtures"


def fixture_bytes(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def fixture_json(name: str) -> Any:
    return json.loads(fixture_bytes(name))


@dataclass
class Recorded:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] | None = None


def _uneven(data: bytes) -> list[bytes]:
    sizes = (7, 61, 3, 130, 17, 1, 40)
    chunks, position, index = [], 0, 0
    while position < len(data):
        size = sizes[index % len(sizes)]
        chunks.append(data[position : position + size])
        position += size
        index += 1
    return chunks


class ReplayServer:
    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Recorded] = []
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)  # connections queue here until uvicorn accepts them
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        app = Starlette(routes=[Route("/{path:path}", self._handle, methods=["GET", "POST"])])
        config = uvicorn.Config(app, log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._server.serve(sockets=[self._sock])), daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()

    def reset(self) -> None:
        self.replies.clear()
        self.requests.clear()

    def json(self, name_or_body: str | Any, status: int = 200, **headers: str) -> None:
        body = fixture_bytes(name_or_body) if isinstance(name_or_body, str) else name_or_body
        if not isinstance(body, bytes):
            body = json.dumps(body).encode()
        headers = {k.replace("_", "-"): v for k, v in headers.items()}
        self.replies.append(Reply(status, body, {"content-type": "application/json", **headers}))

    def sse(self, name_or_bytes: str | bytes) -> None:
        data = fixture_bytes(name_or_bytes) if isinstance(name_or_bytes, str) else name_or_bytes
        headers = {"content-type": "text/event-stream", "cache-control": "no-cache"}
        self.replies.append(Reply(200, b"", headers, _uneven(data)))

    def bodies(self) -> Iterator[Any]:
        return (r.body for r in self.requests)

    async def _handle(self, request: Request) -> Response:
        raw = await request.body()
        self.requests.append(
            Recorded(
                request.method,
                request.url.path,
                request.url.query,
                dict(request.headers),
                json.loads(raw) if raw else None,
            )
        )
        if not self.replies:
            return Response(b'{"error": {"message": "no reply scripted"}}', 599)
        reply = self.replies.popleft()
        if reply.chunks is None:
            return Response(reply.body, reply.status, reply.headers)
        chunks = reply.chunks

        async def body() -> AsyncIterator[bytes]:
            for chunk in chunks:
                yield chunk

        return StreamingResponse(body(), reply.status, reply.headers)
