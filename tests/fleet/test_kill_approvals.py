"""A replica SIGKILLed while its call waits for a console approval, behind HAProxy: the approval
stays listed on the other replicas' consoles (with the instance whose call waits) until that
replica starts again and marks it abandoned; the call never runs, and the client's call fails
instead of hanging. A call waiting on one replica is answered on another's console and runs
once. The queue is on the fleet's Postgres (`[serve].store_dsn`)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult

from tests.fleet.harness import Fleet, Replica, needs_haproxy
from tests.postgres_server import Cluster

pytestmark = needs_haproxy
CONSOLE = {"console": True, "console_token": "fleet-console", "console_approvals": True}
ASK_COUNT = '[serve.rules]\nask = ["count"]\n'


def _console(replica: Replica) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{replica.port}/console/api",
        headers={"Authorization": "Bearer fleet-console"},
    )


async def _waiting(replica: Replica) -> list[dict[str, Any]]:
    """The approvals pending in the fleet, as `replica`'s console lists them (once there are)."""
    async with _console(replica) as console:
        while True:
            listed: list[dict[str, Any]] = (await console.get("/approvals")).json()
            if listed:
                return listed
            await asyncio.sleep(0.05)  # nothing to await across processes: ask again


async def _count(url: str, call_id: str) -> CallToolResult:
    async with Client(url) as client:  # asks nothing itself: the console decides
        return await client.call_tool("count", {"call_id": call_id})


async def test_an_approval_outlives_its_killed_replica_and_the_call_never_runs(
    tmp_path: Path, fleet_cluster: Cluster
) -> None:
    async with Fleet(tmp_path, fleet_cluster, replicas=2, serve=CONSOLE, tables=ASK_COUNT) as fleet:
        names = {replica.name: index for index, replica in enumerate(fleet.replicas)}
        lost = asyncio.ensure_future(_count(fleet.url, "lost"))
        (pending,) = await _waiting(fleet.replicas[0])
        waiting = names[pending["instance"]]
        other = fleet.replicas[1 - waiting]
        await fleet.replicas[waiting].kill()
        with pytest.raises((MCPError, ExceptionGroup)):
            await lost  # the call's connection died with its replica: an error, not a hang
        (still,) = await _waiting(other)  # listed on the other console all along
        await fleet.replicas[waiting].start()
        await fleet.until(fleet.replicas[waiting].name, "UP")
        async with _console(other) as console:
            listed = (await console.get("/approvals")).json()
            late = await console.post(f"/approvals/{pending['id']}", json={"decision": "approve"})
        answered = asyncio.ensure_future(_count(fleet.url, "kept"))
        (second,) = await _waiting(fleet.replicas[0])
        answerer = fleet.replicas[1 - names[second["instance"]]]  # not the one waiting
        async with _console(answerer) as console:
            given = await console.post(f"/approvals/{second['id']}", json={"decision": "approve"})
        result = await answered
        runs = await fleet.runs()
    assert still["id"] == pending["id"] and listed == []  # abandoned once its replica restarted
    assert late.status_code == 404  # nothing runs it now
    assert given.status_code == 200 and not result.is_error
    assert runs == {"kept": 1}  # the lost call never ran; the answered one ran once
