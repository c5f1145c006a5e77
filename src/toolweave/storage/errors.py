"""Errors the storage layer raises, each naming what is wrong and how to fix it.

They derive from the library's root (`toolweave.errors` imports nothing, so this package
stays at the bottom of the layers); bad arguments are `ConfigError`s, also `ValueError`s.
"""

from __future__ import annotations

from pathlib import Path

from toolweave.errors import ConfigError, ToolweaveError


class StorageError(ToolweaveError):
    """Base of every storage failure that is not a bad argument."""


class DimensionMismatch(StorageError, ConfigError):
    """A store was opened with an embedder other than the one its vectors were made with."""


class EmbedderUnavailable(StorageError, ConfigError):
    """An embedder spec is malformed or names a model whose package is not installed."""


class EmbeddingFailed(StorageError):
    """An embeddings endpoint refused or failed; the message has its status and reason."""


class StoreUnavailable(StorageError):
    """The shared database (Postgres) does not answer; retry once it is back. Raised before the
    program's transaction began, nothing was written; a connection lost during it rolls back."""


class FrontmatterError(StorageError, ConfigError):
    """A Markdown file's YAML frontmatter is missing, too long or unreadable; `source` names the
    file and `reason` says what to change."""

    def __init__(self, source: str | Path, reason: str) -> None:
        super().__init__(f"{source}: {reason}")
        self.source = str(source)
        self.reason = reason


__all__ = [
    "ConfigError",
    "DimensionMismatch",
    "EmbedderUnavailable",
    "EmbeddingFailed",
    "FrontmatterError",
    "StorageError",
    "StoreUnavailable",
]
