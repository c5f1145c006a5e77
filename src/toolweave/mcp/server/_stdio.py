"""The stdio transport: newline-delimited JSON-RPC on stdin/stdout, logs on stderr only.

A stray `print()` in a tool would corrupt the protocol stream, so the real stdout is duplicated
for the protocol and file descriptor 1 is pointed at stderr before any tool runs. Imports stay
minimal (no starlette, no pydantic) because this path decides the server's cold start. When
stdin closes, requests already received are still answered (within `EOF_GRACE` seconds), so
`server < requests.jsonl` works as well as a long-lived host connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import stat
import sys
import threading
from collections.abc import AsyncIterator
from typing import Any, BinaryIO

from toolweave.mcp.shared.errors import JSONRPCError
from toolweave.mcp.shared.jsonrpc import RequestContext, decode, encode
from toolweave.mcp.shared.peer import JSONRPCPeer

MAX_LINE_BYTES = 64 * 1024 * 1024
#: Seconds to keep answering in-flight requests after stdin reached EOF.
EOF_GRACE = 10.0


async def _pipe_lines(source: BinaryIO) -> AsyncIterator[bytes]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE_BYTES, loop=loop)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader, loop=loop), source
    )
    try:
        while line := await reader.readline():
            yield line
    finally:
        transport.close()


async def _thread_lines(source: BinaryIO) -> AsyncIterator[bytes]:
    """Regular files and /dev/null cannot be polled; read them in a thread instead."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes] = asyncio.Queue()

    def pump() -> None:
        for line in source:
            loop.call_soon_threadsafe(queue.put_nowait, line)
        loop.call_soon_threadsafe(queue.put_nowait, b"")

    threading.Thread(target=pump, name="mcp-stdin", daemon=True).start()
    while line := await queue.get():
        yield line


def _write_rest(out: BinaryIO, data: bytes, written: int | None) -> None:
    """Finish a partial write: an unbuffered write may stop short (a signal, or a non-blocking
    pipe the host handed us), and half a message would corrupt the protocol stream."""
    view = memoryview(data)[written or 0 :]
    while view:
        if written is None:  # a full non-blocking pipe: wait until the host reads
            select.select([], [out], [])
        written = out.write(view)
        if written is not None:
            view = view[written:]


def _pollable(source: BinaryIO) -> bool:
    mode = os.fstat(source.fileno()).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and source.isatty())


async def serve_stdio(
    server: Any, *, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None
) -> None:
    """Serve one client until stdin reaches EOF."""
    if stdout is None:
        stdout = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
        sys.stdout.flush()
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    out = stdout
    session = server.new_session()
    in_flight = 0
    idle = asyncio.Event()
    idle.set()

    async def send(message: dict[str, Any]) -> None:
        data = encode(message) + b"\n"
        written = out.write(data)
        if written != len(data):
            _write_rest(out, data, written)

    async def handle(method: str, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        nonlocal in_flight
        in_flight += 1
        idle.clear()
        try:
            result: dict[str, Any] = await session.handle(method, params, ctx)
            return result
        finally:
            in_flight -= 1
            if in_flight == 0:
                idle.set()

    peer = JSONRPCPeer(send, handle, session.on_notification)
    session.peer = peer
    server.sessions.add(session)
    source = stdin if stdin is not None else sys.stdin.buffer
    lines = _pipe_lines(source) if _pollable(source) else _thread_lines(source)
    try:
        async for raw in lines:
            line = raw.strip()
            if not line:
                continue
            try:
                message = decode(line)
            except JSONRPCError as exc:
                await send({"jsonrpc": "2.0", "id": None, "error": exc.to_dict()})
                continue
            peer.feed(message)
        await asyncio.sleep(0)  # let requests fed just now start
        server.changes.end(lambda s: s is session)  # listen streams: answered, not awaited
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(idle.wait(), EOF_GRACE)
    finally:
        peer.close()
        server.sessions.discard(session)
        out.flush()
