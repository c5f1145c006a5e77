"""The one Server-Sent Events decoder, shared by the LLM adapters and the MCP client.

It lives at the top of the package and imports nothing of toolweave, so both `toolweave.llm`
and `toolweave.mcp` can use it without one layer reaching into the other. It follows the WHATWG
event-stream rules (https://html.spec.whatwg.org/multipage/server-sent-events.html):

- a UTF-8 byte order mark at the start of the stream is dropped; lines end with CRLF, LF or CR,
  split across chunks anywhere (inside UTF-8 sequences too);
- `:` lines are comments; a line without a colon is a field with an empty value; one space
  after the colon is removed; unknown fields are ignored;
- a blank line dispatches the event: its `data` lines joined with LF, its `event` type (empty
  for the default "message"); an event without `data` is not dispatched;
- `id:` (without NUL) fills the last-event-id buffer, which becomes `last_event_id` only when
  the event is dispatched, so a stream that drops mid-event resumes from the last event the
  client actually received; `retry:` with only ASCII digits sets `retry` (milliseconds);
- at the end of the stream an unfinished event is discarded, never dispatched.

Streams dominate agent latency, so parsing must cost next to nothing: the decoder splits on
blank lines with `str.split` (C speed) and parses fields line by line only when an event is more
than a single `data:` line. The text of an event still being received is kept as the list of its
pieces and joined once, when a blank line ends it, so a long event costs time in proportion to
its length (adding each chunk to one growing string would copy it again for every chunk).
"""

from __future__ import annotations

import codecs


class SSEDecoder:
    """Feed raw bytes, get `(event, data)` pairs for every complete event.

    `last_event_id` is the id of the last dispatched event's stream position (None until the
    stream sets one) and `retry` the reconnection delay the server asked for (None if it did
    not).
    """

    __slots__ = (
        "_decoder",
        "_ends_lf",
        "_id_buffer",
        "_parts",
        "_pending",
        "_skip_lf",
        "last_event_id",
        "retry",
    )

    def __init__(self) -> None:
        # "utf-8-sig" drops a byte order mark at the start only, even one split across chunks.
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        self._parts: list[str] = []  # the text after the last blank line, as received
        self._pending = 0  # its length
        self._ends_lf = False  # it ends with LF: an LF starting the next chunk is a blank line
        self._skip_lf = False
        self._id_buffer: str | None = None
        self.last_event_id: str | None = None
        self.retry: int | None = None

    def feed(self, chunk: bytes) -> list[tuple[str, str]]:
        text = self._decoder.decode(chunk)
        if not text:
            return []
        if self._skip_lf:
            # The last chunk ended in CR, already a line end: an LF right after it is its pair.
            self._skip_lf = False
            if text[0] == "\n":
                text = text[1:]
                if not text:
                    return []
        if "\r" in text:
            self._skip_lf = text[-1] == "\r"
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        if "\n\n" not in text and not (self._ends_lf and text[0] == "\n"):
            self._parts.append(text)  # no event ends in this chunk: keep it, copy nothing
            self._pending += len(text)
            self._ends_lf = text[-1] == "\n"
            return []
        self._parts.append(text)
        blocks = "".join(self._parts).split("\n\n")
        rest = blocks.pop()
        self._parts = [rest] if rest else []
        self._pending = len(rest)
        self._ends_lf = rest.endswith("\n")
        events: list[tuple[str, str]] = []
        for block in blocks:
            if block.startswith("data: ") and "\n" not in block:
                events.append(("", block[6:]))
            elif block:
                event = self._parse_block(block)
                if event is not None:
                    events.append(event)
        # Every block here ended with a blank line, so every one was dispatched.
        self.last_event_id = self._id_buffer
        return events

    @property
    def pending(self) -> int:
        """Characters of the event being received (not yet ended by a blank line)."""
        return self._pending

    def _parse_block(self, block: str) -> tuple[str, str] | None:
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
            elif name == "id":
                if "\0" not in value:
                    self._id_buffer = value
            elif name == "retry" and value.isascii() and value.isdigit():
                self.retry = int(value)
        if not data:
            return None
        return event, "\n".join(data)
