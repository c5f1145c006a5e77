"""The fleet harness itself: three `toolweave serve` replicas behind HAProxy round-robin share
the calls, each serves `GET /ready`, and a replica SIGKILLed and restarted is back in rotation."""

from __future__ import annotations

from pathlib import Path

import httpx
from mcp.client import Client

from tests.fleet.harness import Fleet, needs_haproxy
from tests.postgres_server import Cluster

pytestmark = needs_haproxy


async def test_haproxy_spreads_calls_over_the_replicas_round_robin(
    tmp_path: Path, fleet_cluster: Cluster
) -> None:
    async with Fleet(tmp_path, fleet_cluster) as fleet:
        async with httpx.AsyncClient() as http:
            ready = [(await http.get(r.ready_url)).json() for r in fleet.replicas]
        async with Client(fleet.url) as client:
            texts = [
                (await client.call_tool("count", {"call_id": f"c{i}"})).content[0].text
                for i in range(6)
            ]
        runs = await fleet.runs()
    assert ready == [{"ready": True}] * 3
    assert {text.rpartition(" ")[2] for text in texts} == {"r0", "r1", "r2"}
    assert runs == {f"c{i}": 1 for i in range(6)}


async def test_a_killed_replica_leaves_rotation_and_rejoins_once_restarted(
    tmp_path: Path, fleet_cluster: Cluster
) -> None:
    async with Fleet(tmp_path, fleet_cluster, replicas=2) as fleet:
        await fleet.until("r1", "UP")
        code = await fleet.replicas[1].kill()
        await fleet.until("r1", "DOWN")
        async with Client(fleet.url) as client:
            alone = {
                (await client.call_tool("count", {"call_id": f"a{i}"})).content[0].text
                for i in range(4)
            }
        await fleet.replicas[1].start()
        await fleet.until("r1", "UP")
        async with Client(fleet.url) as client:
            both = {
                (await client.call_tool("count", {"call_id": f"b{i}"})).content[0].text[-2:]
                for i in range(6)
            }
        runs = await fleet.runs()
    assert code == -9
    assert alone == {f"a{i} ran on r0" for i in range(4)}
    assert both == {"r0", "r1"}
    assert runs == {**{f"a{i}": 1 for i in range(4)}, **{f"b{i}": 1 for i in range(6)}}
