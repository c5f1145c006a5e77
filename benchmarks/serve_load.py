"""Load test for `toolweave serve --http`: many MCP clients hammering one host on loopback.

`CLIENTS` clients (each its own HTTP connection and MCP session, via toolweave's `MCPClient`)
make `CALLS` sequential `tools/call`s each, all at once. Reports errors (the goal is none),
throughput and latency percentiles (p50/p99/max).

    .venv/bin/python benchmarks/serve_load.py
"""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from toolweave.mcp import MCPClient

CLIENTS = 50
CALLS = 200
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


def main() -> None:
    port = free_port()
    with tempfile.TemporaryDirectory() as cwd:
        proc = start_host(port, cwd)
        try:
            asyncio.run(run(f"http://127.0.0.1:{port}/mcp", proc.pid))
        finally:
            proc.terminate()
            proc.wait(timeout=10)


if __name__ == "__main__":
    main()
