"""Streamable HTTP edge cases at the ASGI level: guards, sessions, stateless requests, SSE."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Generator
from typing import Any

import httpx
import pytest

from tests.mcp.server.inprocess import serve_in_process
from toolweave.mcp import Context, MCPClient, MCPError, MCPServer

ACCEPT = {"Accept": "application/json, text/event-stream"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}},
}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def make_server() -> MCPServer:
    server = MCPServer("http-test")

    @server.tool
    def echo(text: str) -> str:
        return text

    @server.tool
    async def noisy(ctx: Context) -> str:
        await ctx.info("working")
        return "done"

    @server.tool
    async def polled(ctx: Context) -> str:
        await ctx.info("before")
        ctx.close_sse_stream()  # SEP-1699 polling: the rest waits for a resume
        await ctx.info("after")
        return "done"

    return server


def client(token: str | None = None, hosts: tuple[str, ...] | None = None) -> httpx.AsyncClient:
    app = make_server().asgi_app(auth_token=token, allowed_hosts=hosts)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1")


def sse_messages(body: str) -> list[dict[str, Any]]:
    return [
        json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: ") and line[6:]
    ]


async def test_session_lifecycle() -> None:
    async with client() as http:
        init = await http.post("/mcp", json=INIT, headers=ACCEPT)
        session = init.headers["mcp-session-id"]
        headers = {**ACCEPT, "Mcp-Session-Id": session}
        accepted = await http.post(
            "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
        )
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
        echoed = await http.post(
            "/mcp",
            json={**call, "params": {"name": "echo", "arguments": {"text": "x"}}},
            headers=headers,
        )
        streamed = await http.post(
            "/mcp", json={**call, "id": 3, "params": {"name": "noisy"}}, headers=headers
        )
        missing = await http.post("/mcp", json={**call, "id": 4}, headers=ACCEPT)
        deleted = await http.delete("/mcp", headers=headers)
        gone = await http.post("/mcp", json={**call, "id": 5}, headers=headers)
    assert init.status_code == 200 and init.json()["result"]["serverInfo"]["name"] == "http-test"
    assert accepted.status_code == 202
    assert echoed.headers["content-type"] == "application/json"
    assert echoed.json()["result"]["content"] == [{"type": "text", "text": "x"}]
    assert streamed.headers["content-type"].startswith("text/event-stream")
    assert streamed.text.startswith("id: ") and "retry: " in streamed.text
    messages = sse_messages(streamed.text)
    assert messages[0]["method"] == "notifications/message"
    assert messages[-1]["result"]["content"][0]["text"] == "done"
    assert missing.status_code == 400
    assert deleted.status_code == 200 and gone.status_code == 404


async def test_origin_host_and_token_guards() -> None:
    async with client(hosts=("localhost", "127.0.0.1")) as http:
        evil_origin = await http.post(
            "/mcp", json=INIT, headers={**ACCEPT, "Origin": "http://evil.example.com"}
        )
        evil_host = await http.post(
            "/mcp", json=INIT, headers={**ACCEPT, "Host": "evil.example.com"}
        )
        local = await http.post(
            "/mcp", json=INIT, headers={**ACCEPT, "Origin": "http://localhost:5173"}
        )
    async with client(token="s3cret") as http:
        anonymous = await http.post("/mcp", json=INIT, headers=ACCEPT)
        bearer = await http.post(
            "/mcp", json=INIT, headers={**ACCEPT, "Authorization": "Bearer s3cret"}
        )
    assert evil_origin.status_code == 403 and evil_host.status_code == 403
    assert local.status_code == 200
    assert anonymous.status_code == 401 and anonymous.headers["www-authenticate"] == "Bearer"
    assert bearer.status_code == 200


async def test_stateless_2026_requests() -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"}, "_meta": MODERN_META},
    }
    headers = {
        **ACCEPT,
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "echo",
    }
    async with client() as http:
        ok = await http.post("/mcp", json=body, headers=headers)
        encoded = await http.post(
            "/mcp", json=body, headers={**headers, "Mcp-Name": "=?base64?ZWNobw==?="}
        )
        mismatch = await http.post("/mcp", json=body, headers={**headers, "Mcp-Name": "other"})
        no_method = await http.post(
            "/mcp", json=body, headers={k: v for k, v in headers.items() if k != "Mcp-Method"}
        )
        future = {"io.modelcontextprotocol/protocolVersion": "2099-01-01"}
        unsupported = await http.post(
            "/mcp",
            json={**body, "params": {**body["params"], "_meta": {**MODERN_META, **future}}},
            headers={**headers, "MCP-Protocol-Version": "2099-01-01"},
        )
    result = ok.json()["result"]
    assert ok.status_code == 200 and "mcp-session-id" not in ok.headers
    assert result["resultType"] == "complete" and result["content"][0]["text"] == "hi"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "http-test"
    assert encoded.status_code == 200
    assert mismatch.status_code == 400 and mismatch.json()["error"]["code"] == -32020
    assert no_method.status_code == 400 and no_method.json()["error"]["code"] == -32020
    assert unsupported.status_code == 400
    assert unsupported.json()["error"]["data"]["supported"][0] == "2026-07-28"


def slow_server(started: asyncio.Event, stopped: asyncio.Event) -> MCPServer:
    server = MCPServer("slow")

    @server.tool
    async def wait_forever() -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()
        return "unreachable"

    return server


async def open_session(http: httpx.AsyncClient) -> dict[str, str]:
    init = await http.post("/mcp", json=INIT, headers=ACCEPT)
    return {**ACCEPT, "Mcp-Session-Id": init.headers["mcp-session-id"]}


CALL_SLOW = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "wait_forever"}}


async def test_cancelled_and_closed_requests_still_end_their_post() -> None:
    started, stopped = asyncio.Event(), asyncio.Event()
    app = slow_server(started, stopped).asgi_app()
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        headers = await open_session(http)
        call = asyncio.create_task(http.post("/mcp", json=CALL_SLOW, headers=headers))
        await started.wait()
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled"}
        await http.post("/mcp", json={**cancel, "params": {"requestId": 2}}, headers=headers)
        cancelled = await call  # before the fix this POST never got an answer
        assert stopped.is_set()
        started.clear()
        stopped.clear()
        again = asyncio.create_task(http.post("/mcp", json={**CALL_SLOW, "id": 3}, headers=headers))
        await started.wait()
        deleted = await http.delete("/mcp", headers=headers)
        closed = await again
    assert cancelled.status_code == 202 and cancelled.content == b""
    assert deleted.status_code == 200 and closed.status_code == 202 and stopped.is_set()


async def test_resume_replays_only_to_the_owning_session() -> None:
    async with client() as http:
        mine = await open_session(http)
        polled = await http.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "polled"}},
            headers=mine,
        )
        last_id = [line for line in polled.text.splitlines() if line.startswith("id: ")][-1][4:]
        theirs = await open_session(http)
        sse = {"Accept": "text/event-stream", "Last-Event-ID": last_id}
        stolen = await http.get("/mcp", headers={**sse, "Mcp-Session-Id": theirs["Mcp-Session-Id"]})
        resumed = await http.get("/mcp", headers={**sse, "Mcp-Session-Id": mine["Mcp-Session-Id"]})
        again = await http.get("/mcp", headers={**sse, "Mcp-Session-Id": mine["Mcp-Session-Id"]})
    assert [m["params"]["data"] for m in sse_messages(polled.text)] == ["before"]
    assert stolen.status_code == 404  # another session's stream is not replayed to it
    rest = sse_messages(resumed.text)
    assert (
        rest[0]["params"]["data"] == "after" and rest[1]["result"]["content"][0]["text"] == "done"
    )
    assert again.status_code == 404  # a fully delivered stream is forgotten, not kept


async def test_stateless_unknown_method_is_404_and_hangup_cancels() -> None:
    started, stopped = asyncio.Event(), asyncio.Event()
    app = slow_server(started, stopped).asgi_app()
    headers = {**ACCEPT, "MCP-Protocol-Version": "2026-07-28"}
    unknown = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "nope/nothing",
        "params": {"_meta": MODERN_META},
    }
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        missing = await http.post(
            "/mcp", json=unknown, headers={**headers, "Mcp-Method": "nope/nothing"}
        )
    assert missing.status_code == 404 and missing.json()["error"]["code"] == -32601

    body = {**CALL_SLOW, "params": {**CALL_SLOW["params"], "_meta": MODERN_META}}
    raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    raw += [(b"mcp-method", b"tools/call"), (b"mcp-name", b"wait_forever")]
    raw += [(b"content-type", b"application/json"), (b"host", b"127.0.0.1")]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "root_path": "",
        "query_string": b"",
        "headers": raw,
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    messages = [{"type": "http.request", "body": json.dumps(body).encode(), "more_body": False}]

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        await started.wait()  # the client hangs up while the tool runs
        return {"type": "http.disconnect"}

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    await stopped.wait()  # the handler was cancelled, not left running
    assert sent[0]["status"] == 202


async def test_malformed_posts_batches_and_methods_are_refused() -> None:
    async with client() as http:
        batch = await http.post("/mcp", json=[INIT], headers=ACCEPT)
        garbage = await http.post(
            "/mcp", content=b"{not json", headers={**ACCEPT, "Content-Type": "application/json"}
        )
        headers = await open_session(http)
        old_version = await http.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 9, "method": "ping"},
            headers={**headers, "MCP-Protocol-Version": "1999-01-01"},
        )
        response = await http.post(  # a client's answer to a server request: accepted, no body
            "/mcp", json={"jsonrpc": "2.0", "id": 77, "result": {}}, headers=headers
        )
        no_accept = await http.get("/mcp", headers={"Mcp-Session-Id": headers["Mcp-Session-Id"]})
        put = await http.put("/mcp", json=INIT, headers=ACCEPT)
    assert batch.status_code == 400 and batch.json()["error"]["code"] == -32600
    assert garbage.status_code == 400 and garbage.json()["error"]["code"] == -32700
    assert old_version.status_code == 400 and "1999-01-01" in old_version.text
    assert response.status_code == 202 and response.content == b""
    assert no_accept.status_code == 406
    assert put.status_code == 405


class _Bearer(httpx.Auth):
    """Any `httpx.Auth` works as the MCP client's `auth`; this one is a static bearer token."""

    def __init__(self, token: str) -> None:
        self.token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response]:
        request.headers["Authorization"] = f"Bearer {self.token}"
        yield request


async def test_the_client_takes_any_httpx_auth() -> None:
    server = make_server()
    async with serve_in_process(server, auth_token="s3cret") as url:
        async with MCPClient.http(url, auth=_Bearer("s3cret")) as mcp:
            assert "echo" in [tool.name for tool in await mcp.list_tools()]
        with pytest.raises(MCPError, match="refused authorization"):
            async with MCPClient.http(url, auth=_Bearer("wrong")) as mcp:
                await mcp.list_tools()
