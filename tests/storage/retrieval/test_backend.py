"""`open_index` chooses the backend by one rule for memory, the knowledge base and the host."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolweave.errors import ConfigError
from toolweave.storage.retrieval import (
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
        dsn=postgres_dsn,
        qdrant_path=str(tmp_path / "qdrant"),
    )
    assert isinstance(index, PostgresQdrantIndex)
    assert await index.count() == 0
    assert not (tmp_path / "unused.db").exists()
    await index.close()
