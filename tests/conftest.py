"""Fixtures shared by every test package: a real Postgres server for the scale-out stores, and
toolweave's wheel built once per session."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.postgres_server import DSN_VARIABLE, temporary_cluster
from tests.wheel_env import build_wheel


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


@pytest.fixture(scope="session")
def toolweave_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """toolweave's wheel, built from the checkout once for every test that installs it."""
    return build_wheel(tmp_path_factory.mktemp("dist"))
