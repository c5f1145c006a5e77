"""Issue 10, bounded resources: body limit, request ids, duplicate ids, JSON depth, the session
cap. Over real uvicorn on loopback and a real `toolweave serve --stdio` process."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client import Client

from tests.mcp.server.inprocess import serve_in_process
from toolweave.mcp import MCPClient, MCPServer
from toolweave.mcp.server import Context
from toolweave.mcp.shared.errors import PARSE_ERROR, MCPError, MCPTimeout

TOOLWEAVE = Path(sys.executable).with_name("toolweave")
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}},
}


def make_server(
    started: asyncio.Event | None = None, release: asyncio.Event | None = None
) -> MCPServer:
    server = MCPServer("limits")

    @server.tool(read_only=True)
    def echo(text: str) -> str:
        """Echo the text (中文也行)."""
        return text

    @server.tool(read_only=True)
    async def wait() -> str:
        """Wait until the test releases it."""
        assert started is not None and release is not None
        started.set()
        await release.wait()
        return "released"

    return server


async def open_session(http: httpx.AsyncClient, url: str) -> dict[str, str]:
    response = await http.post(url, json=INIT, headers=ACCEPT)
    headers = {**ACCEPT, "Mcp-Session-Id": response.headers["mcp-session-id"]}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await http.post(url, json=note, headers=headers)
    return headers


def call(request_id: Any, tool: str = "echo", **args: Any) -> dict[str, Any]:
    params = {"name": tool, "arguments": args}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def test_body_limit_is_enforced_while_reading() -> None:
    async with (
        serve_in_process(make_server(), max_body_bytes=64 * 1024) as url,
        httpx.AsyncClient(timeout=30) as http,
    ):
        headers = await open_session(http, url)
        big = json.dumps(call(2, text="长" * 100_000)).encode()
        declared = await http.post(url, content=big, headers=headers)

        async def chunked() -> AsyncIterator[bytes]:  # no Content-Length: a streamed body
            for start in range(0, len(big), 8192):
                yield big[start : start + 8192]

        streamed = await http.post(url, content=chunked(), headers=headers)
        small = await http.post(url, json=call(3, text="你好 hello"), headers=headers)
    for response in (declared, streamed):
        assert response.status_code == 413
        error = response.json()["error"]
        assert error["code"] == -32600 and "max_body_bytes" in error["message"]
    assert small.json()["result"]["content"][0]["text"] == "你好 hello"


@pytest.mark.parametrize("bad_id", [1.5, True, [1], {}, None])
async def test_ids_neither_int_nor_string_are_refused_at_once(bad_id: Any) -> None:
    server = make_server()
    async with serve_in_process(server) as url, httpx.AsyncClient(timeout=30) as http:
        headers = await open_session(http, url)
        refused = await http.post(url, json=call(bad_id), headers=headers)
        init = await http.post(url, json={**INIT, "id": bad_id}, headers=ACCEPT)
        sessions = len(server.sessions)
    for response in (refused, init):
        assert response.status_code == 400
        assert response.json()["error"]["code"] == -32600
    assert sessions == 1  # the malformed initialize opened nothing


async def test_a_duplicate_in_flight_id_is_refused_at_once() -> None:
    started, release = asyncio.Event(), asyncio.Event()
    async with (
        serve_in_process(make_server(started, release)) as url,
        httpx.AsyncClient(timeout=30) as http,
    ):
        headers = await open_session(http, url)
        first = asyncio.ensure_future(http.post(url, json=call(7, "wait"), headers=headers))
        await started.wait()
        twin = await http.post(url, json=call(7, "echo", text="twin"), headers=headers)
        release.set()
        answered = await first
    error = twin.json()["error"]
    assert error["code"] == -32600 and "already in flight" in error["message"]
    assert twin.json()["id"] is None
    assert answered.json()["result"]["content"][0]["text"] == "released"


def nested(depth: int) -> bytes:
    return (
        '{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":' + "[" * depth + "]" * depth + "}}"
    ).encode()


async def test_deep_json_is_a_parse_error_over_http_and_stdio() -> None:
    async with serve_in_process(make_server()) as url, httpx.AsyncClient(timeout=30) as http:
        headers = await open_session(http, url)
        deep = await http.post(url, content=nested(1000), headers=headers)
        fine = await http.post(url, content=nested(20), headers=headers)
    assert deep.status_code == 400 and deep.json()["error"]["code"] == PARSE_ERROR
    assert fine.json()["result"] == {}
    # `toolweave serve --stdio` answers -32700 and keeps serving (it used to exit).
    proc = await asyncio.create_subprocess_exec(
        str(TOOLWEAVE),
        "serve",
        "--stdio",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(nested(1000) + b"\n" + nested(20) + b"\n")
    await proc.stdin.drain()
    answers = [json.loads(await proc.stdout.readline()) for _ in range(2)]
    proc.stdin.close()
    await proc.wait()
    assert answers[0]["error"]["code"] == PARSE_ERROR and answers[1] == {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {},
    }


async def test_our_http_client_fails_a_too_deep_answer_at_once() -> None:
    server = MCPServer("deep")

    @server.tool(read_only=True)
    def deep() -> dict[str, Any]:
        value: Any = 1
        for _ in range(300):
            value = {"a": value}
        return value  # type: ignore[no-any-return]

    @server.tool(read_only=True)
    async def deep_streamed(ctx: Context) -> dict[str, Any]:
        await ctx.info("深 deep")  # a notification first: the answer becomes an SSE stream
        return deep()

    async with serve_in_process(server) as url, MCPClient.http(url, timeout=60) as client:
        for tool in ("deep", "deep_streamed"):  # a JSON body, then an SSE event
            with pytest.raises(MCPError, match="nested deeper than 128") as failed:
                await client.call_tool(tool, {})
            assert not isinstance(failed.value, MCPTimeout)
        assert await client.list_tools()  # and the client still works (2026 has no ping)


async def test_past_the_session_cap_a_new_session_gets_429_and_nobody_is_evicted() -> None:
    server = make_server()
    async with (
        serve_in_process(server, max_sessions=3) as url,
        httpx.AsyncClient(timeout=30) as http,
    ):
        sessions = [await open_session(http, url) for _ in range(3)]
        refused = await http.post(url, json=INIT, headers=ACCEPT)
        answers = [await http.post(url, json=call(3, text="hi"), headers=h) for h in sessions]
        await http.delete(url, headers=sessions[0])  # a client leaving frees its place
        newest = await open_session(http, url)
        after = await http.post(url, json=call(4, text="again"), headers=newest)
    assert refused.status_code == 429 and "max_sessions=3" in refused.json()["error"]["message"]
    assert int(refused.headers["retry-after"]) >= 1
    assert [a.status_code for a in answers] == [200, 200, 200]  # every live session kept
    assert after.status_code == 200 and len(server.sessions) <= 3


async def test_official_client_still_works_under_the_limits() -> None:
    async with serve_in_process(make_server(), max_sessions=2, max_body_bytes=4096) as url:
        for _ in range(4):  # more sessions than the cap, one after another
            async with Client(url, mode="legacy") as sdk:
                result = await sdk.call_tool("echo", {"text": "限制 limits"})
                assert result.content[0].text == "限制 limits"  # type: ignore[union-attr]
