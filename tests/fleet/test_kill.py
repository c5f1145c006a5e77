"""A replica SIGKILLed and restarted under load behind HAProxy: a 2026 (stateless) official-SDK
client completes 1,000 calls, none lost, and the tool's counter (a row per call id in Postgres)
shows that every call the client saw succeed ran exactly once. A call whose connection the kill
cut may have run before it was cut: the client cannot tell, retries it, and it may run twice
(1 of 4 cut calls in the run that wrote this); the test asserts that only those can.
Heavy: 1,000 calls through three replicas, about 15 s here (marked `heavy`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError

from tests.fleet.harness import Fleet, needs_haproxy
from tests.postgres_server import Cluster

pytestmark = [needs_haproxy, pytest.mark.heavy]

CALLS = 1000
WORKERS = 10


async def test_a_stateless_client_completes_1000_calls_while_a_replica_is_killed_and_restarted(
    tmp_path: Path, fleet_cluster: Cluster
) -> None:
    done = 0
    third = asyncio.Event()
    retried: list[str] = []
    texts: dict[str, str] = {}

    async def worker(ids: list[str]) -> None:
        nonlocal done
        while ids:
            try:  # a connection cut under a call ends the SDK client: connect again
                async with Client(fleet.url) as client:
                    await client.list_tools()
                    while ids:
                        result = await client.call_tool("count", {"call_id": ids[0]})
                        texts[ids.pop(0)] = result.content[0].text
                        done += 1
                        if done == CALLS // 3:
                            third.set()
            except (MCPError, ExceptionGroup):  # its replica died mid-call: it may have run
                retried.append(ids[0])

    async with Fleet(tmp_path, fleet_cluster, replicas=3) as fleet:
        ids = [f"k{i}" for i in range(CALLS)]
        load = asyncio.gather(*(worker(ids[w::WORKERS]) for w in range(WORKERS)))
        await third.wait()
        killed = await fleet.crash(1)
        await load
        runs = await fleet.runs()
    assert killed == -9
    assert set(texts) == set(ids) and set(runs) == set(ids)  # nothing lost
    assert {text.rpartition(" ")[2] for text in texts.values()} == {"r0", "r1", "r2"}
    assert all(runs[call_id] == 1 for call_id in ids if call_id not in retried)
    assert len(retried) <= WORKERS  # at most the calls in flight when the replica died
    assert all(runs[call_id] <= 1 + retried.count(call_id) for call_id in retried)
