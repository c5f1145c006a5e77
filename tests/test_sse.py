"""The shared SSE decoder against the WHATWG event-stream rules, one test per rule.

The LLM adapters and the MCP client both read streams through `toolweave._sse.SSEDecoder`;
the resume-after-drop case over real HTTP is in tests/mcp/client/test_sse_resume.py. The cost
of a long event is measured in memory allocated (tracemalloc), not in time: its speed is in
benchmarks/sse_decoder.py.
"""

from __future__ import annotations

import tracemalloc

from hypothesis import given
from hypothesis import strategies as st

from toolweave._sse import SSEDecoder


def test_crlf_comments_and_multiline_data() -> None:
    decoder = SSEDecoder()
    raw = b': keep-alive\r\nevent: delta\r\ndata: {"a":\r\ndata: 1}\r\n\r\ndata: [DONE]\r\n\r\n'
    assert decoder.feed(raw) == [("delta", '{"a":\n1}'), ("", "[DONE]")]


def test_cr_lf_and_crlf_line_ends_are_the_same() -> None:
    for end in (b"\r", b"\n", b"\r\n"):
        raw = b"event: e" + end + b"data: \xe5\x8c\x97\xe4\xba\xac" + end + end
        assert SSEDecoder().feed(raw) == [("e", "北京")], end


def test_a_cr_ending_a_chunk_is_a_line_end_at_once() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: sunny\r\r") == [("", "sunny")]
    # The LF completing a CRLF split across chunks is not a second (blank) line.
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"\ndata: b\r\n\r\n") == [("", "a\nb")]


def test_a_byte_order_mark_at_the_start_is_dropped_even_when_split() -> None:
    bom = "\ufeff".encode()
    assert SSEDecoder().feed(bom + b"data: first\n\n") == [("", "first")]
    decoder = SSEDecoder()
    assert decoder.feed(bom[:1]) == []
    assert decoder.feed(bom[1:] + b"data: first\n\n") == [("", "first")]
    # Only at the start: a later U+FEFF is data.
    assert SSEDecoder().feed(b"data: a\n\n" + bom + b"data: b\n\n") == [("", "a")]


def test_an_unfinished_last_event_is_not_dispatched() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: complete\n\nid: 2\ndata: half") == [("", "complete")]
    assert decoder.last_event_id is None  # the id line of the unfinished event never counted


def test_the_last_event_id_is_committed_only_on_dispatch() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"id: 1\ndata: one\n\nid: 2\ndata: tw") == [("", "one")]
    assert decoder.last_event_id == "1"
    assert decoder.feed(b"o\n\n") == [("", "two")]
    assert decoder.last_event_id == "2"
    # An event without data is not dispatched but its id still moves the stream position
    # (a priming event), and the id persists for later events without an id line.
    assert decoder.feed(b"id: 3\n\ndata: four\n\n") == [("", "four")]
    assert decoder.last_event_id == "3"
    # An id containing NUL is ignored; an empty id resets it.
    decoder.feed(b"id: a\0b\ndata: x\n\n")
    assert decoder.last_event_id == "3"
    decoder.feed(b"id\ndata: y\n\n")
    assert decoder.last_event_id == ""


def test_retry_takes_only_ascii_digits() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"retry: 2500\n\n")
    assert decoder.retry == 2500
    decoder.feed(b"retry: 3s\n\nretry: \xd9\xa3\n\n")  # "3s" and ARABIC-INDIC DIGIT THREE
    assert decoder.retry == 2500


def test_field_rules_colonless_lines_one_space_and_unknown_fields() -> None:
    decoder = SSEDecoder()
    raw = b"data\ndata:  two spaces\nfoo: bar\ndata:no space\n\n"
    assert decoder.feed(raw) == [("", "\n two spaces\nno space")]
    assert decoder.feed(b"event: only-a-type\n\n") == []  # no data: not dispatched


@given(st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=40))
def test_decoding_is_independent_of_chunking(cuts: list[int]) -> None:
    raw = "\ufeffevent: a\r\ndata: 北京\r\n\r\nid: 7\ndata: ☀️ sunny\n\n"
    encoded = (raw + ": ping\n\nevent: b\rdata: x\r\r").encode()
    decoder, events, position, index = SSEDecoder(), [], 0, 0
    while position < len(encoded):
        size = cuts[index % len(cuts)]
        events.extend(decoder.feed(encoded[position : position + size]))
        position += size
        index += 1
    assert events == [("a", "北京"), ("", "☀️ sunny"), ("b", "x")]
    assert decoder.last_event_id == "7"


def test_a_long_event_costs_memory_in_proportion_to_its_length() -> None:
    """Each chunk of an unfinished event is kept, not added to one growing string: before, every
    chunk copied the whole event so far (a 1 MiB event in 1 KiB chunks: 512 MiB copied)."""
    chunk, chunks = b"x" * 1024, 1024
    decoder = SSEDecoder()
    assert decoder.feed(b"event: big\ndata: ") == []
    tracemalloc.start()
    try:
        allocated = 0  # the most each feed had allocated at once, summed over the feeds
        for _ in range(chunks):
            before = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            assert decoder.feed(chunk) == []
            allocated += tracemalloc.get_traced_memory()[1] - before
        assert decoder.pending == len("event: big\ndata: ") + chunks * len(chunk)
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        events = decoder.feed(b"\n\n")
        ending = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    size = chunks * len(chunk)
    assert events == [("big", "x" * size)] and decoder.pending == 0
    assert allocated < 2 * size  # each chunk once, with its string header and list slot
    assert ending < 4 * size  # the joined event, its blocks and the data: a few copies, once
