"""MCP client throughput: toolweave's MCPClient vs the official SDK's ClientSession.

Both clients call `tools/call echo` on the same minimal stdio server (this file run with
`--serve`: a raw JSON-RPC loop that answers whatever arrived in one read with one write, so the
server is never the bottleneck), first one call at a time, then with 200 calls in flight. Both
run in this process, one after the other, and the ratios are printed at the end.

    .venv/bin/python benchmarks/mcp_client.py [--calls N]   (default 3000)
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

IN_FLIGHT = 200


def serve() -> None:
    """The minimal 2025-11-25 stdio server: initialize, tools/list, tools/call echo, ping."""
    pending = b""
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    while True:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            return
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop()
        out: list[str] = []
        for line in lines:
            if not line.strip():
                continue
            message = json.loads(line)
            method = message.get("method")
            if "id" not in message or method is None:
                continue
            if method == "initialize":
                result: dict[str, Any] = {
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "bench-echo", "version": "1"},
                }
            elif method == "tools/list":
                result = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
            elif method == "tools/call":
                text = message["params"]["arguments"].get("text", "")
                result = {"content": [{"type": "text", "text": text}], "isError": False}
            elif method == "ping":
                result = {}
            else:
                out.append(
                    dumps(
                        {
                            "jsonrpc": "2.0",
                            "id": message["id"],
                            "error": {"code": -32601, "message": f"Method not found: {method}"},
                        }
                    )
                )
                continue
            out.append(dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}))
        if out:
            os.write(1, ("\n".join(out) + "\n").encode())


Call = Callable[[int], Awaitable[Any]]


async def sequential(call: Call, calls: int) -> float:
    start = time.perf_counter()
    for i in range(calls):
        await call(i)
    return calls / (time.perf_counter() - start)


async def concurrent(call: Call, calls: int) -> float:
    counter = iter(range(calls))

    async def worker() -> None:
        for i in counter:
            await call(i)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(IN_FLIGHT)))
    return calls / (time.perf_counter() - start)


async def main(calls: int, rounds: int) -> None:
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from mcp import ClientSession
    from toolweave.mcp import MCPClient

    server = [__file__, "--serve"]
    params = StdioServerParameters(command=sys.executable, args=server)
    async with (
        MCPClient.stdio(sys.executable, server, timeout=60) as client,
        stdio_client(params) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()

        async def ours(i: int) -> Any:
            result = await client.call_tool("echo", {"text": str(i)})
            assert result.text == str(i)

        async def official(i: int) -> Any:
            result = await session.call_tool("echo", {"text": str(i)})
            assert result.content[0].text == str(i)  # type: ignore[union-attr]

        best: dict[tuple[str, str], float] = {}
        for call in (ours, official):  # warm up both
            await concurrent(call, 400)
        # Rounds alternate the two clients so background load hits both alike; best of each.
        for _ in range(rounds):
            for name, call in (("ours", ours), ("official", official)):
                for mode, run, count in (
                    ("seq", sequential, calls),
                    ("conc", concurrent, calls * 2),
                ):
                    rate = await run(call, count)
                    best[name, mode] = max(best.get((name, mode), 0.0), rate)

    print(
        f"MCP client, tools/call echo over stdio: {calls} sequential calls and {calls * 2} "
        f"with {IN_FLIGHT} in flight, best of {rounds} alternating rounds"
    )
    print(f"{'':22}{'sequential':>14}{'200 in flight':>16}")
    for label, key in (("toolweave MCPClient", "ours"), ("official mcp SDK", "official")):
        print(f"{label:22}{best[key, 'seq']:>11,.0f}/s{best[key, 'conc']:>13,.0f}/s")
    seq_ratio = best["ours", "seq"] / best["official", "seq"]
    conc_ratio = best["ours", "conc"] / best["official", "conc"]
    print(f"{'ratio':22}{seq_ratio:>13.1f}x{conc_ratio:>15.1f}x")


if __name__ == "__main__":
    if "--serve" in sys.argv:
        serve()
    else:
        count = int(sys.argv[sys.argv.index("--calls") + 1]) if "--calls" in sys.argv else 3000
        asyncio.run(main(count, rounds=3))
