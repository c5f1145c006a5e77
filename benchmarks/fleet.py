"""Fleet benchmark: the same load through HAProxy in front of 1, then 3, `toolweave serve`
replicas on one Postgres, then the kill test (a replica SIGKILLed and restarted mid-load).

The fleet is the tests' harness (tests/fleet/harness.py): a throwaway Postgres cluster, real
`toolweave serve` processes sharing `[serve].store_dsn`, and Debian's `haproxy` with the
configuration docs/serve.md shows. `WORKERS` official-SDK clients in 2026 (stateless) mode make
`CALLS` `count` calls in all (each writes one row to Postgres, and the host logs the call there
too). Reports calls/s, p50/p99 latency and errors; the kill run also reports the calls cut by
the kill (retried by the client with the same call id) and how many of those had in fact run.

    .venv/bin/python benchmarks/fleet.py        # needs haproxy and postgresql installed
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the harness lives with the tests

from mcp.client import Client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from tests.fleet.harness import Fleet  # noqa: E402
from tests.postgres_server import Cluster  # noqa: E402

CALLS = 2000
WORKERS = 16


async def drive(fleet: Fleet, tag: str, halfway: asyncio.Event | None = None) -> dict[str, float]:
    """`CALLS` calls from `WORKERS` clients; a call cut by a dead replica is retried."""
    ids = [f"{tag}{i}" for i in range(CALLS)]
    latencies: list[float] = []
    retried: list[str] = []

    async def worker(mine: list[str]) -> None:
        while mine:
            try:
                async with Client(fleet.url) as client:
                    await client.list_tools()
                    while mine:
                        began = time.perf_counter()
                        await client.call_tool("count", {"call_id": mine[0]})
                        latencies.append(time.perf_counter() - began)
                        mine.pop(0)
                        if halfway is not None and len(latencies) == CALLS // 3:
                            halfway.set()
            except (MCPError, ExceptionGroup):
                retried.append(mine[0])

    began = time.perf_counter()
    await asyncio.gather(*(worker(ids[w::WORKERS]) for w in range(WORKERS)))
    elapsed = time.perf_counter() - began
    runs = await fleet.runs()
    ordered = sorted(latencies)
    return {
        "calls": len(latencies),
        "calls_per_s": len(latencies) / elapsed,
        "p50_ms": 1000 * statistics.median(ordered),
        "p99_ms": 1000 * ordered[int(len(ordered) * 0.99) - 1],
        "errors": len(retried),
        "lost": sum(1 for call_id in ids if call_id not in runs),
        "ran_twice": sum(1 for call_id in ids if runs.get(call_id, 0) > 1),
    }


async def main() -> None:
    cluster = Cluster()
    cluster.start()
    results: dict[str, dict[str, float]] = {}
    try:
        for replicas in (1, 3):
            with tempfile.TemporaryDirectory() as base:
                async with Fleet(Path(base), cluster, replicas=replicas) as fleet:
                    await drive(fleet, "warm")  # imports, pools, the first connections
                    results[f"{replicas} replica(s)"] = await drive(fleet, "load")
        with tempfile.TemporaryDirectory() as base:
            async with Fleet(Path(base), cluster, replicas=3) as fleet:
                third = asyncio.Event()
                load = asyncio.ensure_future(drive(fleet, "kill", third))
                await third.wait()
                await fleet.replicas[1].kill()
                await fleet.replicas[1].start()
                await fleet.until("r1", "UP")
                results["3, one killed"] = await load
    finally:
        cluster.remove()
    print(f"{CALLS} calls of `count` from {WORKERS} 2026 SDK clients through HAProxy")
    print(f"{'':16} {'calls/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'cut':>4} {'lost':>5} {'twice':>6}")
    for name, r in results.items():
        print(
            f"{name:16} {r['calls_per_s']:8.0f} {r['p50_ms']:7.1f} {r['p99_ms']:7.1f} "
            f"{r['errors']:4.0f} {r['lost']:5.0f} {r['ran_twice']:6.0f}"
        )


if __name__ == "__main__":
    asyncio.run(main())
