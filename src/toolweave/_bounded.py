"""Reading an HTTP body no further than a bound: the LLM adapters, the MCP client, the console.

Like `_sse`, it sits at the top of the package and imports nothing of toolweave, so
`toolweave.llm` and `toolweave.mcp` both use it without one layer reaching into the other. A
huge or endless body (or a compression bomb, counted after decompression) is refused as soon as
it passes the bound, before more is read; each caller raises its own error, naming its own
setting (`max_answer_bytes`, `max_message_bytes`).
"""

from __future__ import annotations

from collections.abc import AsyncIterable


async def read_bounded(chunks: AsyncIterable[bytes], limit: int) -> bytes | None:
    """The bytes of `chunks` joined, or None as soon as they pass `limit` (nothing more read)."""
    parts: list[bytes] = []
    size = 0
    async for chunk in chunks:
        size += len(chunk)
        if size > limit:
            return None
        parts.append(chunk)
    return b"".join(parts)
