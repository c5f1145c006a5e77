"""How long `toolweave._sse.SSEDecoder` takes on one long event and on many small ones.

A long event (an MCP answer of several MiB over SSE, a provider's large final event) arrives in
CHUNK-byte reads. Decoding it should cost time in proportion to its length; re-copying the text
received so far on every read made it quadratic. Many small events (LLM token deltas) are the
hot path and must stay as fast.

Printed: per event size, the CPU seconds to decode it and MB/s; then small events per second.
Compare two versions by running this file with each one's `src` first on PYTHONPATH, e.g.
`PYTHONPATH=/path/to/other/checkout/src .venv/bin/python benchmarks/sse_decoder.py`.

Run: .venv/bin/python benchmarks/sse_decoder.py [--max-mib 16]
"""

from __future__ import annotations

import argparse
import os
import time

from toolweave._sse import SSEDecoder

CHUNK = 4096
SMALL_EVENTS = 200_000


def long_event(size: int) -> float:
    """CPU seconds to decode one `size`-byte data event fed in CHUNK-byte reads."""
    body = b"data: " + b"x" * size + b"\n\n"
    decoder = SSEDecoder()
    start = time.process_time()
    for offset in range(0, len(body), CHUNK):
        events = decoder.feed(body[offset : offset + CHUNK])
    elapsed = time.process_time() - start
    assert len(events) == 1 and len(events[0][1]) == size
    return elapsed


def small_events() -> float:
    """Small events decoded per CPU second, several per read as a token stream brings them."""
    one = 'data: {"choices":[{"delta":{"content":" 北京"}}]}\n\n'.encode()
    stream = one * SMALL_EVENTS
    decoder = SSEDecoder()
    start = time.process_time()
    count = 0
    for offset in range(0, len(stream), CHUNK):
        count += len(decoder.feed(stream[offset : offset + CHUNK]))
    assert count == SMALL_EVENTS
    return count / (time.process_time() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-mib", type=int, default=16, help="largest event, in MiB")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; reads of {CHUNK} bytes")
    size = 256 * 1024
    while size <= args.max_mib * 1024 * 1024:
        seconds = long_event(size)
        print(f"one {size / 2**20:6.2f} MiB event: {seconds:8.3f} s CPU, "
              f"{size / 2**20 / max(seconds, 1e-9):8.0f} MiB/s")  # fmt: skip
        size *= 4
    print(f"small events: {small_events():,.0f} events/s CPU")


if __name__ == "__main__":
    main()
