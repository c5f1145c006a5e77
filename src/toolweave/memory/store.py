"""Where memories are stored: SQLite by default, Postgres + Qdrant with a DSN (`open_index`).

Both are a `toolweave.storage` `TextIndex`, one collection per user, with B-tree indexes on
the payload fields every write filters by (content hash, type).
"""

from __future__ import annotations

from typing import Any

from toolweave.memory import _codec
from toolweave.memory.errors import MemoryArgumentError
from toolweave.storage.retrieval import Embedder, TextIndex
from toolweave.storage.retrieval.backend import open_index
from toolweave.storage.retrieval.embed_guard import DEFAULT_EMBED_RETRY, EmbedRetry
from toolweave.storage.retrieval.hnsw import DEFAULT_HNSW_THRESHOLD
from toolweave.storage.retrieval.index import DEFAULT_MAX_QUERY_TERMS

MAX_USER_ID_CHARS = 200
DEFAULT_TABLE = "memories"


def check_user_id(user_id: str) -> str:
    if (
        not isinstance(user_id, str)
        or not user_id.strip()
        or len(user_id) > MAX_USER_ID_CHARS
        or "\x00" in user_id
    ):
        raise MemoryArgumentError(
            f"user_id must be a non-empty string of at most {MAX_USER_ID_CHARS} characters"
            f" and no NUL character, got {user_id!r}"
        )
    return user_id


def open_memory_index(
    path: str | Any,
    embedder: Embedder | str,
    *,
    dsn: str | None,
    qdrant_url: str | None,
    qdrant_path: str | None,
    qdrant_api_key: str | None,
    table: str = DEFAULT_TABLE,
    hnsw_threshold: int | None = DEFAULT_HNSW_THRESHOLD,
    max_query_terms: int = DEFAULT_MAX_QUERY_TERMS,
    embed_retry: EmbedRetry = DEFAULT_EMBED_RETRY,
) -> TextIndex:
    """The memory index (`open_index`) with the payload fields every memory write filters by."""
    return open_index(
        path,
        embedder,
        name=table,
        dsn=dsn,
        qdrant_url=qdrant_url,
        qdrant_path=qdrant_path,
        qdrant_api_key=qdrant_api_key,
        indexed_fields=_codec.INDEXED_FIELDS,
        hnsw_threshold=hnsw_threshold,
        max_query_terms=max_query_terms,
        embed_retry=embed_retry,
    )
