"""Graceful drain on SIGTERM behind HAProxy: the replica's `GET /ready` turns 503, HAProxy takes
it out while it still serves (`[serve].drain_notice`), new calls go to the other replica, the
running call finishes and returns, and the process exits 0; a call still running at
`[serve].drain_timeout` is cut, and the replica exits anyway."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError

from tests.fleet.harness import Fleet, needs_haproxy
from tests.postgres_server import Cluster

pytestmark = needs_haproxy


async def test_sigterm_finishes_the_running_call_while_the_balancer_sends_new_ones_elsewhere(
    tmp_path: Path, fleet_cluster: Cluster
) -> None:
    serve = {"drain_notice": 3.0, "drain_timeout": 20.0}
    async with Fleet(tmp_path, fleet_cluster, replicas=2, serve=serve) as fleet:
        draining = fleet.replicas[0]
        async with fleet.starts() as started, Client(draining.url) as direct:
            await direct.list_tools()  # the SDK checks a result against the listed tools
            running = asyncio.ensure_future(
                direct.call_tool("count", {"call_id": "long", "seconds": 4.0})
            )
            assert await anext(started) == "long"
            exited = draining.terminate()
            await fleet.until("r0", "DOWN")  # its /ready said 503, while it still serves
            async with httpx.AsyncClient() as http:
                ready = await http.get(draining.ready_url)
            async with Client(fleet.url) as client:
                meanwhile = await asyncio.gather(
                    *(client.call_tool("count", {"call_id": f"n{i}"}) for i in range(10))
                )
            result = await running
        code = await exited
        runs = await fleet.runs()
    assert (ready.status_code, ready.json()) == (503, {"ready": False, "reason": "draining"})
    assert result.content[0].text == "long ran on r0" and not result.is_error
    assert {call.content[0].text for call in meanwhile} == {f"n{i} ran on r1" for i in range(10)}
    assert code == 0
    assert runs == {"long": 1, **{f"n{i}": 1 for i in range(10)}}


async def test_a_call_still_running_at_the_drain_timeout_is_cut_and_the_replica_exits(
    tmp_path: Path, fleet_cluster: Cluster
) -> None:
    serve = {"drain_notice": 0.2, "drain_timeout": 1.0}
    async with Fleet(tmp_path, fleet_cluster, replicas=1, serve=serve) as fleet:
        draining = fleet.replicas[0]
        async with fleet.starts() as started, Client(draining.url, mode="legacy") as direct:
            await direct.list_tools()
            running = asyncio.ensure_future(
                direct.call_tool("count", {"call_id": "endless", "seconds": 600.0})
            )
            assert await anext(started) == "endless"
            code = await draining.terminate()
            with pytest.raises(MCPError, match="error response"):  # its connection was cut
                await running
        runs = await fleet.runs()
    assert code == 0
    assert runs == {"endless": 1}
