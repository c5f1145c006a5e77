"""`open_index`: the one place that decides which `TextIndex` backend a store gets.

Memory, the knowledge base and the host all offer the same choice: the embedded SQLite index
(the default, one file) or Postgres for rows and full text with Qdrant for vectors (several
machines sharing one store). The rule is written once here, so every caller accepts the same
arguments and refuses the same mistakes with the same message: Qdrant without Postgres,
Postgres without a vector store, or two vector stores at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from toolweave.storage.errors import ConfigError
from toolweave.storage.retrieval.embed_guard import DEFAULT_EMBED_RETRY, EmbedRetry
from toolweave.storage.retrieval.hnsw import DEFAULT_HNSW_THRESHOLD
from toolweave.storage.retrieval.index import DEFAULT_MAX_QUERY_TERMS

if TYPE_CHECKING:
    from toolweave.storage.retrieval.embedders import Embedder
    from toolweave.storage.retrieval.index import TextIndex
    from toolweave.storage.sqlite import SQLiteDatabase


def check_backend(
    dsn: str | None, qdrant_url: str | None = None, qdrant_path: str | None = None
) -> bool:
    """True for the scale-out backend, False for the embedded one; a ConfigError naming the
    missing or extra argument when the combination is neither."""
    if not dsn:
        if qdrant_url or qdrant_path:
            raise ConfigError(
                "qdrant_url/qdrant_path need dsn='postgresql://...' too: the scale-out backend"
                " keeps rows and full text in Postgres and vectors in Qdrant"
            )
        return False
    if not (qdrant_url or qdrant_path):
        raise ConfigError(
            "dsn= needs a vector store: pass qdrant_url='http://host:6333' (or qdrant_path=..."
            " for Qdrant's local mode)"
        )
    if qdrant_url and qdrant_path:
        raise ConfigError("pass one of qdrant_url (a server) or qdrant_path (local mode), not both")
    return True


def open_index(
    path: SQLiteDatabase | str | Path,
    embedder: Embedder | str = "auto",
    *,
    name: str,
    dsn: str | None = None,
    qdrant_url: str | None = None,
    qdrant_path: str | None = None,
    qdrant_api_key: str | None = None,
    indexed_fields: Sequence[str] = (),
    hnsw_threshold: int | None = DEFAULT_HNSW_THRESHOLD,
    max_query_terms: int = DEFAULT_MAX_QUERY_TERMS,
    embed_retry: EmbedRetry = DEFAULT_EMBED_RETRY,
) -> TextIndex:
    """The index under table `name`: SQLite at `path`, or Postgres at `dsn` with Qdrant.

    `indexed_fields` get a B-tree index on both backends; `hnsw_threshold` applies to the
    embedded one (Qdrant always searches its own graph); `max_query_terms` and `embed_retry`
    (how a failing embedder is retried before search falls back to keywords) to both. See
    `check_backend` for the rule.
    """
    if not check_backend(dsn, qdrant_url, qdrant_path):
        from toolweave.storage.retrieval.sqlite_index import SQLiteTextIndex

        return SQLiteTextIndex(
            path,
            embedder,
            name=name,
            indexed_fields=indexed_fields,
            hnsw_threshold=hnsw_threshold,
            max_query_terms=max_query_terms,
            embed_retry=embed_retry,
        )
    from toolweave.storage.retrieval.scale_index import PostgresQdrantIndex

    assert dsn is not None
    return PostgresQdrantIndex(
        dsn,
        embedder,
        qdrant_url=qdrant_url or None,
        qdrant_path=qdrant_path or None,
        qdrant_api_key=qdrant_api_key,
        name=name,
        indexed_fields=indexed_fields,
        max_query_terms=max_query_terms,
        embed_retry=embed_retry,
    )
