"""Storage plumbing every store shares: SQLite driven from async code, one store logic on SQLite
or Postgres, text utilities and files.

The stores themselves (sessions, memory, knowledge base, teams, quotas, query log, schedules)
live with their capability; this package holds only what they must not each write again: the
one way to use SQLite (`SQLiteDatabase`), `SQLStore` (`toolweave.storage.sql`, one store's logic
on SQLite or Postgres), the text utilities (CJK-aware token estimate and segmentation), the one
atomic write and the one frontmatter reader (`toolweave.storage.files`) and, in
`toolweave.storage.retrieval`, the search index memory and the knowledge base share. It imports
nothing of toolweave but the leaf `toolweave.errors`, so any layer may use it; numpy, the
segmenter, the embedders, psycopg and qdrant_client load inside functions, on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "SQLiteDatabase": "toolweave.storage.sqlite",
    "DimensionMismatch": "toolweave.storage.errors",
    "EmbedderUnavailable": "toolweave.storage.errors",
    "EmbeddingFailed": "toolweave.storage.errors",
    "FrontmatterError": "toolweave.storage.errors",
    "StorageError": "toolweave.storage.errors",
    "atomic_write": "toolweave.storage.files",
    "read_frontmatter": "toolweave.storage.files",
    "split_frontmatter": "toolweave.storage.files",
    "CJK": "toolweave.storage.text",
    "estimate_tokens": "toolweave.storage.text",
    "segment": "toolweave.storage.text",
    "segmented": "toolweave.storage.text",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from toolweave.storage.errors import (
        DimensionMismatch,
        EmbedderUnavailable,
        EmbeddingFailed,
        FrontmatterError,
        StorageError,
    )
    from toolweave.storage.files import atomic_write, read_frontmatter, split_frontmatter
    from toolweave.storage.sqlite import SQLiteDatabase
    from toolweave.storage.text import CJK, estimate_tokens, segment, segmented

__all__ = [
    "CJK",
    "DimensionMismatch",
    "EmbedderUnavailable",
    "EmbeddingFailed",
    "FrontmatterError",
    "SQLiteDatabase",
    "StorageError",
    "atomic_write",
    "estimate_tokens",
    "read_frontmatter",
    "segment",
    "segmented",
    "split_frontmatter",
]
