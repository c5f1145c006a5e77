"""Both `TextIndex` backends behind one fixture, so every index test runs on each."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from toolweave.storage.retrieval import Embedder, PostgresQdrantIndex, SQLiteTextIndex, TextIndex

IndexFactory = Callable[..., TextIndex]


@pytest.fixture(params=["sqlite", "postgres"])
async def make_index(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[IndexFactory]:
    """`make_index(embedder, name=...)` opens an index on the parametrised backend; reopening
    with the same name reaches the same data, as a restart would."""
    opened: list[TextIndex] = []
    suffix = uuid.uuid4().hex[:10]
    dsn = request.getfixturevalue("postgres_dsn") if request.param == "postgres" else ""

    def factory(embedder: Embedder | str = "hash", name: str = "idx", **kwargs: Any) -> TextIndex:
        index: TextIndex
        if request.param == "sqlite":
            index = SQLiteTextIndex(tmp_path / "index.db", embedder, name=name, **kwargs)
        else:
            index = PostgresQdrantIndex(
                dsn,
                embedder,
                qdrant_path=str(tmp_path / "qdrant"),
                name=f"{name}_{suffix}",
                **kwargs,
            )
        opened.append(index)
        return index

    factory.backend = request.param  # type: ignore[attr-defined]
    yield factory
    for index in opened:
        await index.close()
