"""Errors the storage layer raises, each naming what is wrong and how to fix it.

They derive from the library's root (`toolweave.errors` imports nothing, so this package
stays at the bottom of the layers); bad arguments are `ConfigError`s, also `ValueError`s.
"""

from __future__ import annotations

from toolweave.errors import ConfigError, ToolweaveError


class StorageError(ToolweaveError):
    """Base of every storage failure that is not a bad argument."""


class DimensionMismatch(StorageError, ConfigError):
    """A store was opened with an embedder other than the one its vectors were made with."""


class EmbedderUnavailable(StorageError, ConfigError):
    """An embedder spec is malformed or names a model whose package is not installed."""


class EmbeddingFailed(StorageError):
    """An embeddings endpoint refused or failed; the message has its status and reason."""


__all__ = [
    "ConfigError",
    "DimensionMismatch",
    "EmbedderUnavailable",
    "EmbeddingFailed",
    "StorageError",
]
