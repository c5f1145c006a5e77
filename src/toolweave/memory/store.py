"""Where memories are stored: SQLite by default, Postgres + Qdrant with a DSN (`IndexSettings`).

Both are a `toolweave.storage` `TextIndex`, one collection per user, with B-tree indexes on
the payload fields every write filters by (content hash, type).
"""

from __future__ import annotations

from typing import Any

from toolweave.memory import _codec
from toolweave.memory.errors import MemoryArgumentError
from toolweave.storage.retrieval import Embedder, TextIndex
from toolweave.storage.retrieval.backend import IndexSettings, open_index

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
    path: str | Any, embedder: Embedder | str, settings: IndexSettings, table: str = DEFAULT_TABLE
) -> TextIndex:
    """The memory index (`open_index`) with the payload fields every memory write filters by."""
    return open_index(
        path, embedder, name=table, settings=settings, indexed_fields=_codec.INDEXED_FIELDS
    )
