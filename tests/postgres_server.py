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


@contextmanager
def temporary_cluster() -> Iterator[str]:
    """Start a cluster on a free loopback port; yield its DSN; stop and delete it."""
    bin_dir = _bin_dir()
    if bin_dir is None:
        raise FileNotFoundError("pg_ctl not found: apt-get install postgresql")
    as_root = os.geteuid() == 0
    prefix = ["runuser", "-u", "postgres", "--"] if as_root else []
    base = tempfile.mkdtemp(prefix="toolweave-pg-")
    data = os.path.join(base, "data")
    if as_root:
        shutil.chown(base, "postgres")
    port = _free_port()
    user = "postgres" if as_root else os.environ.get("USER", "postgres")
    try:
        subprocess.run(
            [*prefix, f"{bin_dir}/initdb", "-D", data, "-U", user, "-A", "trust", "--no-sync"],
            check=True,
            capture_output=True,
        )
        options = f"-c listen_addresses=127.0.0.1 -p {port} -k {base} -c fsync=off"
        subprocess.run(
            [
                *prefix,
                f"{bin_dir}/pg_ctl",
                "-D",
                data,
                "-o",
                options,
                "-w",
                "-l",
                os.path.join(base, "log"),
                "start",
            ],
            check=True,
            capture_output=True,
        )
        try:
            yield f"postgresql://{user}@127.0.0.1:{port}/postgres"
        finally:
            subprocess.run(
                [*prefix, f"{bin_dir}/pg_ctl", "-D", data, "-m", "immediate", "stop"],
                capture_output=True,
            )
    finally:
        shutil.rmtree(base, ignore_errors=True)
