"""A loopback HTTP/1.1 server for the fetch, API and search tests: routes map a path to a
canned response, and every request is recorded so tests can check what was sent."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Recorded:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes


@dataclass
class FakeServer:
    port: int = 0
    routes: dict[str, tuple[int, dict[str, str], bytes]] = field(default_factory=dict)
    requests: list[Recorded] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def route(self, path: str, body: str | bytes | Any, status: int = 200, **headers: str) -> None:
        if isinstance(body, str):
            data = body.encode("utf-8")
        elif isinstance(body, bytes):
            data = body
        else:
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
            headers.setdefault("content_type", "application/json")
        self.routes[path] = (status, {k.replace("_", "-"): v for k, v in headers.items()}, data)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        self.requests.append(Recorded(method, target, headers, body))
        status, extra, data = self.routes.get(target.split("?")[0], (404, {}, b"not found"))
        reply = [f"HTTP/1.1 {status} X", f"Content-Length: {len(data)}", "Connection: close"]
        reply += [f"{k}: {v}" for k, v in extra.items()]
        writer.write(("\r\n".join(reply) + "\r\n\r\n").encode("latin-1") + data)
        await writer.drain()
        writer.close()


@asynccontextmanager
async def serving_fake() -> AsyncIterator[FakeServer]:
    """A `FakeServer` listening on a free loopback port until the block ends."""
    fake = FakeServer()
    server = await asyncio.start_server(fake.handle, "127.0.0.1", 0)
    fake.port = server.sockets[0].getsockname()[1]
    async with server:
        yield fake
        server.close()


async def drip(writer: asyncio.StreamWriter, body: bytes, pace: float = 0.1) -> None:
    """Write `body` one byte every `pace` seconds (a hostile server's pace: each read is quick,
    the whole is not), then close; a client that hangs up ends it."""
    try:
        for byte in body:
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(pace)
    except ConnectionError:
        pass
    writer.close()
