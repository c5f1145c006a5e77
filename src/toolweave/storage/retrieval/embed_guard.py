"""Keyword-only search while the embedder is unreachable, and vectors made up once it is back.

A remote embedder (`openai-compat:`) can be down when an index opens, writes or searches. Each
call is retried with exponential backoff (`EmbedRetry`: `attempts` tries, `backoff` seconds
before the second, doubled each time); if every try fails the index does not fail: it writes
the records without vectors (their words are indexed as always), searches by keywords only
with a warning (`Hits.warning`, the knowledge base's and memory's results and `stats`), and
leaves the embedder alone for `recheck` seconds so that each search does not wait out the
retries again. The first embedding that succeeds after that (a search's query or a write)
clears the warning, and the index then embeds every record stored without a vector.

Only `EmbeddingFailed` (a refused or unreachable endpoint) degrades this way; a local model
that cannot load is a configuration error and still raises.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from toolweave.storage.errors import ConfigError, EmbeddingFailed
from toolweave.storage.retrieval.embedders import Embedder, Vectors

logger = logging.getLogger(__name__)

DEFAULT_EMBED_ATTEMPTS = 3
"""Tries of one embedding call before the index falls back to keywords."""
MAX_EMBED_ATTEMPTS = 10
"""Most tries `EmbedRetry.attempts` accepts: the waits double, so 10 tries already wait 511 x
`backoff` seconds in all before the index falls back to keywords."""
DEFAULT_EMBED_BACKOFF = 0.5
"""Seconds before the second try; doubled before each further one (0.5 s, then 1 s)."""
DEFAULT_EMBED_RECHECK = 30.0
"""Seconds a failed embedder is left alone (searches run by keywords) before it is tried again."""
REEMBED_BATCH = 256
"""Records stored without a vector that one re-embedding step reads and embeds."""


@dataclass(frozen=True, slots=True)
class EmbedRetry:
    """How an index retries its embedder and how long it then searches by keywords only."""

    attempts: int = DEFAULT_EMBED_ATTEMPTS
    backoff: float = DEFAULT_EMBED_BACKOFF
    recheck: float = DEFAULT_EMBED_RECHECK

    def __post_init__(self) -> None:
        if not isinstance(self.attempts, int) or isinstance(self.attempts, bool):
            raise ConfigError(f"EmbedRetry.attempts must be an integer >= 1, not {self.attempts!r}")
        if not 1 <= self.attempts <= MAX_EMBED_ATTEMPTS:
            raise ConfigError(
                f"EmbedRetry.attempts must be from 1 to {MAX_EMBED_ATTEMPTS} (each wait doubles"
                f" the one before), not {self.attempts}"
            )
        for field in ("backoff", "recheck"):
            value = getattr(self, field)
            if (
                not isinstance(value, int | float)
                or isinstance(value, bool)
                or not math.isfinite(value)
                or value < 0
            ):
                raise ConfigError(
                    f"EmbedRetry.{field} must be a finite number of seconds >= 0, not {value!r}"
                )


DEFAULT_EMBED_RETRY = EmbedRetry()


class EmbedderGuard:
    """One index's embedder behind retries, remembering an outage (thread-safe)."""

    def __init__(self, embedder: Embedder, retry: EmbedRetry = DEFAULT_EMBED_RETRY) -> None:
        self.embedder = embedder
        self.retry = retry
        #: Why the index searches by keywords only (None while the embedder answers).
        self.warning: str | None = None
        #: Records may be stored without a vector (set by a degraded write or found on open).
        self.missing = False
        self._failed_at = 0.0
        self._lock = threading.Lock()

    def available(self) -> bool:
        """Whether to call the embedder now: it answered last time, or `recheck` has passed."""
        with self._lock:
            return self.warning is None or time.monotonic() - self._failed_at >= self.retry.recheck

    def dim(self, recorded: int | None) -> int | None:
        """The embedder's dimension, or the one the store recorded if the embedder cannot be
        asked now; None when neither is known."""
        if self.available():
            try:
                return self.embedder.dim
            except EmbeddingFailed as exc:
                self._failed(exc)
        return recorded

    def embed(self, texts: Sequence[str]) -> Vectors | None:
        """The texts' vectors, or None when the embedder failed every try (or is being left
        alone after failing): the caller then goes on without vectors. Blocks while it backs
        off, so call it from a worker thread."""
        if not self.available():
            return None
        for attempt in range(self.retry.attempts):
            try:
                vectors = self.embedder.embed(texts)
            except EmbeddingFailed as exc:
                if attempt + 1 == self.retry.attempts:
                    self._failed(exc)
                    return None
                time.sleep(self.retry.backoff * 2**attempt)
                continue
            with self._lock:
                if self.warning is not None:
                    logger.warning("embedder %s answers again", self.embedder.name)
                self.warning = None
            return vectors
        return None  # attempts >= 1: not reached

    def _failed(self, exc: Exception) -> None:
        with self._lock:
            self._failed_at = time.monotonic()
            first = self.warning is None
            self.warning = (
                f"embedder {self.embedder.name} failed ({exc}); searching by keywords only and"
                f" storing new records without vectors until it answers (tried again after"
                f" {self.retry.recheck:g} s)"
            )
        if first:
            logger.warning("%s", self.warning)


T = TypeVar("T")


class Hits(list[T]):
    """Search results, with `warning` set when they were found by keywords only because the
    embedder failed (None otherwise)."""

    warning: str | None = None

    def __init__(self, hits: Iterable[T] = (), warning: str | None = None) -> None:
        super().__init__(hits)
        self.warning = warning
