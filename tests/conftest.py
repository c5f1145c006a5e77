"""Fixtures shared by every test package: a real Postgres server for the scale-out stores."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.postgres_server import DSN_VARIABLE, temporary_cluster


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """A DSN of a real, empty-enough Postgres server (tests create their own schemas or tables)."""
    dsn = os.environ.get(DSN_VARIABLE)
    if dsn:
        yield dsn
        return
    try:
        with temporary_cluster() as started:
            yield started
    except (FileNotFoundError, OSError) as exc:
        if os.environ.get("CI"):
            pytest.fail(f"Postgres is required in CI: {exc}")
        pytest.skip(f"no Postgres server: {exc}; set {DSN_VARIABLE} or apt-get install postgresql")
