"""The SSE event store on Postgres: a stream started on one server app resumes on another app
sharing the database (two uvicorn servers on loopback, one real Postgres), every event once."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
from mcp.client import Client
from mcp.shared.subscriptions import ToolsListChanged

from tests.mcp.server.inprocess import serve_in_process
from tests.support import postgres_schema_dsn
from toolweave.mcp import Context, MCPServer
from toolweave.mcp.server.postgres_events import PostgresChangeRelay, PostgresEventStore

VERSION = "2025-11-25"
ACCEPT = {"Accept": "application/json, text/event-stream"}


def counting_server(release: asyncio.Event) -> MCPServer:
    server = MCPServer("replica")

    @server.tool()
    async def count(ctx: Context) -> str:
        """Report two steps, wait, report two more."""
        for step in (1, 2):
            await ctx.report_progress(step, 4, f"第{step}步")
        await release.wait()
        for step in (3, 4):
            await ctx.report_progress(step, 4, f"第{step}步")
        return "counted to 4"

    return server


async def events(response: httpx.Response) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """(event id, message) of each SSE event with data; the priming event has none."""
    event_id = ""
    async for line in response.aiter_lines():
        if line.startswith("id: "):
            event_id = line[4:]
        elif line.startswith("data: ") and line[6:]:
            yield event_id, json.loads(line[6:])


async def open_session(http: httpx.AsyncClient, url: str) -> dict[str, str]:
    info = {"name": "fleet-test", "version": "1"}
    params = {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": info}
    created = await http.post(
        url,
        headers=ACCEPT,
        json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params},
    )
    headers = {
        **ACCEPT,
        "Mcp-Session-Id": created.headers["mcp-session-id"],
        "MCP-Protocol-Version": VERSION,
    }
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(url, headers=headers, json=note)).status_code == 202
    return headers


async def test_a_stream_started_on_one_replica_resumes_on_another_exactly_once(
    postgres_dsn: str,
) -> None:
    dsn = postgres_schema_dsn(postgres_dsn)
    release = asyncio.Event()
    store_a, store_b = PostgresEventStore(dsn), PostgresEventStore(dsn)
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "count", "arguments": {}, "_meta": {"progressToken": "p"}},
    }
    seen: list[tuple[str, dict[str, Any]]] = []
    async with (
        serve_in_process(counting_server(release), event_store=store_a) as url_a,
        serve_in_process(counting_server(release), event_store=store_b) as url_b,
        httpx.AsyncClient(timeout=30) as http,
    ):
        headers = await open_session(http, url_a)
        async with http.stream("POST", url_a, headers=headers, json=call) as first:
            async for event in events(first):
                seen.append(event)
                if len(seen) == 2:
                    break  # the connection drops after two progress events
        resume = {**headers, "Accept": "text/event-stream", "Last-Event-ID": seen[-1][0]}
        stranger = {**resume, "Mcp-Session-Id": "someone-else"}
        refused = await http.get(url_b, headers=stranger)

        async def resumed_on_b() -> None:
            async with http.stream("GET", url_b, headers=resume) as rest:
                assert rest.status_code == 200
                async for event in events(rest):
                    seen.append(event)

        reader = asyncio.ensure_future(resumed_on_b())
        release.set()
        await reader
    await store_a.close()
    await store_b.close()
    ids = [event_id for event_id, _ in seen]
    stream_id = ids[0].rpartition(".")[0]
    assert ids == [f"{stream_id}.{seq}" for seq in range(1, 6)]  # every event, once, in order
    progress = [m["params"]["progress"] for _, m in seen if m.get("method")]
    assert progress == [1, 2, 3, 4]
    assert seen[-1][1]["result"]["content"][0]["text"] == "counted to 4"
    assert refused.status_code == 404  # another session cannot read the stream


async def test_retention_keeps_the_last_events_and_forget_drops_a_stream(
    postgres_dsn: str,
) -> None:
    store = PostgresEventStore(postgres_schema_dsn(postgres_dsn), max_events=2, follow_idle=0.05)
    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "日志"}}
    store.bind("s", "session-1")
    ids = [await store.store("s", note) for _ in range(3)]
    unbound = await store.store("stateless", note)  # no session can resume it: not written
    kept = await store.replay_after("s.0")
    followed = await store.follow("s.0", "session-1")
    assert followed is not None
    # the producer never finishes this stream: the follower ends after follow_idle, quietly
    after_idle = [event_id async for event_id, _ in followed]
    store.forget("s")
    await store.close()
    gone = await reopened_replay(store.dsn, "s.0")
    assert kept is not None and [event_id for event_id, _ in kept[1]] == ids[1:]
    assert after_idle == ids[1:]
    assert unbound == "stateless.1" and await reopened_replay(store.dsn, unbound) == []
    assert gone == []
    assert await store.replay_after("not-an-id") is None


async def reopened_replay(dsn: str, event_id: str) -> list[tuple[str, bytes]]:
    store = PostgresEventStore(dsn)
    replay = await store.replay_after(event_id.rpartition(".")[0] + ".0")
    await store.close()
    assert replay is not None
    return replay[1]


async def test_a_list_change_on_one_replica_reaches_listen_streams_and_sessions_on_the_others(
    postgres_dsn: str,
) -> None:
    replicas = [MCPServer(f"replica-{n}") for n in range(3)]
    relays = [PostgresChangeRelay(postgres_dsn) for _ in replicas]
    for server, relay in zip(replicas, relays, strict=True):
        await relay.start(server)
    server_a, server_b, server_c = replicas
    async with (
        serve_in_process(server_b) as url_b,
        serve_in_process(server_c) as url_c,
        Client(url_b) as on_b,
        Client(url_c) as on_c,
        on_b.listen(tools_list_changed=True) as heard_on_b,
        on_c.listen(tools_list_changed=True) as heard_on_c,
        httpx.AsyncClient(timeout=30) as http,
    ):
        legacy = {**await open_session(http, url_c), "Accept": "text/event-stream"}
        async with http.stream("GET", url_c, headers=legacy) as session_stream:
            await server_a.notify_tools_changed()
            changes = [await heard_on_b.__anext__(), await heard_on_c.__anext__()]
            _, legacy_note = await anext(events(session_stream))
        for server in replicas:
            server.changes.end()
    for relay in relays:
        await relay.close()
    assert changes == [ToolsListChanged(), ToolsListChanged()]
    assert legacy_note == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
