"""A throwaway Postgres cluster for the tests that need a real server.

`.ci/run` starts one and exports `TOOLWEAVE_TEST_POSTGRES_DSN`; on a developer machine with
Debian's `postgresql` installed and no DSN set, the `postgres_dsn` fixture starts its own cluster
in a temporary directory (as the `postgres` user when running as root, since Postgres refuses
root) and stops it at the end of the session. Without either, the tests that need it are skipped
with the reason, except under CI, where a missing server is a failure.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

DSN_VARIABLE = "TOOLWEAVE_TEST_POSTGRES_DSN"


def _bin_dir() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if found:
        return os.path.dirname(found[-1])
    pg_ctl = shutil.which("pg_ctl")
    return os.path.dirname(pg_ctl) if pg_ctl else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Cluster:
    """A throwaway cluster in a temporary directory on a fixed free loopback port, which can be
    stopped and started again (the fleet tests restart Postgres under load)."""

    def __init__(self) -> None:
        bin_dir = _bin_dir()
        if bin_dir is None:
            raise FileNotFoundError("pg_ctl not found: apt-get install postgresql")
        self.bin_dir = bin_dir
        as_root = os.geteuid() == 0
        self.prefix = ["runuser", "-u", "postgres", "--"] if as_root else []
        self.base = tempfile.mkdtemp(prefix="toolweave-pg-")
        self.data = os.path.join(self.base, "data")
        if as_root:
            shutil.chown(self.base, "postgres")
        self.port = _free_port()
        user = "postgres" if as_root else os.environ.get("USER", "postgres")
        self.dsn = f"postgresql://{user}@127.0.0.1:{self.port}/postgres"
        self._run("initdb", "-D", self.data, "-U", user, "-A", "trust", "--no-sync")

    def _run(self, program: str, *args: str) -> None:
        subprocess.run(
            [*self.prefix, f"{self.bin_dir}/{program}", *args], check=True, capture_output=True
        )

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.base} -c fsync=off"
        log = os.path.join(self.base, "log")
        self._run("pg_ctl", "-D", self.data, "-o", options, "-w", "-l", log, "start")

    def stop(self) -> None:
        """Stop the server at once (open connections are cut, as in a crash)."""
        self._run("pg_ctl", "-D", self.data, "-m", "immediate", "stop")

    def remove(self) -> None:
        """Stop the server if it runs and delete its files."""
        subprocess.run(
            [*self.prefix, f"{self.bin_dir}/pg_ctl", "-D", self.data, "-m", "immediate", "stop"],
            capture_output=True,
        )
        shutil.rmtree(self.base, ignore_errors=True)


@contextmanager
def temporary_cluster() -> Iterator[str]:
    """Start a cluster on a free loopback port; yield its DSN; stop and delete it."""
    cluster = Cluster()
    try:
        cluster.start()
        yield cluster.dsn
    finally:
        cluster.remove()
