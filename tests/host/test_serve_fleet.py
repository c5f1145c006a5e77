"""`toolweave serve` replicas on one `[serve].store_dsn`: a 2025-era call's SSE stream begun on
replica A is resumed with `Last-Event-ID` on replica B (two real `serve_http` hosts on loopback,
one real Postgres), and the client receives every event exactly once; a list change made on one
replica reaches the `subscriptions/listen` streams of another."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from mcp.client import Client
from mcp.shared.subscriptions import ToolsListChanged

from tests.host.test_serve_tasks import EVENTS, _provider
from tests.mcp.server.test_postgres_events import events, open_session
from tests.support import postgres_schema_dsn
from toolweave.host import ToolHost, parse_config

__all__ = ["_provider"]


@asynccontextmanager
async def replica(
    tmp_path: Path, dsn: str, name: str, **options: Any
) -> AsyncIterator[tuple[ToolHost, str]]:
    """Replica `name` of a fleet on `dsn` (serving the `slow` provider unless `options` say)."""
    serve = {
        "transport": "http",
        "port": 0,
        "providers": ["slow"],
        "data_dir": str(tmp_path / name),
        "store_dsn": dsn,
        "instance": name,
        "console": False,
        **options,
    }
    host = ToolHost(parse_config({"serve": serve}, source=tmp_path / "toolweave.toml"))
    ready = asyncio.Event()
    task = asyncio.ensure_future(host.serve_http(on_ready=lambda _port: ready.set()))
    await ready.wait()
    try:
        yield host, f"http://127.0.0.1:{host.port}/mcp"
    finally:
        host._http.should_exit = True  # a graceful stop, as on SIGTERM
        await task


async def test_a_served_stream_resumes_on_another_replica_exactly_once(
    tmp_path: Path, postgres_dsn: str
) -> None:
    dsn = postgres_schema_dsn(postgres_dsn)
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "crunch", "arguments": {"rows": 9}, "_meta": {"progressToken": 1}},
    }
    seen: list[tuple[str, dict[str, Any]]] = []
    async with (
        replica(tmp_path, dsn, "a") as (_, url_a),
        replica(tmp_path, dsn, "b") as (_, url_b),
        httpx.AsyncClient(timeout=30) as http,
    ):
        headers = await open_session(http, url_a)
        async with http.stream("POST", url_a, headers=headers, json=call) as first:
            async for event in events(first):
                seen.append(event)
                break  # the connection drops after the first progress event
        resume = {**headers, "Accept": "text/event-stream", "Last-Event-ID": seen[-1][0]}
        async with http.stream("GET", url_b, headers=resume) as rest:
            EVENTS["release"].set()
            async for event in events(rest):
                seen.append(event)
    stream_id = seen[0][0].rpartition(".")[0]
    assert [event_id for event_id, _ in seen] == [f"{stream_id}.1", f"{stream_id}.2"]
    assert seen[0][1]["params"]["message"] == "starting"
    assert seen[1][1]["result"]["content"][0]["text"] == "crunched 9 rows"


async def test_a_list_change_on_one_replica_reaches_a_listener_on_another(
    tmp_path: Path, postgres_dsn: str
) -> None:
    dsn = postgres_schema_dsn(postgres_dsn)
    async with (
        replica(tmp_path, dsn, "a") as (host_a, _),
        replica(tmp_path, dsn, "b") as (host_b, url_b),
        Client(url_b) as on_b,
        on_b.listen(tools_list_changed=True) as heard_on_b,
    ):
        await host_a.server.notify_tools_changed()
        changed = await heard_on_b.__anext__()
        host_b.server.changes.end()
    assert changed == ToolsListChanged()
