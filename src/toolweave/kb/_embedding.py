"""The configured embedder, called in batches so ingest can report progress and time itself.

The storage index embeds what it writes in one call; wrapping the embedder lets the knowledge
base show a progress bar per batch (`toolweave kb ingest`) and measure how much of an ingest is
embedding (benchmarks/kb_ingest.py) without the index knowing about either.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from toolweave.kb.results import ProgressCallback
from toolweave.storage.retrieval.embedders import Embedder


class BatchedEmbedder:
    """The configured embedder, called in batches so the caller can show progress."""

    def __init__(self, inner: Embedder, batch_size: int) -> None:
        self.inner = inner
        self.batch_size = batch_size
        self.progress: ProgressCallback | None = None
        self.seconds = 0.0  # time spent embedding, for the ingest benchmark

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        began = time.perf_counter()
        parts = []
        for first in range(0, len(texts), self.batch_size):
            parts.append(self.inner.embed(texts[first : first + self.batch_size]))
            if self.progress is not None:
                self.progress(min(first + self.batch_size, len(texts)), len(texts))
        self.seconds += time.perf_counter() - began
        if not parts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.concatenate(parts)
