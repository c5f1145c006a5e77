"""The stdio transport: newline-delimited JSON-RPC on stdin/stdout, logs on stderr only.

A stray `print()` in a tool would corrupt the protocol stream, so the real stdout is duplicated
for the protocol and file descriptor 1 is pointed at stderr before any tool runs. Imports stay
minimal (no starlette, no pydantic) because this path decides the server's cold start. When
stdin closes, requests already received are still answered (within `EOF_GRACE` seconds), so
`server < requests.jsonl` works as well as a long-lived host connection.

Input is read in chunks and split into lines here, so a line over `max_line_bytes` is never held
whole: its bytes are dropped as they arrive, the client gets a JSON-RPC error (id null, since
the request's id was in the part not kept), and the next line is read as usual.
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
from typing import TYPE_CHECKING, Any, BinaryIO

from toolweave.mcp.shared.errors import INVALID_REQUEST, JSONRPCError
from toolweave.mcp.shared.jsonrpc import RequestContext, decode, encode
from toolweave.mcp.shared.peer import JSONRPCPeer

if TYPE_CHECKING:
    from toolweave.mcp.server._view import ServerView

MAX_LINE_BYTES = 64 * 1024 * 1024
"""Bytes of one stdio message (line) accepted by default; `toolweave serve` passes
`[serve].max_body_bytes`."""
_CHUNK = 64 * 1024
#: Seconds to keep answering in-flight requests after stdin reached EOF.
EOF_GRACE = 10.0


async def _pipe_chunks(source: BinaryIO) -> AsyncIterator[bytes]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_CHUNK, loop=loop)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader, loop=loop), source
    )
    try:
        while chunk := await reader.read(_CHUNK):
            yield chunk
    finally:
        transport.close()


async def _thread_chunks(source: BinaryIO) -> AsyncIterator[bytes]:
    """Regular files and /dev/null cannot be polled; read them in a thread instead."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes] = asyncio.Queue(maxsize=16)  # the thread waits, memory stays low

    def pump() -> None:
        while chunk := source.read(_CHUNK):
            asyncio.run_coroutine_threadsafe(queue.put(chunk), loop).result()
        asyncio.run_coroutine_threadsafe(queue.put(b""), loop).result()

    threading.Thread(target=pump, name="mcp-stdin", daemon=True).start()
    while chunk := await queue.get():
        yield chunk


async def _lines(chunks: AsyncIterator[bytes], limit: int) -> AsyncIterator[bytes | None]:
    """The lines of `chunks`; None stands for a line over `limit` bytes, which is not kept."""
    buffer = bytearray()
    oversize = False
    async for chunk in chunks:
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if not oversize and len(buffer) + end - start <= limit:
                buffer += chunk[start:end]
                yield bytes(buffer)
            else:
                yield None
            buffer.clear()
            oversize = False
            start = end + 1
        if not oversize:
            buffer += chunk[start:]
            if len(buffer) > limit:
                buffer.clear()
                oversize = True
    if oversize:
        yield None
    elif buffer:
        yield bytes(buffer)


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
    server: ServerView,
    *,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
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
    chunks = _pipe_chunks(source) if _pollable(source) else _thread_chunks(source)
    try:
        async for raw in _lines(chunks, max_line_bytes):
            if raw is None:
                await send(
                    {
                        "jsonrpc": "2.0",
                        "id": None,
                        "error": {
                            "code": INVALID_REQUEST,
                            "message": f"message larger than max_line_bytes ({max_line_bytes} "
                            "bytes) was dropped; send less (or raise [serve].max_body_bytes)",
                        },
                    }
                )
                continue
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
