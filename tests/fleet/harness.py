"""A fleet on loopback for the tests and the benchmark: a throwaway Postgres, N real
`toolweave serve` replica processes sharing one `[serve].store_dsn`, and HAProxy (Debian's
`haproxy`, round-robin, health checks on each replica) in front. A replica can be SIGKILLed,
SIGTERMed and restarted on its port; Postgres can be stopped and started again.

    async with Fleet(tmp_path, cluster, replicas=3) as fleet:
        ...  # clients connect to fleet.url; fleet.replicas[1].kill(); await ...start()

Tests that need it are marked `needs_haproxy`: they skip, saying so, where `haproxy` is not
installed (`.ci/run` installs it).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import TracebackType

import pytest

from tests.fleet.tools import CREATE_RUNS, RUNS_TABLE, STARTED_CHANNEL
from tests.postgres_server import Cluster
from tests.support import postgres_schema_dsn
from toolweave.host.readiness import READY_PATH

HAPROXY = shutil.which("haproxy")
needs_haproxy = pytest.mark.skipif(
    HAPROXY is None and not os.environ.get("CI"),  # CI installs it: there, missing fails
    reason="haproxy is not installed: apt-get install haproxy (.ci/run does)",
)
ROOT = Path(__file__).resolve().parents[2]
MCP_PATH = "/mcp"

# The configuration docs/serve.md shows ("Running several replicas"); {servers} is one
# `server NAME HOST:PORT check` line per replica.
HAPROXY_CONFIG = """\
global
    maxconn 4096
    stats socket {socket} mode 600 level admin

defaults
    mode http
    timeout connect 2s
    timeout client 120s
    timeout server 120s
    retries 3
    option redispatch

frontend mcp
    bind 127.0.0.1:{port}
    default_backend replicas

backend replicas
    balance roundrobin
    option httpchk GET {ready}
    http-check expect status 200
    default-server inter 200ms fall 2 rise 1
{servers}
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Replica:
    """One `toolweave serve` process on a fixed loopback port (kept across restarts)."""

    def __init__(self, name: str, config: Path, port: int) -> None:
        self.name = name
        self.config = config
        self.port = port
        self.process: asyncio.subprocess.Process | None = None
        self._drain: asyncio.Task[None] | None = None
        self.output: list[str] = []  # what it printed, for a failing test's message

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{MCP_PATH}"

    @property
    def ready_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{READY_PATH}"

    async def start(self) -> None:
        """Start the process and return once it listens (its banner names its address)."""
        self.process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.fleet.replica",
            "--http",
            f"127.0.0.1:{self.port}",
            "--config",
            str(self.config),
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        assert self.process.stdout is not None
        address = f"127.0.0.1:{self.port}"
        while True:
            line = (await self.process.stdout.readline()).decode()
            if not line:
                code = await self.process.wait()
                raise RuntimeError(f"replica {self.name} exited ({code}): {''.join(self.output)}")
            self.output.append(line)
            if address in line:
                break
        self._drain = asyncio.ensure_future(self._read(self.process.stdout))

    async def _read(self, stream: asyncio.StreamReader) -> None:
        async for line in stream:
            self.output.append(line.decode())

    async def _ended(self) -> int:
        assert self.process is not None
        code = await self.process.wait()
        if self._drain is not None:
            await self._drain
        self.process = None
        return code

    async def kill(self) -> int:
        """SIGKILL, as a crash: nothing is flushed or closed."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        return await self._ended()

    def terminate(self) -> asyncio.Task[int]:
        """Send SIGTERM (a graceful drain); the task ends with the exit code."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return asyncio.ensure_future(self._ended())

    async def stop(self) -> None:
        """SIGINT: stop now, without the drain's notice (the test is over)."""
        if self.process is not None:
            self.process.send_signal(signal.SIGINT)
            await self._ended()


class Fleet:
    """Replicas of one configuration on one Postgres DSN, behind HAProxy."""

    def __init__(
        self,
        base: Path,
        cluster: Cluster,
        replicas: int = 3,
        serve: dict[str, object] | None = None,
        tables: str = "",
    ) -> None:
        """`serve` adds `[serve]` keys; `tables` is more TOML (`[mcpServers.x]`...) for each."""
        self.base = base
        self.cluster = cluster
        self.dsn = dsn = postgres_schema_dsn(cluster.dsn)  # a fresh schema per fleet
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}{MCP_PATH}"
        self.replicas: list[Replica] = []
        settings = {"providers": ["fleet"], "console": False, **(serve or {})}
        for index in range(replicas):
            name = f"r{index}"
            config = base / name / "toolweave.toml"
            config.parent.mkdir(parents=True, exist_ok=True)
            lines = [
                "[serve]",
                f'data_dir = "{config.parent}"',
                f'store_dsn = "{dsn}"',
                f'instance = "{name}"',
                *(f"{key} = {_toml(value)}" for key, value in settings.items()),
            ]
            config.write_text("\n".join(lines) + "\n" + tables)
            self.replicas.append(Replica(name, config, free_port()))
        self.haproxy: asyncio.subprocess.Process | None = None
        self.stats_socket = base / "haproxy.sock"

    def haproxy_config(self) -> str:
        servers = "\n".join(f"    server {r.name} 127.0.0.1:{r.port} check" for r in self.replicas)
        return HAPROXY_CONFIG.format(
            port=self.port, ready=READY_PATH, servers=servers, socket=self.stats_socket
        )

    async def __aenter__(self) -> Fleet:
        import psycopg

        assert HAPROXY is not None, "haproxy is not installed"
        async with await psycopg.AsyncConnection.connect(self.dsn, autocommit=True) as conn:
            await conn.execute(CREATE_RUNS)
        await asyncio.gather(*(replica.start() for replica in self.replicas))
        path = self.base / "haproxy.cfg"
        path.write_text(self.haproxy_config())
        self.haproxy = await asyncio.create_subprocess_exec(
            HAPROXY, "-db", "-f", str(path), stdout=asyncio.subprocess.DEVNULL
        )
        await _listening(self.port, self.haproxy)
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.haproxy is not None:
            self.haproxy.terminate()
            await self.haproxy.wait()
        await asyncio.gather(*(replica.stop() for replica in self.replicas))

    async def states(self) -> dict[str, str]:
        """HAProxy's view of each replica: "UP", "DOWN", "MAINT", ... (its stats socket)."""
        reader, writer = await asyncio.open_unix_connection(str(self.stats_socket))
        writer.write(b"show stat\n")
        await writer.drain()
        text = (await reader.read()).decode()
        writer.close()
        states = {}
        for line in text.splitlines()[1:]:
            fields = line.split(",")
            if len(fields) > 17 and fields[0] == "replicas" and fields[1] != "BACKEND":
                states[fields[1]] = fields[17].split(" ")[0]
        return states

    async def until(self, name: str, state: str) -> None:
        """Return once HAProxy's health checks see replica `name` in `state` ("UP", "DOWN").
        HAProxy announces nothing, so this asks its stats socket every 50 ms."""
        while True:
            if (await self.states()).get(name) == state:
                return
            await asyncio.sleep(0.05)

    async def crash(self, index: int) -> int:
        """SIGKILL replica `index`, start it again, return its exit code once HAProxy sees it
        back up."""
        replica = self.replicas[index]
        code = await replica.kill()
        await replica.start()
        await self.until(replica.name, "UP")
        return code

    async def stop_postgres(self) -> None:
        """Stop Postgres at once, as a crash (open connections are cut)."""
        await asyncio.to_thread(self.cluster.stop)

    async def start_postgres(self) -> None:
        """Start Postgres again on the same port; return once it accepts connections."""
        await asyncio.to_thread(self.cluster.start)

    @asynccontextmanager
    async def starts(self) -> AsyncIterator[AsyncIterator[str]]:
        """Listening from now on: the call ids of `count` runs as they start, on any replica."""
        import psycopg

        conn = await psycopg.AsyncConnection.connect(self.dsn, autocommit=True)
        await conn.execute(f"LISTEN {STARTED_CHANNEL}")

        async def call_ids() -> AsyncIterator[str]:
            async for note in conn.notifies():
                yield note.payload

        try:
            yield call_ids()
        finally:
            await conn.close()

    async def runs(self) -> dict[str, int]:
        """How many times the `count` tool ran, per call id (every replica's runs)."""
        import psycopg

        async with await psycopg.AsyncConnection.connect(self.dsn) as conn:
            cursor = await conn.execute(f"SELECT call_id, runs FROM {RUNS_TABLE}")
            return {call_id: runs for call_id, runs in await cursor.fetchall()}


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    return f'"{value}"'


async def _listening(port: int, process: asyncio.subprocess.Process) -> None:
    """Return once something accepts on `port`; fail if `process` exits first. HAProxy says
    nothing when it is ready, so this retries the connection (HAProxy binds within ms)."""
    while process.returncode is None:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.02)
            continue
        writer.close()
        await writer.wait_closed()
        return
    raise RuntimeError(f"haproxy exited ({process.returncode}) before listening")
