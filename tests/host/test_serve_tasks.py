"""`toolweave serve` with `[serve].task_after`: a served call still running after that many
seconds becomes an MCP task (SEP-2663) for a client that supports tasks, so no request timeout
on the client's side cuts it; cancelling the task stops the tool."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.server.modern import Modern, modern_client
from tests.support import postgres_schema_dsn
from toolweave.host import ToolHost, parse_config
from toolweave.host.providers import base as host_providers
from toolweave.tools import ToolContext, tool

TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
EVENTS: dict[str, asyncio.Event] = {}  # fresh per test: an Event binds to one event loop


@tool(read_only=True)
async def crunch(rows: int, ctx: ToolContext) -> str:
    """Crunch rows for a long while."""
    await ctx.report_progress(0, rows, "starting")
    try:
        await EVENTS["release"].wait()
    finally:
        EVENTS["stopped"].set()
    return f"crunched {rows} rows"


class SlowProvider:
    name = "slow"

    def __init__(self, config: Any) -> None:
        self.config = config

    async def tools(self) -> list[Any]:
        return [crunch]

    async def close(self) -> None:
        return None


@pytest.fixture(autouse=True)
def _provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(host_providers.PROVIDERS, "slow", f"{__name__}:SlowProvider")
    EVENTS.update(release=asyncio.Event(), stopped=asyncio.Event())


def make_host(tmp_path: Path) -> ToolHost:
    serve = {"providers": ["slow"], "data_dir": str(tmp_path), "task_after": 0.05}
    return ToolHost(parse_config({"serve": serve}, source=tmp_path / "toolweave.toml"))


async def test_a_long_served_call_becomes_a_task_and_completes(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    async with modern_client(host.server) as http:
        modern = Modern(http, TASKS)
        created = await modern.result("tools/call", {"name": "crunch", "arguments": {"rows": 7}})
        EVENTS["release"].set()
        await host.server.tasks.wait(created["taskId"])
        done = await modern.result("tasks/get", {"taskId": created["taskId"]})
        plain = await Modern(http, {}).result(
            "tools/call", {"name": "crunch", "arguments": {"rows": 1}}
        )
    await host.close()
    assert created["resultType"] == "task" and created["status"] == "working"
    assert done["status"] == "completed"
    assert done["result"]["content"][0]["text"] == "crunched 7 rows"
    assert plain["content"][0]["text"] == "crunched 1 rows"  # no tasks declared: inline
    assert (tmp_path / "tasks.db").exists()


async def test_cancelling_a_served_task_stops_the_tool(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    async with modern_client(host.server) as http:
        modern = Modern(http, TASKS)
        created = await modern.result("tools/call", {"name": "crunch", "arguments": {"rows": 3}})
        await modern.result("tasks/cancel", {"taskId": created["taskId"]})
        await EVENTS["stopped"].wait()
        seen = await modern.result("tasks/get", {"taskId": created["taskId"]})
    await host.close()
    assert seen["status"] == "cancelled"


async def test_replicas_on_one_store_dsn_share_their_tasks(
    tmp_path: Path, postgres_dsn: str
) -> None:
    dsn = postgres_schema_dsn(postgres_dsn)
    replicas = []
    for name in ("a", "b"):
        serve = {
            "providers": ["slow"],
            "data_dir": str(tmp_path / name),
            "task_after": 0.05,
            "store_dsn": dsn,
            "instance": name,
        }
        replicas.append(ToolHost(parse_config({"serve": serve}, source=tmp_path / "t.toml")))
    host_a, host_b = replicas
    async with modern_client(host_a.server) as on_a, modern_client(host_b.server) as on_b:
        created = await Modern(on_a, TASKS).result(
            "tools/call", {"name": "crunch", "arguments": {"rows": 5}}
        )
        working = await Modern(on_b, TASKS).result("tasks/get", {"taskId": created["taskId"]})
        EVENTS["release"].set()
        await host_a.server.tasks.wait(created["taskId"])
        done = await Modern(on_b, TASKS).result("tasks/get", {"taskId": created["taskId"]})
    for host in replicas:
        await host.close()
    assert working["status"] == "working"
    assert done["status"] == "completed"
    assert done["result"]["content"][0]["text"] == "crunched 5 rows"
    assert not (tmp_path / "a" / "tasks.db").exists()
