"""A `MemoryManager` on each backend (SQLite; Postgres + Qdrant local mode) for every test."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from toolweave.memory import MemoryManager
from toolweave.storage.retrieval import (
    DEFAULT_INDEX_SETTINGS,
    Embedder,
    IndexSettings,
    load_embedder,
)

ManagerFactory = Callable[..., MemoryManager]


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The default embedder, loaded once per test session."""
    return load_embedder("auto")


@pytest.fixture(params=["sqlite", "postgres"])
async def make_manager(
    request: pytest.FixtureRequest, tmp_path: Path, embedder: Embedder
) -> AsyncIterator[ManagerFactory]:
    """`make_manager(index=IndexSettings(...), **kwargs)` opens a manager on the parametrised
    backend (the settings get its DSN and Qdrant folder); calling it again after closing the
    first reaches the same data, as a restart would."""
    opened: list[MemoryManager] = []
    table = f"mem_{uuid.uuid4().hex[:10]}"
    dsn = request.getfixturevalue("postgres_dsn") if request.param == "postgres" else None

    def factory(index: IndexSettings = DEFAULT_INDEX_SETTINGS, **kwargs: Any) -> MemoryManager:
        kwargs.setdefault("embedder", embedder)
        if dsn is not None:
            index = dataclasses.replace(index, dsn=dsn, qdrant_path=str(tmp_path / "qdrant"))
        manager = MemoryManager(tmp_path / "memory.db", table=table, index=index, **kwargs)
        opened.append(manager)
        return manager

    factory.backend = request.param  # type: ignore[attr-defined]
    yield factory
    for manager in opened:
        await manager.close()
