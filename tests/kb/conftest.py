"""Knowledge bases on both backends behind one fixture, so every test runs on each."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from toolweave.kb import KnowledgeBase
from toolweave.storage.retrieval import DEFAULT_INDEX_SETTINGS, IndexSettings

KBFactory = Callable[..., KnowledgeBase]


@pytest.fixture(params=["sqlite", "postgres"])
async def make_kb(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[KBFactory]:
    """`make_kb(index=IndexSettings(...), **options)` opens a knowledge base on the
    parametrised backend (the settings get its DSN and Qdrant folder); the same options reopen
    the same data, as a restart would."""
    opened: list[KnowledgeBase] = []
    suffix = uuid.uuid4().hex[:10]
    dsn = request.getfixturevalue("postgres_dsn") if request.param == "postgres" else ""

    def factory(index: IndexSettings = DEFAULT_INDEX_SETTINGS, **options: Any) -> KnowledgeBase:
        if request.param == "sqlite":
            kb = KnowledgeBase(tmp_path / "kb.db", index=index, **options)
        else:
            index = dataclasses.replace(index, dsn=dsn, qdrant_path=str(tmp_path / "qdrant"))
            kb = KnowledgeBase(index=index, index_name=f"kb_{suffix}", **options)
        opened.append(kb)
        return kb

    factory.backend = request.param  # type: ignore[attr-defined]
    yield factory
    for kb in opened:
        await kb.close()
