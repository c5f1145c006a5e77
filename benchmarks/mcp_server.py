"""Our `MCPServer` vs the official SDK's `MCPServer`: the same echo tool, the same minimal client.

Measured over stdio, each server in its own process:
- cold start: spawn to the `initialize` answer (median of several spawns);
- sequential calls/s: one `tools/call` at a time;
- concurrent calls/s: `CONCURRENCY` calls in flight.
Goals (issue 6): cold start <= 150 ms and <= 1/3 of the official; calls/s >= 3x.

    .venv/bin/python benchmarks/mcp_server.py
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

COLD_STARTS = 9
SEQUENTIAL_CALLS = 2000
CONCURRENT_CALLS = 5000
CONCURRENCY = 50

OURS = """
from toolweave.mcp import MCPServer

server = MCPServer("echo")


@server.tool
def echo(text: str) -> str:
    \"\"\"Echo the text back.\"\"\"
    return text


server.run()
"""

OFFICIAL = """
from mcp.server.mcpserver import MCPServer

server = MCPServer("echo")


@server.tool()
def echo(text: str) -> str:
    \"\"\"Echo the text back.\"\"\"
    return text


server.run()
"""

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


class MiniClient:
    """Newline-delimited JSON-RPC over a child's stdio; nothing else."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.next_id = 0
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.reader = asyncio.ensure_future(self._read())

    @classmethod
    async def spawn(cls, script: Path) -> tuple[MiniClient, float]:
        start = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            str(script),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=2**24,
        )
        client = cls(proc)
        await client.request("initialize", INITIALIZE["params"])
        elapsed = time.perf_counter() - start
        client.notify("notifications/initialized")
        return client, elapsed

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            message = json.loads(line)
            future = self.pending.pop(message.get("id"), None)
            if future is not None and not future.done():
                future.set_result(message)

    def notify(self, method: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        response = await future
        if "error" in response:
            raise RuntimeError(f"{method} failed: {response['error']}")
        return response

    async def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), 5)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        self.reader.cancel()


async def call(client: MiniClient, i: int) -> None:
    response = await client.request("tools/call", {"name": "echo", "arguments": {"text": f"m{i}"}})
    assert response["result"]["content"][0]["text"] == f"m{i}", response


async def measure(script: Path, cold_starts: int = COLD_STARTS) -> dict[str, float]:
    starts = []
    for _ in range(cold_starts):
        client, elapsed = await MiniClient.spawn(script)
        starts.append(elapsed)
        await client.close()
    client, _ = await MiniClient.spawn(script)
    await client.request("tools/list", {})
    for i in range(50):  # warm-up
        await call(client, i)
    start = time.perf_counter()
    for i in range(SEQUENTIAL_CALLS):
        await call(client, i)
    sequential = SEQUENTIAL_CALLS / (time.perf_counter() - start)

    semaphore = asyncio.Semaphore(CONCURRENCY)

    async def limited(i: int) -> None:
        async with semaphore:
            await call(client, i)

    start = time.perf_counter()
    await asyncio.gather(*(limited(i) for i in range(CONCURRENT_CALLS)))
    concurrent = CONCURRENT_CALLS / (time.perf_counter() - start)
    await client.close()
    return {
        "cold_ms": statistics.median(starts) * 1000 if starts else 0.0,
        "sequential": sequential,
        "concurrent": concurrent,
    }


def write_scripts(tmp: str, *, async_tool: bool) -> tuple[Path, Path]:
    """Both servers with a sync echo (run in a worker thread by both) or an async one."""
    suffix = "async" if async_tool else "sync"
    ours_script = Path(tmp, f"ours_{suffix}.py")
    official_script = Path(tmp, f"official_{suffix}.py")
    for script, source in ((ours_script, OURS), (official_script, OFFICIAL)):
        script.write_text(source.replace("def echo", "async def echo") if async_tool else source)
    return ours_script, official_script


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ours_script, official_script = write_scripts(tmp, async_tool=False)
        ours = await measure(ours_script)
        official = await measure(official_script)
        ours_async_script, official_async_script = write_scripts(tmp, async_tool=True)
        ours_async = await measure(ours_async_script, cold_starts=0)
        official_async = await measure(official_async_script, cold_starts=0)
    print(f"{'':30}{'toolweave':>12}{'official':>12}{'ratio':>10}")
    cold_ratio = ours["cold_ms"] / official["cold_ms"]
    print(
        f"{'cold start (ms)':30}{ours['cold_ms']:12.1f}{official['cold_ms']:12.1f}"
        f"{cold_ratio:9.2f}x  (goal <= 150 ms and <= 0.33x)"
    )
    for tool_kind, mine, theirs in (
        ("sync", ours, official),
        ("async", ours_async, official_async),
    ):
        for key in ("sequential", "concurrent"):
            label = f"{key} calls/s, {tool_kind} echo"
            ratio = mine[key] / theirs[key]
            print(f"{label:30}{mine[key]:12.0f}{theirs[key]:12.0f}{ratio:9.2f}x  (goal >= 3x)")
    print(
        f"(concurrent = {CONCURRENCY} calls in flight; cold start = median of {COLD_STARTS}; "
        "a sync echo runs in a worker thread in both servers)"
    )


if __name__ == "__main__":
    asyncio.run(main())
