"""An SSE answer that drops mid-event is resumed from the last event the client received.

The server is a raw asyncio HTTP/1.1 server (real sockets, real httpx on the client side) so
the test controls exactly where the stream breaks: after a priming event `s1` and in the middle
of event `s2`, which carries a large tool result. The client must reconnect with
`Last-Event-ID: s1` (the id of `s2` never became the last event id, since `s2` was never
dispatched) and get the whole result from the replay, the server's `retry:` delay after the
stream ended (counted from the end, so work done since then does not make it late).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from toolweave.mcp import MCPClient
from toolweave.mcp.client import _http
from toolweave.mcp.shared.errors import MCPError

BIG = "北京 sunny, 晴朗 " * 20_000  # a large tool result, English and Chinese


def _result(request_id: Any) -> bytes:
    result = {"content": [{"type": "text", "text": BIG}], "isError": False}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()


class DroppingServer:
    """Legacy-era Streamable HTTP endpoint whose tools/call stream breaks inside an event."""

    def __init__(self) -> None:
        self.resumed_from: list[str | None] = []
        self.failing_gets = 0  # resume GETs answered 503 before one succeeds
        self.retry_ms = 0
        self.get_times: list[float] = []
        self.call_id: Any = None
        self.port = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        method = lines[0].split(" ")[0]
        headers = {
            k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:] if x)
        }
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        if method == "GET" and "last-event-id" not in headers:
            writer.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
        elif method == "GET" and len(self.get_times) < self.failing_gets:
            self.get_times.append(asyncio.get_running_loop().time())
            writer.write(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
        elif method == "GET":
            self.get_times.append(asyncio.get_running_loop().time())
            self.resumed_from.append(headers["last-event-id"])
            replay = b"id: s2\ndata: " + _result(self.call_id) + b"\n\n"
            stream = replay if headers["last-event-id"] == "s1" else b""
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + stream)
        elif method == "DELETE":
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        else:
            self._answer(json.loads(body), writer)
        await writer.drain()
        writer.close()

    def _answer(self, message: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        name = message.get("method")
        if "id" not in message:
            writer.write(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
            return
        if name == "tools/call":
            self.call_id = message["id"]
            half = _result(message["id"])
            stream = f"id: s1\nretry: {self.retry_ms}\ndata: \n\nid: s2\ndata: ".encode()
            stream += half[: len(half) // 2]
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + stream)
            return  # the connection closes mid-event
        result: dict[str, Any] = {}
        if name == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "dropping", "version": "1"},
            }
        elif name == "tools/list":
            result = {"tools": [{"name": "weather", "inputSchema": {"type": "object"}}]}
        answer = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s\r\n"
            + f"Content-Length: {len(answer)}\r\n\r\n".encode()
            + answer
        )


@pytest.fixture
async def dropping() -> AsyncIterator[DroppingServer]:
    server = DroppingServer()
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    server.port = listener.sockets[0].getsockname()[1]
    async with listener:
        yield server


async def test_a_stream_dropped_mid_event_resumes_after_the_last_received_event(
    dropping: DroppingServer,
) -> None:
    url = f"http://127.0.0.1:{dropping.port}/mcp"
    async with MCPClient.http(url, protocol_mode="legacy", timeout=30) as client:
        result = await client.call_tool("weather", {"city": "北京"})
    assert result.text == BIG
    assert dropping.resumed_from == ["s1"]


@pytest.mark.parametrize("failing", [0, 4])
async def test_resume_makes_five_attempts_with_the_servers_retry_delay(
    dropping: DroppingServer, failing: int
) -> None:
    dropping.failing_gets, dropping.retry_ms = failing, 40
    url = f"http://127.0.0.1:{dropping.port}/mcp"
    async with MCPClient.http(url, protocol_mode="legacy", timeout=30) as client:
        loop = asyncio.get_running_loop()
        started = loop.time()
        result = await client.call_tool("weather", {"city": "北京"})
    assert result.text == BIG and dropping.resumed_from == ["s1"]
    assert len(dropping.get_times) == failing + 1
    # Each attempt waited at least the server's `retry:` (a lower bound, not a speed check).
    gaps = [b - a for a, b in zip([started, *dropping.get_times], dropping.get_times, strict=False)]
    assert all(gap >= 0.035 for gap in gaps)


async def test_resume_gives_up_after_five_failed_attempts(dropping: DroppingServer) -> None:
    dropping.failing_gets = 10
    url = f"http://127.0.0.1:{dropping.port}/mcp"
    async with MCPClient.http(url, protocol_mode="legacy", timeout=30) as client:
        with pytest.raises(MCPError, match="could not be resumed in 5 attempts"):
            await client.call_tool("weather", {"city": "北京"})
    assert len(dropping.get_times) == 5


async def test_the_retry_delay_counts_from_the_streams_end_not_from_later_work(
    dropping: DroppingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Time the client spends after the stream ended (closing it; on a starved CPU, anything)
    is part of the server's `retry:` delay, not added to it: the loop's clock jumps 150 ms
    while the client closes the dropped response, so the reconnect waits only the 50 ms left
    of 200, and still never earlier than 200 ms after the stream ended."""
    dropping.retry_ms = 200
    loop = asyncio.get_running_loop()
    real_time, jump, offset = loop.time, 0.150, [0.0]
    before_jump: list[float] = []
    monkeypatch.setattr(loop, "time", lambda: real_time() + offset[0])
    real_aclose = httpx.Response.aclose

    async def slow_aclose(response: httpx.Response) -> None:
        by_client = sys._getframe(1).f_code.co_filename == _http.__file__  # not httpx's own
        stream = response.headers.get("content-type", "").startswith("text/event-stream")
        if by_client and stream and response.request.method == "POST" and not before_jump:
            before_jump.append(loop.time())
            offset[0] += jump  # the work after the stream ended took 150 ms
        await real_aclose(response)

    real_sleep, waits = asyncio.sleep, list[float]()

    async def recorded_sleep(delay: float, result: Any = None) -> Any:
        if sys._getframe(1).f_code.co_filename == _http.__file__:
            waits.append(delay)
        return await real_sleep(delay, result)

    monkeypatch.setattr(httpx.Response, "aclose", slow_aclose)
    monkeypatch.setattr(asyncio, "sleep", recorded_sleep)
    url = f"http://127.0.0.1:{dropping.port}/mcp"
    async with MCPClient.http(url, protocol_mode="legacy", timeout=30) as client:
        result = await client.call_tool("weather", {"city": "北京"})
    assert result.text == BIG and dropping.resumed_from == ["s1"]
    (wait,) = waits
    assert 0 <= wait <= 0.200 - jump  # what was left of the delay, not all of it again
    (ended,) = before_jump
    assert dropping.get_times[0] - ended >= 0.200 - 0.005  # the server's delay is kept
