"""Retrieval: one text index for memory and the knowledge base, full-text and vectors fused.

`TextIndex` is the protocol; `SQLiteTextIndex` is the embedded backend (FTS5 words and trigrams,
float32 vectors searched exactly or through an HNSW graph), `PostgresQdrantIndex` the scale-out
one (Postgres full text, Qdrant vectors); `open_index` chooses between them as an
`IndexSettings` says. Embedders turn text into vectors (`load_embedder`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "DEFAULT_EMBEDDER": "toolweave.storage.retrieval.embedders",
    "Embedder": "toolweave.storage.retrieval.embedders",
    "HashEmbedder": "toolweave.storage.retrieval.embedders",
    "MiniLMEmbedder": "toolweave.storage.retrieval.embedders",
    "OpenAICompatEmbedder": "toolweave.storage.retrieval.embedders",
    "WordLlamaEmbedder": "toolweave.storage.retrieval.embedders",
    "load_embedder": "toolweave.storage.retrieval.embedders",
    "EmbedRetry": "toolweave.storage.retrieval.embed_guard",
    "Hits": "toolweave.storage.retrieval.embed_guard",
    "HNSWVectors": "toolweave.storage.retrieval.hnsw",
    "check_backend": "toolweave.storage.retrieval.backend",
    "DEFAULT_INDEX_SETTINGS": "toolweave.storage.retrieval.backend",
    "IndexSettings": "toolweave.storage.retrieval.backend",
    "open_index": "toolweave.storage.retrieval.backend",
    "DEFAULT_COLLECTION": "toolweave.storage.retrieval.index",
    "IndexHit": "toolweave.storage.retrieval.index",
    "Record": "toolweave.storage.retrieval.index",
    "SearchMode": "toolweave.storage.retrieval.index",
    "TextIndex": "toolweave.storage.retrieval.index",
    "Where": "toolweave.storage.retrieval.index",
    "FUSION_POOL": "toolweave.storage.retrieval.fusion",
    "FusionWeights": "toolweave.storage.retrieval.fusion",
    "fuse_hits": "toolweave.storage.retrieval.fusion",
    "phrase_boost": "toolweave.storage.retrieval.fusion",
    "reciprocal_rank_fusion": "toolweave.storage.retrieval.index",
    "PostgresQdrantIndex": "toolweave.storage.retrieval.scale_index",
    "SQLiteTextIndex": "toolweave.storage.retrieval.sqlite_index",
    "VectorMatrix": "toolweave.storage.retrieval.vectors",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from toolweave.storage.retrieval.backend import (
        DEFAULT_INDEX_SETTINGS,
        IndexSettings,
        check_backend,
        open_index,
    )
    from toolweave.storage.retrieval.embed_guard import EmbedRetry, Hits
    from toolweave.storage.retrieval.embedders import (
        DEFAULT_EMBEDDER,
        Embedder,
        HashEmbedder,
        MiniLMEmbedder,
        OpenAICompatEmbedder,
        WordLlamaEmbedder,
        load_embedder,
    )
    from toolweave.storage.retrieval.fusion import (
        FUSION_POOL,
        FusionWeights,
        fuse_hits,
        phrase_boost,
    )
    from toolweave.storage.retrieval.hnsw import HNSWVectors
    from toolweave.storage.retrieval.index import (
        DEFAULT_COLLECTION,
        IndexHit,
        Record,
        SearchMode,
        TextIndex,
        Where,
        reciprocal_rank_fusion,
    )
    from toolweave.storage.retrieval.scale_index import PostgresQdrantIndex
    from toolweave.storage.retrieval.sqlite_index import SQLiteTextIndex
    from toolweave.storage.retrieval.vectors import VectorMatrix

__all__ = [
    "DEFAULT_COLLECTION",
    "DEFAULT_EMBEDDER",
    "DEFAULT_INDEX_SETTINGS",
    "FUSION_POOL",
    "EmbedRetry",
    "Embedder",
    "FusionWeights",
    "HNSWVectors",
    "HashEmbedder",
    "Hits",
    "IndexHit",
    "IndexSettings",
    "MiniLMEmbedder",
    "OpenAICompatEmbedder",
    "PostgresQdrantIndex",
    "Record",
    "SQLiteTextIndex",
    "SearchMode",
    "TextIndex",
    "VectorMatrix",
    "Where",
    "WordLlamaEmbedder",
    "check_backend",
    "fuse_hits",
    "load_embedder",
    "open_index",
    "phrase_boost",
    "reciprocal_rank_fusion",
]
