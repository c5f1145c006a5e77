"""`subscriptions/listen` (MCP 2026-07-28): list changes reach stateless clients.

Real peers only: our `MCPClient` and the official SDK client against `listen_server.py` over stdio
and Streamable HTTP, the raw stdio wire for exact message shapes, and the in-memory client for
the era rules (a 2025 session gets broadcasts, a listen stream gets stamped notifications).
Every wait is on an event or a message, never on a timer.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.subscriptions import PromptsListChanged, ResourceUpdated, ToolsListChanged

from tests.mcp.server.inprocess import serve_in_process
from toolweave.mcp import MCPClient, MCPServer
from toolweave.mcp.server.testing import connect
from toolweave.mcp.shared.errors import JSONRPCError

SCRIPT = Path(__file__).with_name("listen_server.py")
SUB_ID = "io.modelcontextprotocol/subscriptionId"
ACK = "notifications/subscriptions/acknowledged"
TOOLS_CHANGED = "notifications/tools/list_changed"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Notifications:
    """An `on_notification` callback that lets a test await a given notification."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self._arrived = asyncio.Event()

    def __call__(self, method: str, params: dict[str, Any]) -> None:
        self.seen.append((method, params))
        self._arrived.set()
        self._arrived = asyncio.Event()

    async def wait(self, method: str, count: int = 1) -> dict[str, Any]:
        while True:
            arrived = self._arrived
            found = [p for m, p in self.seen if m == method]
            if len(found) >= count:
                return found[count - 1]
            await arrived.wait()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def http_url() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    try:
        for line in proc.stderr:
            if "Uvicorn running on" in line:
                break
        else:
            raise RuntimeError(f"listen_server.py exited before listening ({proc.wait()})")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def check_tool_list_follows(client: MCPClient, seen: Notifications) -> None:
    ack = await seen.wait(ACK)
    assert client.protocol_version == "2026-07-28"
    assert ack["notifications"] == {
        "promptsListChanged": True,
        "resourcesListChanged": True,
        "toolsListChanged": True,
    }
    subscription = ack["_meta"][SUB_ID]
    before = [t.name for t in await client.list_tools()]
    version = client.tools_version
    grown = await client.call_tool("grow")
    changed = await seen.wait(TOOLS_CHANGED)
    after = [t.name for t in await client.list_tools()]
    extra = await client.call_tool("extra")
    await client.call_tool("reshape")
    prompts = await seen.wait("notifications/prompts/list_changed")
    resources = await seen.wait("notifications/resources/list_changed")
    assert before == ["grow", "reshape", "touch"] and grown.content[0].text == "grown"  # type: ignore[union-attr]
    assert changed == {"_meta": {SUB_ID: subscription}}
    assert client.tools_version > version
    assert after == ["extra", "grow", "reshape", "touch"]
    assert extra.content[0].text == "extra!"  # type: ignore[union-attr]
    assert prompts == resources == {"_meta": {SUB_ID: subscription}}


async def test_our_client_over_stdio_sees_new_tools() -> None:
    seen = Notifications()
    async with MCPClient.stdio(sys.executable, [str(SCRIPT)], on_notification=seen) as client:
        await check_tool_list_follows(client, seen)


async def test_our_client_over_http_sees_new_tools(http_url: str) -> None:
    seen = Notifications()
    async with MCPClient.http(http_url, on_notification=seen) as client:
        await check_tool_list_follows(client, seen)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_official_client_listen(transport: str, request: pytest.FixtureRequest) -> None:
    target: Any = (
        StdioServerParameters(command=sys.executable, args=[str(SCRIPT)])
        if transport == "stdio"
        else request.getfixturevalue("http_url")
    )
    async with (
        Client(target) as client,  # the default mode negotiates 2026-07-28
        client.listen(
            tools_list_changed=True, prompts_list_changed=True, resource_subscriptions=["docs://x"]
        ) as sub,
    ):
        await client.call_tool("grow", {})
        grown = await sub.__anext__()
        tools = [t.name for t in (await client.list_tools()).tools]
        await client.call_tool("touch", {"uri": "docs://elsewhere"})  # not subscribed
        await client.call_tool("reshape", {})  # resources/list_changed was not asked for
        await client.call_tool("touch", {"uri": "docs://x"})
        reshaped = await sub.__anext__()
        touched = await sub.__anext__()
    assert sub.honored.tools_list_changed is True and sub.honored.prompts_list_changed is True
    assert sub.honored.resources_list_changed is None
    assert sub.honored.resource_subscriptions == ["docs://x"]
    assert grown == ToolsListChanged() and "extra" in tools
    assert reshaped == PromptsListChanged() and touched == ResourceUpdated(uri="docs://x")


def listen_line(request_id: Any, notifications: dict[str, Any]) -> bytes:
    params = {"_meta": MODERN_META, "notifications": notifications}
    message = {"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen"}
    return json.dumps({**message, "params": params}).encode() + b"\n"


def call_line(request_id: int, name: str) -> bytes:
    params = {"name": name, "arguments": {}, "_meta": MODERN_META}
    return (
        json.dumps(
            {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
        ).encode()
        + b"\n"
    )


async def test_stdio_wire_acknowledges_stamps_cancels_and_ends_gracefully() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(SCRIPT), stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    async def until(request_id: Any) -> list[dict[str, Any]]:
        """Every message up to and including the response to `request_id`."""
        got: list[dict[str, Any]] = []
        while not (got and got[-1].get("id") == request_id and "method" not in got[-1]):
            got.append(json.loads(await stdout.readline()))
        return got

    stdin.write(call_line(1, "grow"))  # nobody listens yet: a modern client gets no broadcast
    unsolicited = await until(1)
    stdin.write(listen_line("listen-1", {"toolsListChanged": True, "bogus": True}))
    ack = json.loads(await stdout.readline())
    stdin.write(listen_line(7, {"resourceSubscriptions": ["docs://readme"]}))
    ack7 = json.loads(await stdout.readline())
    stdin.write(call_line(2, "grow"))
    second = await until(2)
    if not any(m.get("method") == TOOLS_CHANGED for m in second):
        second.append(json.loads(await stdout.readline()))
    cancel = {"requestId": "listen-1", "reason": "done"}
    stdin.write(
        json.dumps(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel}
        ).encode()
        + b"\n"
    )
    stdin.write(call_line(3, "grow"))
    stdin.close()  # EOF: the server ends listen 7 with its graceful result, then exits
    rest = [json.loads(line) for line in (await stdout.read()).splitlines()]
    assert await proc.wait() == 0
    assert [m.get("method") for m in unsolicited] == [None]
    assert ack == {
        "jsonrpc": "2.0",
        "method": ACK,
        "params": {"_meta": {SUB_ID: "listen-1"}, "notifications": {"toolsListChanged": True}},
    }
    assert ack7["params"] == {
        "_meta": {SUB_ID: 7},
        "notifications": {"resourceSubscriptions": ["docs://readme"]},
    }
    changes = [m for m in second if m.get("method") == TOOLS_CHANGED]
    assert changes == [
        {"jsonrpc": "2.0", "method": TOOLS_CHANGED, "params": {"_meta": {SUB_ID: "listen-1"}}}
    ]
    assert [m.get("id") for m in rest] == [3, 7]  # nothing more for the cancelled listen-1
    assert rest[1]["result"]["resultType"] == "complete"
    assert rest[1]["result"]["_meta"][SUB_ID] == 7


async def test_eras_and_errors_in_memory() -> None:
    server = MCPServer("eras")

    @server.tool
    def noop() -> str:
        return "ok"

    async with connect(server) as client:  # a 2025-11-25 session (it sent initialize)
        with pytest.raises(JSONRPCError) as legacy:
            await client.request("subscriptions/listen", {"notifications": {}})
        with pytest.raises(JSONRPCError) as malformed:
            await client.request(
                "subscriptions/listen",
                {"_meta": MODERN_META, "notifications": {"toolsListChanged": "yes"}},
            )
        listening = asyncio.ensure_future(
            client.request(
                "subscriptions/listen",
                {"_meta": MODERN_META, "notifications": {"toolsListChanged": True}},
            )
        )
        cancelled = asyncio.ensure_future(
            client.request(
                "subscriptions/listen",
                {"_meta": MODERN_META, "notifications": {"promptsListChanged": True}},
            )
        )
        await client.wait_for_notification(ACK, count=2)
        cancelled.cancel()  # sends notifications/cancelled: the server drops that stream
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        await client.request("tools/list", {})  # runs after the cancelled handler unwound
        open_after_cancel = len(server.changes.open)
        await server.notify_tools_changed()
        session_copy = await client.wait_for_notification(TOOLS_CHANGED)
        stream_copy = await client.wait_for_notification(TOOLS_CHANGED, count=2)
        server.changes.end()
        ended = await listening
    acks = [p for m, p in client.notifications if m == ACK]
    assert legacy.value.code == -32601 and "2026-07-28" in legacy.value.message
    assert malformed.value.code == -32602 and "toolsListChanged" in malformed.value.message
    # The server has no prompts: promptsListChanged is left out of the acknowledgment.
    assert {json.dumps(a["notifications"]) for a in acks} == {"{}", '{"toolsListChanged": true}'}
    assert open_after_cancel == 1
    assert session_copy == {}  # the 2025 session's broadcast carries no subscription id
    assert set(stream_copy) == {"_meta"} and stream_copy["_meta"][SUB_ID] is not None
    assert ended["resultType"] == "complete"
    assert ended["_meta"][SUB_ID] == stream_copy["_meta"][SUB_ID]
    assert ended["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "eras"
    assert server.changes.open == []


async def test_http_listen_needs_sse_and_ends_gracefully() -> None:
    server = MCPServer("graceful")

    @server.tool
    def noop() -> str:
        return "ok"

    async with serve_in_process(server) as url:
        body = {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "subscriptions/listen",
            "params": {"_meta": MODERN_META, "notifications": {"toolsListChanged": True}},
        }
        headers = {
            "Accept": "application/json",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "subscriptions/listen",
        }
        async with httpx.AsyncClient() as http:
            refused = await http.post(url, json=body, headers=headers)
        async with Client(url) as client, client.listen(tools_list_changed=True) as sub:
            await server.notify_tools_changed()
            changed = await sub.__anext__()
            server.changes.end()  # what shutdown does: the stream answers and closes
            rest = [event async for event in sub]  # ends cleanly: no SubscriptionLost
    assert refused.status_code == 406 and refused.json()["id"] == 5
    assert "text/event-stream" in refused.json()["error"]["message"]
    assert changed == ToolsListChanged() and rest == []


async def test_quiet_http_stream_gets_keepalive_comments(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolweave.mcp.server import _listen

    monkeypatch.setattr(_listen, "KEEPALIVE_SECONDS", 0.01)
    server = MCPServer("quiet")
    body = {
        "jsonrpc": "2.0",
        "id": "q",
        "method": "subscriptions/listen",
        "params": {"_meta": MODERN_META, "notifications": {"toolsListChanged": True}},
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "subscriptions/listen",
    }
    lines: list[str] = []
    async with (
        serve_in_process(server) as url,
        httpx.AsyncClient() as http,
        http.stream("POST", url, json=body, headers=headers) as response,
    ):
        async for line in response.aiter_lines():
            lines.append(line)
            if line.startswith(":"):
                break
    data = [json.loads(line[6:]) for line in lines if line.startswith("data: ") and line[6:]]
    assert response.headers["content-type"].startswith("text/event-stream")
    assert data == [
        {
            "jsonrpc": "2.0",
            "method": ACK,
            "params": {"_meta": {SUB_ID: "q"}, "notifications": {"toolsListChanged": True}},
        }
    ]
    assert lines[-1] == ":"


async def test_gateway_forwards_downstream_changes_to_2026_http_clients() -> None:
    from toolweave.host import ToolHost, parse_config

    config = {
        "serve": {"providers": [], "rules": {"allow": ["dyn__*"]}},  # it writes
        "mcpServers": {"dyn": {"command": sys.executable, "args": [str(SCRIPT)]}},
    }
    host = ToolHost(parse_config(config))
    seen = Notifications()
    try:
        async with (
            serve_in_process(host.server) as url,
            MCPClient.http(url, on_notification=seen) as client,
        ):
            await seen.wait(ACK)
            before = [t.name for t in await client.list_tools()]
            await client.call_tool("dyn__grow")  # the downstream server grows over stdio
            changed = await seen.wait(TOOLS_CHANGED)
            after = [t.name for t in await client.list_tools()]
            extra = await client.call_tool("dyn__extra")
            version = client.protocol_version
    finally:
        await host.close()
    assert version == "2026-07-28"
    assert "dyn__extra" not in before and "dyn__extra" in after
    assert SUB_ID in changed["_meta"]
    assert extra.content[0].text == "extra!"  # type: ignore[union-attr]
