"""Postgres restarted under load behind HAProxy: while it is down a call fails with a clear,
retryable error (the replica names the database that does not answer; its `/ready` turns 503 and
HAProxy takes it out), and once it is back the same replicas serve again, with no restart: their
pools drop the connections of the old server, and the change relay listens again. The fleet test
is heavy: about 20 s here, mostly the call that waits out the pool while Postgres is down
(marked `heavy`); the second shows the same on one `SQLStore`, without HAProxy."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ToolsListChanged

from tests.fleet.harness import Fleet, needs_haproxy
from tests.postgres_server import Cluster
from tests.support import postgres_schema_dsn
from toolweave.storage.errors import StoreUnavailable
from toolweave.storage.sql import Dialect, Program, SQLStore


@needs_haproxy
@pytest.mark.heavy
async def test_calls_fail_clearly_while_postgres_is_down_and_succeed_after_without_restarts(
    tmp_path: Path, fleet_cluster: Cluster
) -> None:
    outcomes: dict[str, bool] = {}  # call id -> the client got a result
    stop = asyncio.Event()

    async def load(worker: int) -> None:
        for n in range(10_000):
            if stop.is_set():
                return
            call_id = f"w{worker}-{n}"
            try:
                async with Client(fleet.url) as client:
                    result = await client.call_tool("count", {"call_id": call_id})
                outcomes[call_id] = not result.is_error
            except (MCPError, ExceptionGroup, httpx.HTTPError):
                outcomes[call_id] = False

    async with Fleet(tmp_path, fleet_cluster, replicas=2) as fleet:
        direct_url, listener_url = fleet.replicas[0].url, fleet.replicas[1].url
        async with (
            Client(direct_url) as direct,
            Client(listener_url) as on_r1,
            on_r1.listen(tools_list_changed=True) as heard,
            httpx.AsyncClient() as http,
        ):
            await direct.list_tools()
            workers = asyncio.gather(*(load(w) for w in range(4)))
            await fleet.stop_postgres()
            with pytest.raises(MCPError, match=r"does not answer .*retry once it is back"):
                await direct.call_tool("count", {"call_id": "while-down"})
            down = await http.get(fleet.replicas[0].ready_url)
            await fleet.until("r0", "DOWN")
            await fleet.start_postgres()
            await fleet.until("r0", "UP")
            await fleet.until("r1", "UP")
            after = [
                (await direct.call_tool("count", {"call_id": f"after{i}"})).content[0].text
                for i in range(5)
            ]
            relayed = await heard.__anext__()  # the relay listens again: "lists may have changed"
            stop.set()
            await workers
        runs = await fleet.runs()
    assert (down.status_code, down.json()) == (503, {"ready": False, "reason": "store unreachable"})
    assert after == [f"after{i} ran on r0" for i in range(5)]
    assert relayed == ToolsListChanged()
    assert "while-down" not in runs
    assert all(runs.get(call_id) == 1 for call_id, ok in outcomes.items() if ok)
    assert all(runs.get(call_id, 0) <= 1 for call_id in outcomes)
    assert any(outcomes.values()) and not all(outcomes.values())


async def test_a_store_fails_clearly_while_postgres_is_down_and_reconnects_after(
    fleet_cluster: Cluster,
) -> None:
    store = SQLStore(
        dsn=postgres_schema_dsn(fleet_cluster.dsn),
        schema="CREATE TABLE IF NOT EXISTS probes (n INTEGER)",
        owner="ProbeStore",
    )

    def insert(dialect: Dialect) -> Program[None]:
        yield "INSERT INTO probes VALUES (1)", ()

    def count(dialect: Dialect) -> Program[int]:
        rows = yield "SELECT COUNT(*) FROM probes", ()
        return int(rows[0][0])

    await store.transact(insert)
    await asyncio.to_thread(fleet_cluster.stop)
    try:
        with pytest.raises(StoreUnavailable) as down:
            await store.transact(insert)
    finally:
        await asyncio.to_thread(fleet_cluster.start)
    await store.transact(insert)  # its pooled connection died with the old server: not reused
    written = await store.transact(count)
    await store.close()
    assert str(down.value).startswith(
        f"ProbeStore: the shared database at {store.location} does not answer ("
    )
    assert str(down.value).endswith("); retry once it is back")
    assert written == 2
