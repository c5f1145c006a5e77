"""A replica SIGKILLed and restarted under load behind HAProxy: a 2026 (stateless) official-SDK
client makes 1,000 calls, each with an idempotency key in `_meta`, and the tool's counter (a row
per call id in Postgres) shows that no call ran twice. A call whose connection the kill cut is
retried with its key: it is answered from its record, runs (when the first attempt never reached
a replica), or is refused as having run at most once without completing (its replica died
mid-call); nothing is lost otherwise. Heavy: 1,000 calls through three replicas, about 15 s
here (marked `heavy`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError

from tests.fleet.harness import Fleet, needs_haproxy
from tests.postgres_server import Cluster
from toolweave.mcp.shared.constants import META_IDEMPOTENCY_KEY

pytestmark = [needs_haproxy, pytest.mark.heavy]

CALLS = 1000
WORKERS = 10


async def test_a_stateless_client_completes_1000_calls_while_a_replica_is_killed_and_restarted(
    tmp_path: Path, fleet_cluster: Cluster
) -> None:
    done = 0
    third = asyncio.Event()
    retried: list[str] = []
    refused: list[str] = []
    texts: dict[str, str] = {}

    async def worker(ids: list[str]) -> None:
        nonlocal done
        while ids:
            try:  # a connection cut under a call ends the SDK client: connect again
                async with Client(fleet.url) as client:
                    await client.list_tools()
                    while ids:
                        key = {META_IDEMPOTENCY_KEY: ids[0]}
                        try:
                            result = await client.call_tool("count", {"call_id": ids[0]}, meta=key)
                        except MCPError as exc:  # its first attempt died with its replica
                            if "ran at most once" not in str(exc):
                                raise
                            refused.append(ids.pop(0))
                            continue
                        texts[ids.pop(0)] = result.content[0].text
                        done += 1
                        if done == CALLS // 3:
                            third.set()
            except (MCPError, ExceptionGroup):  # its replica died mid-call: retried, same key
                retried.append(ids[0])

    async with Fleet(tmp_path, fleet_cluster, replicas=3) as fleet:
        ids = [f"k{i}" for i in range(CALLS)]
        load = asyncio.gather(*(worker(ids[w::WORKERS]) for w in range(WORKERS)))
        await third.wait()
        killed = await fleet.crash(1)
        await load
        runs = await fleet.runs()
    assert killed == -9
    assert set(texts) | set(refused) == set(ids) and not set(texts) & set(refused)
    assert {text.rpartition(" ")[2] for text in texts.values()} == {"r0", "r1", "r2"}
    assert all(runs[call_id] == 1 for call_id in texts)  # every answered call ran once
    assert max(runs.values()) == 1  # nothing ran twice, retried or not
    assert set(refused) <= set(retried) and len(set(retried)) <= WORKERS
