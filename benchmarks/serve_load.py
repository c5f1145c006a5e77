"""Load test for `toolweave serve --http`: many MCP clients hammering one host on loopback.

`CLIENTS` clients (each its own HTTP connection and MCP session, via toolweave's `MCPClient`)
make `CALLS` sequential `tools/call`s each, all at once. Reports errors (the goal is none),
throughput and latency percentiles (p50/p99/max).

Then a soak: `ABANDONED` sessions opened and never closed, and `MALFORMED` hostile requests
(ids that are neither integers nor strings, JSON nested 1,000 deep, broken JSON, bodies over
the 4 MiB limit). The server's resident memory must end within `SOAK_BUDGET_MB` of where the
soak started (the session cap and the limits hold it; before them it grew without bound).

    .venv/bin/python benchmarks/serve_load.py
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from toolweave.mcp import MCPClient

CLIENTS = 50
CALLS = 200
ABANDONED = 2000
MALFORMED = 500
SOAK_BUDGET_MB = 20.0
TOOLWEAVE = Path(sys.executable).with_name("toolweave")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def start_host(port: int, cwd: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [str(TOOLWEAVE), "serve", "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=cwd,  # no toolweave.toml there: the documented defaults
    )
    assert proc.stdout is not None
    for line in proc.stdout:  # the banner is printed once the socket is bound
        if "Ctrl+C" in line:
            return proc
    raise RuntimeError(f"toolweave serve exited with {proc.wait()}")


async def one_client(url: str, latencies: list[float], errors: list[str]) -> None:
    client = MCPClient.http(url)
    try:
        await client.connect()
        for i in range(CALLS):
            start = time.perf_counter()
            result = await client.call_tool("celsius_to_fahrenheit", {"celsius": i})
            latencies.append(time.perf_counter() - start)
            if result.is_error or result.structured != {"result": round(i * 9 / 5 + 32, 2)}:
                errors.append(f"call {i}: {result!r:.200}")
    except Exception as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        await client.close()


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU of a process (Linux /proc), to show where the time goes."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def run(url: str, server_pid: int) -> None:
    server_cpu = cpu_seconds(server_pid)
    client_cpu = time.process_time()
    latencies: list[float] = []
    errors: list[str] = []
    start = time.perf_counter()
    await asyncio.gather(*(one_client(url, latencies, errors) for _ in range(CLIENTS)))
    elapsed = time.perf_counter() - start
    latencies.sort()
    p99 = latencies[int(len(latencies) * 0.99) - 1] if latencies else float("nan")
    print(f"toolweave serve --http: {CLIENTS} clients x {CALLS} calls on loopback")
    print(f"  calls ok     {len(latencies) - len(errors)} / {CLIENTS * CALLS}")
    print(f"  errors       {len(errors)}" + (f"  first: {errors[0]}" if errors else ""))
    print(f"  throughput   {len(latencies) / elapsed:.0f} calls/s over {elapsed:.1f} s")
    print(
        f"  latency      p50 {statistics.median(latencies) * 1000:.1f} ms   "
        f"p99 {p99 * 1000:.1f} ms   max {latencies[-1] * 1000:.1f} ms"
    )
    after = cpu_seconds(server_pid)
    if server_cpu is not None and after is not None:
        print(
            f"  cpu          server {(after - server_cpu) / len(latencies) * 1000:.2f} ms/call, "
            f"clients {(time.process_time() - client_cpu) / len(latencies) * 1000:.2f} ms/call "
            f"(both on this machine; the clients dominate)"
        )
    if errors or len(latencies) != CLIENTS * CALLS:
        raise SystemExit(1)


def rss_mb(pid: int) -> float:
    """Resident memory of a process (Linux /proc), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


PING = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":'
BAD_IDS = (1.5, True, [1], {}, None)


def malformed(i: int) -> bytes:
    """One hostile request body: bad ids, deep nesting, broken JSON, an over-limit body."""
    kind = i % 4
    if kind == 0:
        return json.dumps({"jsonrpc": "2.0", "id": BAD_IDS[i // 4 % 5], "method": "ping"}).encode()
    if kind == 1:
        return PING + b"[" * 1000 + b"]" * 1000 + b"}"
    if kind == 2 and i % 40 == 2:  # a few over the 4 MiB default body limit
        return PING + b'{"x":"' + b"x" * (5 << 20) + b'"}}'
    return PING[:-10]  # broken JSON


async def soak(url: str, server_pid: int) -> None:
    accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    init = (
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
        b'"2025-11-25","capabilities":{},"clientInfo":{"name":"soak","version":"0"}}}'
    )
    before = rss_mb(server_pid)
    statuses: dict[int, int] = {}
    gate = asyncio.Semaphore(20)
    async with httpx.AsyncClient(timeout=60) as http:

        async def post(body: bytes, headers: dict[str, str]) -> None:
            async with gate:
                response = await http.post(url, content=body, headers=headers)
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1

        await asyncio.gather(*(post(init, accept) for _ in range(ABANDONED)))  # never closed
        session = (await http.post(url, content=init, headers=accept)).headers["mcp-session-id"]
        in_session = {**accept, "Mcp-Session-Id": session}
        await asyncio.gather(*(post(malformed(i), in_session) for i in range(MALFORMED)))
    after = rss_mb(server_pid)
    print(f"soak: {ABANDONED} abandoned sessions + {MALFORMED} malformed requests")
    print(f"  statuses     {dict(sorted(statuses.items()))}")
    print(f"  server rss   {before:.1f} MB -> {after:.1f} MB ({after - before:+.1f} MB)")
    if after - before > SOAK_BUDGET_MB:
        raise SystemExit(f"server memory grew {after - before:.1f} MB (> {SOAK_BUDGET_MB} MB)")


def main() -> None:
    port = free_port()
    with tempfile.TemporaryDirectory() as cwd:
        proc = start_host(port, cwd)
        try:
            url = f"http://127.0.0.1:{port}/mcp"
            asyncio.run(run(url, proc.pid))
            asyncio.run(soak(url, proc.pid))
        finally:
            proc.terminate()
            proc.wait(timeout=10)


if __name__ == "__main__":
    main()
