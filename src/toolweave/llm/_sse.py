"""A small, fast Server-Sent Events decoder.

Streams dominate agent latency, so parsing must cost next to nothing: the decoder splits on
blank lines with `str.split` (C speed) and only falls back to per-line field parsing when an
event has more than a single `data:` line. It handles `\\r\\n`/`\\r` line ends, comments,
multi-line data and chunk boundaries anywhere (inside UTF-8 sequences too).
"""

from __future__ import annotations

import codecs


class SSEDecoder:
    """Feed raw bytes, get `(event, data)` pairs for every complete event."""

    __slots__ = ("_buffer", "_decoder", "_pending_cr")

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""
        self._pending_cr = False

    def feed(self, chunk: bytes) -> list[tuple[str, str]]:
        text = self._decoder.decode(chunk)
        if not text:
            return []
        if self._pending_cr:
            text = "\r" + text
            self._pending_cr = False
        if "\r" in text:
            if text.endswith("\r"):
                # A lone CR might be the first half of CRLF split across chunks.
                self._pending_cr = True
                text = text[:-1]
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        buffer = self._buffer + text if self._buffer else text
        if "\n\n" not in buffer:
            self._buffer = buffer
            return []
        blocks = buffer.split("\n\n")
        self._buffer = blocks.pop()
        events: list[tuple[str, str]] = []
        for block in blocks:
            event = _parse_block(block)
            if event is not None:
                events.append(event)
        return events

    def flush(self) -> list[tuple[str, str]]:
        """Events left when the stream ends without a final blank line."""
        rest = self._buffer + self._decoder.decode(b"", final=True)
        self._buffer = ""
        event = _parse_block(rest.replace("\r\n", "\n").replace("\r", "\n").strip("\n"))
        return [event] if event is not None else []


def _parse_block(block: str) -> tuple[str, str] | None:
    if block.startswith("data: ") and "\n" not in block:
        return "", block[6:]
    event = ""
    data: list[str] = []
    for line in block.split("\n"):
        if not line or line[0] == ":":
            continue
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
    if not data:
        return None
    return event, "\n".join(data)
