"""Errors the storage layer raises, each naming what is wrong and how to fix it."""

from __future__ import annotations


class StorageError(Exception):
    """Base of every storage error."""


class DimensionMismatch(StorageError, ValueError):
    """A store was opened with an embedder of another dimension than the one it was built with."""


class EmbedderUnavailable(StorageError, ValueError):
    """An embedder spec is malformed or names a model whose package is not installed."""


__all__ = ["DimensionMismatch", "EmbedderUnavailable", "StorageError"]
