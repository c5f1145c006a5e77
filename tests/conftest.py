"""Fixtures shared by every test package: a temporary home for every test (and a failure for a
test that writes into the real one), a real Postgres server for the scale-out stores, and
toolweave's wheel built once per session; Python's own Ctrl-C handler in place for every test."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import home_guard
from tests.postgres_server import DSN_VARIABLE, temporary_cluster
from tests.wheel_env import build_wheel


@pytest.fixture(autouse=True)
def temporary_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Every test runs with `HOME`, and so toolweave's data dir `~/.toolweave`, in a fresh
    temporary folder; a write into the real home (see tests/home_guard.py) fails the test."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    home_guard.install()
    home_guard.violations.clear()
    home_guard.watch(True)
    try:
        yield home
    finally:
        home_guard.watch(False)
    if home_guard.violations:
        written = "; ".join(sorted(set(home_guard.violations))[:5])
        pytest.fail(
            f"the test wrote into the real home {home_guard.REAL_HOME}: {written}; "
            "use tmp_path or the temporary HOME (the `temporary_home` fixture)"
        )


@pytest.fixture(autouse=True)
def default_sigint() -> None:
    """Every test starts with Python's own SIGINT handler. A host served from an async
    fixture leaks one: uvicorn saves the handler pytest-asyncio's runner installed for the
    fixture's setup and puts it back at teardown, after that runner stopped owning it; the
    leaked handler would raise `KeyboardInterrupt` into a later test's `asyncio.run` (which
    installs its own only over the default), as the chat's Ctrl-C test found."""
    signal.signal(signal.SIGINT, signal.default_int_handler)


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
