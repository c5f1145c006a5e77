"""Storage plumbing every store shares: SQLite driven from async code, one store logic on SQLite
or Postgres, and retrieval.

The stores themselves (sessions, memory, knowledge base, teams, quotas, query log, schedules)
live with their capability; this package holds only what they must not each write again: the
one way to use SQLite (`SQLiteDatabase`), `SQLStore` (`toolweave.storage.sql`, which runs one
store's logic on SQLite or Postgres), the text utilities (CJK token estimate, jieba
segmentation), the embedders (`load_embedder`) and the retrieval index (`TextIndex`, embedded
`SQLiteTextIndex`, scale-out `PostgresQdrantIndex`) that memory and the knowledge base share.
It imports nothing else from toolweave but the leaf `toolweave.errors`, so any layer may use it;
numpy, jieba, the embedders, psycopg and qdrant_client load inside functions, on first use. See
docs/architecture.md, "Stores".
"""

from __future__ import annotations

from .embedders import (
    DEFAULT_EMBEDDER,
    Embedder,
    HashEmbedder,
    MiniLMEmbedder,
    OpenAICompatEmbedder,
    WordLlamaEmbedder,
    load_embedder,
)
from .errors import DimensionMismatch, EmbedderUnavailable, EmbeddingFailed, StorageError
from .hnsw import HNSWVectors
from .index import (
    DEFAULT_COLLECTION,
    Hit,
    Record,
    SearchMode,
    TextIndex,
    Where,
    fuse_hits,
    reciprocal_rank_fusion,
)
from .scale_index import PostgresQdrantIndex
from .sqlite import SQLiteDatabase
from .sqlite_index import SQLiteTextIndex
from .text import CJK, estimate_tokens, segment, segmented
from .vectors import VectorMatrix

__all__ = [
    "CJK",
    "DEFAULT_COLLECTION",
    "DEFAULT_EMBEDDER",
    "DimensionMismatch",
    "Embedder",
    "EmbedderUnavailable",
    "EmbeddingFailed",
    "HNSWVectors",
    "HashEmbedder",
    "Hit",
    "MiniLMEmbedder",
    "OpenAICompatEmbedder",
    "PostgresQdrantIndex",
    "Record",
    "SQLiteDatabase",
    "SQLiteTextIndex",
    "SearchMode",
    "StorageError",
    "TextIndex",
    "VectorMatrix",
    "Where",
    "WordLlamaEmbedder",
    "estimate_tokens",
    "fuse_hits",
    "load_embedder",
    "reciprocal_rank_fusion",
    "segment",
    "segmented",
]
