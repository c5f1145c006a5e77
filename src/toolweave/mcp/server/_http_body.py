"""Reading what a Streamable HTTP client sends: the body under `max_body_bytes`, and the hang-up.

An over-limit body is still read (and discarded) up to `DRAIN_FACTOR` times the limit, so the
client receives its 413 instead of a reset connection; beyond that the connection is cut.
"""

from __future__ import annotations

from starlette.requests import Request

DRAIN_FACTOR = 16


async def read_capped_body(request: Request, limit: int) -> bytes | None:
    """The body, or None when it exceeds `limit` bytes (checked while reading)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit * DRAIN_FACTOR:
        return None  # not worth reading: the connection is cut after the 413
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            chunks.clear()  # keep nothing; read on so the client gets its 413
            if size > limit * DRAIN_FACTOR:
                break
        else:
            chunks.append(chunk)
    return b"".join(chunks) if size <= limit else None


async def disconnected(request: Request) -> None:
    """Return once the client hangs up (the request body has been read already)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass
