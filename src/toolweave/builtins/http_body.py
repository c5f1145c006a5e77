"""Response bodies read with a byte cap on the decoded bytes, whatever the Content-Encoding.

httpx decodes each raw chunk in one call, so 1.7 KB of `Content-Encoding: gzip, gzip` on the
wire becomes hundreds of MB in memory before a cap that counts decoded chunks can look at it.
Here every encoding layer is a zlib stream inflated at most `_PIECE` bytes at a time, the
layers pulled lazily one piece after another, and reading stops as soon as the decoded size
passes the cap: memory stays near the cap plus one piece per layer.
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import AsyncGenerator, Iterator
from typing import cast

import httpx

from toolweave.tools.errors import ExecutionFailed

ACCEPT_ENCODING = "gzip, deflate"
"""The encodings asked for, which are the ones `read_capped` can decode with a bound."""
_PIECE = 64 * 1024
"""Decoded bytes one inflate step produces at most."""
_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


class _Layer:
    """One `gzip` or `deflate` layer, inflated in bounded pieces."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self._inflate = zlib.decompressobj(_WBITS[encoding])
        self._raw_deflate = encoding == "deflate"

    def feed(self, data: bytes) -> Iterator[bytes]:
        while True:
            try:
                piece = self._inflate.decompress(data, _PIECE)
            except zlib.error:
                if not self._raw_deflate:
                    raise
                # servers send `deflate` without the zlib header as often as with it
                self._inflate, self._raw_deflate = zlib.decompressobj(-zlib.MAX_WBITS), False
                continue
            self._raw_deflate = False
            data = self._inflate.unconsumed_tail
            if piece:
                yield piece
            if self._inflate.eof or (not data and len(piece) < _PIECE):
                return


def _through(layers: list[_Layer], data: bytes) -> Iterator[bytes]:
    if not layers:
        yield data
        return
    for piece in layers[0].feed(data):
        yield from _through(layers[1:], piece)


def _layers(response: httpx.Response, tool: str) -> list[_Layer]:
    """The decoding layers of `response`, outermost (last applied) first."""
    header = response.headers.get("content-encoding", "")
    names = [n.strip().lower() for n in header.split(",") if n.strip()]
    names = [n for n in names if n != "identity"]
    unknown = [n for n in names if n not in _WBITS]
    if unknown:
        raise ExecutionFailed(
            f"{tool}: the server answered Content-Encoding {header!r}; only gzip and deflate "
            f"can be read with a size bound ({', '.join(unknown)} cannot)",
            tool=tool,
        )
    return [_Layer(n) for n in reversed(names)]


async def read_capped(response: httpx.Response, max_bytes: int, tool: str) -> tuple[bytes, bool]:
    """At most `max_bytes` decoded bytes of the body, and whether there was more."""
    layers = _layers(response, tool)
    chunks: list[bytes] = []
    size = 0
    try:
        raw_stream = cast("AsyncGenerator[bytes, None]", response.aiter_raw())  # httpx's is one
        async with contextlib.aclosing(raw_stream) as raws:  # closed when cut short
            async for raw in raws:
                for piece in _through(layers, raw):
                    chunks.append(piece)
                    size += len(piece)
                    if size > max_bytes:
                        return b"".join(chunks)[:max_bytes], True
    except zlib.error as exc:
        raise ExecutionFailed(
            f"{tool}: the body is not valid {layers[0].encoding if layers else ''} data: {exc}",
            tool=tool,
        ) from exc
    return b"".join(chunks), False
