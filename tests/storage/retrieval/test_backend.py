"""`open_index` chooses the backend by one rule for memory, the knowledge base and the host;
`IndexSettings` carries that choice and the index's tuning to all three."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from toolweave.errors import ConfigError
from toolweave.kb import KnowledgeBase
from toolweave.memory import MemoryManager
from toolweave.storage.retrieval import (
    DEFAULT_INDEX_SETTINGS,
    EmbedRetry,
    IndexSettings,
    PostgresQdrantIndex,
    SQLiteTextIndex,
    check_backend,
    open_index,
)


def test_the_rule_refuses_half_a_scale_out_backend() -> None:
    assert check_backend(None) is False
    assert check_backend("", "") is False
    assert check_backend("postgresql://x", "http://q:6333") is True
    assert check_backend("postgresql://x", qdrant_path="/tmp/q") is True
    with pytest.raises(ConfigError, match="qdrant_url/qdrant_path need dsn="):
        check_backend(None, "http://q:6333")
    with pytest.raises(ConfigError, match="dsn= needs a vector store"):
        check_backend("postgresql://x")
    with pytest.raises(ConfigError, match="not both"):
        check_backend("postgresql://x", "http://q:6333", "/tmp/q")


async def test_embedded_by_default_with_its_indexed_fields(tmp_path: Path) -> None:
    index = open_index(tmp_path / "i.db", "hash", name="things", indexed_fields=["kind"])
    assert isinstance(index, SQLiteTextIndex)
    names = await index.db.run(
        lambda c: [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='index'")]
    )
    assert "things_by_kind" in names
    await index.close()


async def test_scale_out_with_dsn_and_qdrant(tmp_path: Path, postgres_dsn: str) -> None:
    index = open_index(
        tmp_path / "unused.db",
        "hash",
        name="backend_choice",
        settings=IndexSettings(dsn=postgres_dsn, qdrant_path=str(tmp_path / "qdrant")),
    )
    assert isinstance(index, PostgresQdrantIndex)
    assert await index.count() == 0
    assert not (tmp_path / "unused.db").exists()
    await index.close()


def test_index_settings_check_every_field_when_made() -> None:
    assert IndexSettings() == DEFAULT_INDEX_SETTINGS and not DEFAULT_INDEX_SETTINGS.scale_out
    assert IndexSettings(dsn="postgresql://x", qdrant_url="http://q:6333").scale_out
    cases: list[tuple[dict[str, Any], str]] = [
        ({"qdrant_url": "http://q:6333"}, "qdrant_url/qdrant_path need dsn="),
        ({"dsn": "postgresql://x"}, "dsn= needs a vector store"),
        ({"hnsw_threshold": -1}, r"IndexSettings.hnsw_threshold .* \(or None to"),
        ({"hnsw_threshold": True}, "IndexSettings.hnsw_threshold"),
        ({"max_query_terms": 0}, "IndexSettings.max_query_terms must be a positive integer"),
        ({"embed_retry": 3}, r"IndexSettings.embed_retry must be an EmbedRetry\(attempts="),
    ]
    for fields, message in cases:
        with pytest.raises(ConfigError, match=message):
            IndexSettings(**fields)
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT_INDEX_SETTINGS.max_query_terms = 1  # type: ignore[misc]
    with pytest.raises(ConfigError, match=r"open_index\(settings=...\) must be an IndexSettings"):
        open_index(":memory:", "hash", name="x", settings={"dsn": None})  # type: ignore[arg-type]


async def test_open_index_applies_the_settings_to_the_index(tmp_path: Path) -> None:
    retry = EmbedRetry(attempts=1, backoff=0.0, recheck=5.0)
    settings = IndexSettings(hnsw_threshold=None, max_query_terms=7, embed_retry=retry)
    index = open_index(tmp_path / "tuned.db", "hash", name="tuned", settings=settings)
    assert isinstance(index, SQLiteTextIndex)
    assert (index.hnsw_threshold, index.max_query_terms, index.guard.retry) == (None, 7, retry)
    await index.close()


async def test_memory_and_the_knowledge_base_take_settings_or_a_shared_index(
    tmp_path: Path,
) -> None:
    settings = IndexSettings(hnsw_threshold=10, max_query_terms=3)
    memory = MemoryManager(tmp_path / "m.db", embedder="hash", index=settings)
    kb = KnowledgeBase(tmp_path / "k.db", "hash", index=settings)
    for opened in (memory.index, kb.index):
        assert isinstance(opened, SQLiteTextIndex)
        assert (opened.hnsw_threshold, opened.max_query_terms) == (10, 3)
    other = MemoryManager(embedder="hash", index=memory.index)  # shared: not closed by `other`
    await other.add("共享的索引 shared index", "episodic")
    await other.close()
    assert [h.item.content for h in await memory.search("shared")] == ["共享的索引 shared index"]
    await memory.close()
    await kb.close()
    for build in (MemoryManager, KnowledgeBase):
        with pytest.raises(ConfigError, match=rf"{build.__name__}\(index=...\) must be an Index"):
            build(index="postgresql://x")
