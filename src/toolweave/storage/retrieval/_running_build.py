"""What the searches see of a background graph build under way (`_live_vectors`): the int8
copy of the build's snapshot, the graph built so far, and how to search both.

The builder adds the snapshot's slots in order, so the graph holds its first `built` slots; a
search asks it for those and scans the int8 copy only for the others (0.93 ms of CPU at 0% of
100k built, 0.16 at 90%). Every build has its own `RunningBuild`: a build stopped in the middle
of a chunk can only write into its own, never into the next build's.

A row removed or replaced since the snapshot must not fill the graph's answer: the builder
reads each slot's current collection code (-1 once its row is gone) just before adding it, and
a write queues its rows (`drop`) for whoever next holds `adding` to take out of the graph, so
no write waits for the builder. A search only tries `adding`: while the builder (at the
priority of background work) adds a chunk, the search scans the int8 copy of every slot
instead of waiting behind it.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable
from typing import Any

from toolweave.storage.retrieval.hnsw import HNSW_BUILD_THREADS, HNSWVectors
from toolweave.storage.retrieval.vectors import QuantizedSlots, VectorMatrix


class RunningBuild:
    """One background graph build of `matrix`'s snapshot (row ids, vectors, collection names by
    code): its int8 copy (`scan`) and its graph so far."""

    def __init__(
        self, matrix: VectorMatrix, rowids: Any, vectors: Any, names: dict[int, str]
    ) -> None:
        self.matrix = matrix
        self.rowids = rowids
        self.vectors = vectors
        self.names = names
        # Made before any search of the build: made by the builder, it took 0.4 s at 100k at
        # full priority, and searches meanwhile scanned float32 beside it (182 ms p50 at load
        # 14). Here it lengthens the load (or the write) that starts the build.
        self.scan = QuantizedSlots(vectors, matrix.slot_codes(0, len(vectors)))
        self.graph = HNSWVectors(matrix.dim)
        #: The snapshot's slots the graph holds (the first `built`).
        self.built = 0
        #: Held while the graph is changed or searched (usearch's Python index is not searched
        #: while it adds); searches only try it.
        self.adding = threading.Lock()
        self._dropped: deque[int] = deque()

    @property
    def progress(self) -> float:
        """The share of the snapshot's slots the graph holds."""
        return self.built / len(self.scan) if len(self.scan) else 0.0

    def drop(self, rowids: Iterable[int]) -> None:
        """Rows removed or replaced since the snapshot (the matrix already says so): taken out
        of the graph by the next holder of `adding`."""
        self._dropped.extend(rowids)

    def _take_out_dropped(self) -> None:
        rowids = []
        while self._dropped:
            rowids.append(self._dropped.popleft())
        if rowids:
            self.graph.remove(rowids)

    def add_chunk(self, end: int) -> None:
        """Add the snapshot's slots from `built` to `end` whose rows are still live (their
        codes read now, holding `adding`, after the rows written since are taken out)."""
        start = self.built
        with self.adding:
            self._take_out_dropped()
            codes = self.matrix.slot_codes(start, end)
            live = codes >= 0
            self.graph.add(
                self.rowids[start:end][live].tolist(),
                [self.names[int(code)] for code in codes[live]],
                self.vectors[start:end][live],
                threads=HNSW_BUILD_THREADS,
            )
            self.built = end

    def search(self, query: Any, k: int, collection: str) -> tuple[list[tuple[int, float]], int]:
        """The `k` nearest (row id, exact cosine) pairs of `collection` during the build: the
        graph's slots through the graph (unless the builder is adding: then through the int8
        copy too), the snapshot's others through the int8 copy (its best `candidates(k)`), both
        rescored exactly, and the rows written since the snapshot exactly."""
        import numpy as np

        matrix = self.matrix
        slots: list[Any] = []
        built = 0
        if self.adding.acquire(blocking=False):
            try:
                self._take_out_dropped()
                built = self.built
                if built:
                    hits = self.graph.search(query, k, collection)
                    slots.append(matrix.slots_of([rowid for rowid, _ in hits], below=built))
            finally:
                self.adding.release()
        mask = matrix.members(collection, built, len(self.scan))
        if mask is not None:
            slots.append(self.scan.best_slots(query, mask, k, start=built))
        found = matrix.rescored(query, np.concatenate(slots or [[]]).astype(np.int64), k)
        found += matrix.search(query, k, collection, start=len(self.scan))
        found.sort(key=lambda pair: -pair[1])
        return found[:k], matrix.count(collection)
