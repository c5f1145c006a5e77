"""The tools the fleet tests serve from each replica: `count` records every run of a call id in
Postgres (table `fleet_runs`, shared by the replicas), so a test can assert that no call was
lost and none ran twice, whichever replica ran it."""

from __future__ import annotations

import asyncio
from typing import Any

from toolweave.host.config import HostConfig
from toolweave.tools import ToolContext, tool
from toolweave.tools.base import Tool

RUNS_TABLE = "fleet_runs"
STARTED_CHANNEL = "fleet_started"  # NOTIFYed with the call id when a run starts
CREATE_RUNS = f"CREATE TABLE IF NOT EXISTS {RUNS_TABLE} (call_id text PRIMARY KEY, runs int)"
_pools: dict[str, Any] = {}  # store DSN -> the replica's connection pool, opened on first use


async def _pool(dsn: str) -> Any:
    from psycopg_pool import AsyncConnectionPool

    if dsn not in _pools:
        pool = AsyncConnectionPool(
            dsn,
            min_size=1,
            max_size=4,
            open=False,
            timeout=5,
            check=AsyncConnectionPool.check_connection,  # none left over from before a restart
        )
        await pool.open()
        _pools[dsn] = pool
    return _pools[dsn]


class FleetProvider:
    """Serves `count`, bound to the replica's `[serve].store_dsn` and `[serve].instance`."""

    name = "fleet"

    def __init__(self, config: HostConfig) -> None:
        if not config.store_dsn:
            raise ValueError("[serve].store_dsn: the fleet provider records runs in Postgres")
        self.dsn = config.store_dsn
        self.instance = config.instance or "local"

    async def tools(self) -> list[Tool]:
        dsn, instance = self.dsn, self.instance

        @tool(name="count")
        async def count(
            call_id: str, ctx: ToolContext, seconds: float = 0.0, steps: int = 0
        ) -> str:
            """Record one run of `call_id`, report `steps` steps of progress, work for
            `seconds`, say which replica ran it."""
            pool = await _pool(dsn)
            async with pool.connection() as conn:
                await conn.execute(
                    f"INSERT INTO {RUNS_TABLE} VALUES (%s, 1) ON CONFLICT (call_id) "
                    f"DO UPDATE SET runs = {RUNS_TABLE}.runs + 1",
                    (call_id,),
                )
                await conn.execute("SELECT pg_notify(%s, %s)", (STARTED_CHANNEL, call_id))
            for step in range(1, steps + 1):
                await ctx.report_progress(step, steps, f"step {step}")
            await asyncio.sleep(seconds)  # the call's work, running while a test stops us
            return f"{call_id} ran on {instance}"

        return [count]

    async def close(self) -> None:
        pool = _pools.pop(self.dsn, None)
        if pool is not None:
            await pool.close()
