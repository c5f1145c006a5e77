"""The fleet tests' Postgres: their own throwaway cluster (one per test session), since a test
restarts it; each fleet works in a fresh schema of it."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.postgres_server import Cluster


@pytest.fixture(scope="session")
def fleet_cluster() -> Iterator[Cluster]:
    try:
        cluster = Cluster()
    except FileNotFoundError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"Postgres is required in CI: {exc}")
        pytest.skip(f"no Postgres server: {exc}")
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.remove()
