"""Streamable HTTP edge cases at the ASGI level: guards, sessions, stateless requests, SSE."""

from __future__ import annotations

import json
from typing import Any

import httpx

from toolweave.mcp import Context, McpServer

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


def make_server() -> McpServer:
    server = McpServer("http-test")

    @server.tool
    def echo(text: str) -> str:
        return text

    @server.tool
    async def noisy(ctx: Context) -> str:
        await ctx.info("working")
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
