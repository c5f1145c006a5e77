"""Where memories are stored: SQLite by default, Postgres + Qdrant with a DSN.

Both are a `toolweave.storage` `TextIndex`, one collection per user, with B-tree indexes on
the payload fields every write filters by (content hash, type).
"""

from __future__ import annotations

from typing import Any

from toolweave.memory import _codec
from toolweave.memory.errors import MemoryArgumentError
from toolweave.storage.retrieval import Embedder, PostgresQdrantIndex, SQLiteTextIndex, TextIndex
from toolweave.storage.retrieval.hnsw import DEFAULT_HNSW_THRESHOLD

MAX_USER_ID_CHARS = 200
DEFAULT_TABLE = "memories"


def check_user_id(user_id: str) -> str:
    if not isinstance(user_id, str) or not user_id.strip() or len(user_id) > MAX_USER_ID_CHARS:
        raise MemoryArgumentError(
            f"user_id must be a non-empty string of at most {MAX_USER_ID_CHARS} characters,"
            f" got {user_id!r}"
        )
    return user_id


def open_index(
    path: str | Any,
    embedder: Embedder | str,
    *,
    dsn: str | None,
    qdrant_url: str | None,
    qdrant_path: str | None,
    qdrant_api_key: str | None,
    table: str = DEFAULT_TABLE,
    hnsw_threshold: int | None = DEFAULT_HNSW_THRESHOLD,
) -> TextIndex:
    """The memory index: SQLite at `path`, or Postgres at `dsn` with Qdrant for vectors."""
    if dsn is None:
        if qdrant_url or qdrant_path:
            raise MemoryArgumentError("qdrant_url/qdrant_path need dsn='postgresql://...' too")
        return SQLiteTextIndex(
            path,
            embedder,
            name=table,
            indexed_fields=_codec.INDEXED_FIELDS,
            hnsw_threshold=hnsw_threshold,
        )
    if not (qdrant_url or qdrant_path):
        raise MemoryArgumentError(
            "dsn= needs a vector store: pass qdrant_url='http://host:6333' (or qdrant_path=... for"
            " Qdrant's local mode)"
        )
    return PostgresQdrantIndex(
        dsn,
        embedder,
        qdrant_url=qdrant_url,
        qdrant_path=qdrant_path,
        qdrant_api_key=qdrant_api_key,
        name=table,
        indexed_fields=_codec.INDEXED_FIELDS,
    )
