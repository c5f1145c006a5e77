"""Cost of the orchestration stores per model call, against the floor of one SQLite write.

Each model call of a run with a quota pays one reserve and one settle (two transactions). This
measures that pair on the embedded SQLite store, next to the floor measured in the same run:
one `SQLiteDatabase.transaction` doing a single upsert, which is the least any persisted,
crash-safe counter can cost. It also times a query-log row (start + finish) and one scheduler
claim (one batch: up to 20 of 50 due tasks). With `TOOLWEAVE_TEST_POSTGRES_DSN` set, the quota
pair is measured on Postgres too.

Run: .venv/bin/python benchmarks/orchestration_stores.py
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from toolweave.accounting import QueryLog, Quota
from toolweave.agent import Agent
from toolweave.llm import Message, ScriptedModel
from toolweave.scheduler import Scheduler
from toolweave.storage import SQLiteDatabase

OPS = 100


async def per_op_ms(op: object, n: int = OPS) -> float:
    """Median of 5 rounds of `n` calls (after a warm-up round), per call."""
    rounds = []
    for r in range(6):
        start = time.perf_counter()
        for i in range(n):
            await op(r * n + i)  # type: ignore[operator]
        rounds.append((time.perf_counter() - start) * 1000 / n)
    return statistics.median(rounds[1:])


def row(label: str, ms: float, floor_ms: float) -> None:
    print(f"{label:40} {ms:7.3f} ms  {ms / floor_ms:4.1f}x floor")


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        floor_db = SQLiteDatabase(
            base / "floor.db",
            schema="CREATE TABLE IF NOT EXISTS c (k TEXT PRIMARY KEY, n INTEGER NOT NULL)",
        )

        async def floor(i: int) -> None:
            await floor_db.transaction(
                lambda db: db.execute(
                    "INSERT INTO c VALUES ('k', 1) ON CONFLICT (k) DO UPDATE SET n = n + 1"
                )
            )

        quota = Quota(base / "quota.db", per_session_daily_tokens=10**12)

        async def reserve_settle(i: int) -> None:
            rid = await quota.reserve("s", tokens=100, reservation_id=f"r{i}")
            await quota.settle(rid, tokens=120)

        log = QueryLog(base / "log.db")

        async def log_row(i: int) -> None:
            await log.finish(await log.start("北京天气", "s"), "success", tools=["a"], tokens=5)

        floor_ms = await per_op_ms(floor)
        quota_ms = await per_op_ms(reserve_settle)
        log_ms = await per_op_ms(log_row)
        print(f"{'floor: one SQLite upsert transaction':40} {floor_ms:7.3f} ms")
        row("quota reserve + settle (SQLite)", quota_ms, floor_ms)
        row("query-log start + finish (SQLite)", log_ms, floor_ms)

        now = [1_000_000.0]
        agent = Agent(ScriptedModel([Message.assistant("ok")] * 50))
        scheduler = Scheduler(agent, base / "s.db", clock=lambda: now[0])
        for i in range(50):
            scheduler.create("@every 1m", f"job {i}", "t")
        now[0] += 60
        start = time.perf_counter()
        claimed = await scheduler._claim()
        claim_ms = (time.perf_counter() - start) * 1000
        row(f"scheduler claim of {len(claimed)} due tasks", claim_ms, floor_ms)

        dsn = os.environ.get("TOOLWEAVE_TEST_POSTGRES_DSN")
        if dsn:
            pg = Quota(dsn=dsn, per_session_daily_tokens=10**12)

            async def pg_pair(i: int) -> None:
                rid = await pg.reserve(f"bench-{os.getpid()}", tokens=100)
                await pg.settle(rid, tokens=120)

            pg_ms = await per_op_ms(pg_pair, 30)
            row("quota reserve + settle (Postgres)", pg_ms, floor_ms)
            await pg.close()
        await scheduler.close()
        await quota.close()
        await log.close()
        await floor_db.close()


if __name__ == "__main__":
    asyncio.run(main())
