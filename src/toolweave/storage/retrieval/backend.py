"""`open_index`: the one place that decides which `TextIndex` backend a store gets.

Memory, the knowledge base and the host all offer the same choice: the embedded SQLite index
(the default, one file) or Postgres for rows and full text with Qdrant for vectors (several
machines sharing one store). The choice and the index's tuning travel as one frozen
`IndexSettings`, which `MemoryManager(index=...)`, `KnowledgeBase(index=...)` and `open_index`
all take. The rule is written once here, so every caller refuses the same mistakes with the
same message: Qdrant without Postgres, Postgres without a vector store, or two vector stores at
once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from toolweave.storage.errors import ConfigError
from toolweave.storage.retrieval.embed_guard import DEFAULT_EMBED_RETRY, EmbedRetry
from toolweave.storage.retrieval.hnsw import DEFAULT_HNSW_THRESHOLD
from toolweave.storage.retrieval.index import (
    DEFAULT_MAX_QUERY_TERMS,
    DEFAULT_POSTINGS_KEPT,
    TextIndex,
    check_limit,
)

if TYPE_CHECKING:
    from toolweave.storage.retrieval.embedders import Embedder
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


@dataclass(frozen=True, slots=True)
class IndexSettings:
    """Which backend a `TextIndex` opens on and how it is tuned (`open_index`'s settings).

    Embedded SQLite by default; `dsn` with `qdrant_url` (a Qdrant server) or `qdrant_path`
    (Qdrant's local mode) selects Postgres + Qdrant (`check_backend` is the rule, checked when
    the settings are made). `qdrant_api_key` authenticates to a Qdrant server. From
    `hnsw_threshold` stored vectors on, the embedded backend searches an HNSW graph instead of
    the exact scan (None: always exact; Qdrant always searches its own graph).
    `max_query_terms` bounds the distinct words one keyword search scores, on both backends.
    `postings_kept` bounds the word postings the index keeps in memory, read ahead in the
    background, on both backends (`DEFAULT_POSTINGS_KEPT`).
    `embed_retry` is how a failing embedder is retried before the index stores and searches by
    keywords only (`EmbedRetry`).
    """

    dsn: str | None = None
    qdrant_url: str | None = None
    qdrant_path: str | None = None
    qdrant_api_key: str | None = None
    hnsw_threshold: int | None = DEFAULT_HNSW_THRESHOLD
    max_query_terms: int = DEFAULT_MAX_QUERY_TERMS
    postings_kept: int = DEFAULT_POSTINGS_KEPT
    embed_retry: EmbedRetry = DEFAULT_EMBED_RETRY

    def __post_init__(self) -> None:
        check_backend(self.dsn, self.qdrant_url, self.qdrant_path)
        threshold = self.hnsw_threshold
        if threshold is not None and (
            not isinstance(threshold, int) or isinstance(threshold, bool) or threshold < 0
        ):
            raise ConfigError(
                "IndexSettings.hnsw_threshold must be a number of vectors >= 0 (or None to"
                f" always search exactly), not {threshold!r}"
            )
        check_limit(self.max_query_terms, name="IndexSettings.max_query_terms")
        check_limit(self.postings_kept, name="IndexSettings.postings_kept")
        if not isinstance(self.embed_retry, EmbedRetry):
            raise ConfigError(
                "IndexSettings.embed_retry must be an EmbedRetry(attempts=, backoff=, recheck=),"
                f" not {self.embed_retry!r}"
            )

    @property
    def scale_out(self) -> bool:
        """True for Postgres + Qdrant, False for the embedded SQLite index."""
        return bool(self.dsn)


DEFAULT_INDEX_SETTINGS = IndexSettings()


def open_index(
    path: SQLiteDatabase | str | Path,
    embedder: Embedder | str = "auto",
    *,
    name: str,
    settings: IndexSettings = DEFAULT_INDEX_SETTINGS,
    indexed_fields: Sequence[str] = (),
) -> TextIndex:
    """The index under table `name`: SQLite at `path`, or Postgres + Qdrant as `settings` say.

    `indexed_fields` (the payload fields a store filters by on every write) get a B-tree index
    on both backends; the rest is `IndexSettings`.
    """
    if not isinstance(settings, IndexSettings):
        raise ConfigError(
            f"open_index(settings=...) must be an IndexSettings(...), not {settings!r}"
        )
    if not settings.scale_out:
        from toolweave.storage.retrieval.sqlite_index import SQLiteTextIndex

        return SQLiteTextIndex(
            path,
            embedder,
            name=name,
            indexed_fields=indexed_fields,
            hnsw_threshold=settings.hnsw_threshold,
            max_query_terms=settings.max_query_terms,
            embed_retry=settings.embed_retry,
            postings_kept=settings.postings_kept,
        )
    from toolweave.storage.retrieval.scale_index import PostgresQdrantIndex

    assert settings.dsn is not None
    return PostgresQdrantIndex(
        settings.dsn,
        embedder,
        qdrant_url=settings.qdrant_url or None,
        qdrant_path=settings.qdrant_path or None,
        qdrant_api_key=settings.qdrant_api_key,
        name=name,
        indexed_fields=indexed_fields,
        max_query_terms=settings.max_query_terms,
        embed_retry=settings.embed_retry,
        postings_kept=settings.postings_kept,
    )


def index_or_open(
    index: IndexSettings | TextIndex, owner: str, opener: Callable[[IndexSettings], TextIndex]
) -> tuple[TextIndex, bool]:
    """A store's `index=` argument as (the index, whether the store owns and closes it):
    settings are opened by `opener`, an open `TextIndex` is shared as it is."""
    if isinstance(index, IndexSettings):
        return opener(index), True
    if not isinstance(index, TextIndex):
        raise ConfigError(
            f"{owner}(index=...) must be an IndexSettings(...) (the index to open) or an open"
            f" TextIndex to share, not {type(index).__name__}"
        )
    return index, False
