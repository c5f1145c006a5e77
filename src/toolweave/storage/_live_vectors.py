"""The vectors of one `SQLiteTextIndex`, held in memory and kept in step with its file.

They load on the first vector search (an exact `VectorMatrix`), follow this index's own writes
as they commit, and reload when another process commits (seen through `PRAGMA data_version`).
From `hnsw_threshold` vectors on, an HNSW graph takes over from the exact scan, which reads
every vector per query (10 ms at 100k, 100 ms at 1M). Building the graph takes ~25 s per 100k
vectors on 2 cores, so it happens in a background thread while the exact matrix keeps
answering; the writes made meanwhile are replayed onto the graph before it takes over. The
graph is saved beside the file on close, with a fingerprint of the rows it holds, and loaded
instead of rebuilt next time if the rows still match.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .hnsw import HNSWVectors, hnsw_available
from .vectors import VectorMatrix

if TYPE_CHECKING:
    from .sqlite import SQLiteDatabase

logger = logging.getLogger(__name__)

_BUILD_CHUNK = 5_000
"""Vectors added to a graph between checks of the stop flag (a close waits at most one chunk)."""
_LOAD_BATCH = 20_000


class LiveVectors:
    """The in-memory vector search of one index table: exact, then HNSW past the threshold."""

    def __init__(
        self,
        db: SQLiteDatabase,
        table: str,
        dim: int,
        embedder_name: str,
        hnsw_threshold: int | None,
    ) -> None:
        self.db = db
        self.table = table
        self.dim = dim
        self.embedder_name = embedder_name
        self.hnsw_threshold = hnsw_threshold
        self.current: VectorMatrix | HNSWVectors | None = None
        #: The graph changed since it was loaded or saved (close() saves it).
        self.dirty = False
        self._data_version: int | None = None
        self._load_lock = asyncio.Lock()
        # Searches, writes and the graph's takeover run in worker threads; this lock keeps
        # them from interleaving.
        self._lock = threading.Lock()
        self._generation = 0
        self._builder: threading.Thread | None = None
        self._stop = threading.Event()
        self._touched: set[int] = set()

    @property
    def graph_path(self) -> Path:
        return Path(f"{self.db.path}.{self.table}.hnsw")

    def _graph_wanted(self, count: int) -> bool:
        return (
            self.hnsw_threshold is not None
            and count >= self.hnsw_threshold
            and self.db.path != ":memory:"
            and hnsw_available()
        )

    def fingerprint(self, conn: sqlite3.Connection) -> list[Any]:
        """What identifies the rows a graph was built from (replacing a row changes it)."""
        count, top, total = conn.execute(
            f"SELECT count(*), coalesce(max(rowid), 0), total(rowid) FROM {self.table}"
        ).fetchone()
        return [int(count), int(top), float(total), self.embedder_name]

    # -- loading --------------------------------------------------------------------------------

    async def loaded(self) -> VectorMatrix | HNSWVectors:
        """The vectors as of the last commit, by anyone; loaded (or reloaded) if need be."""
        async with self._load_lock:
            version = int(
                await self.db.run(lambda c: c.execute("PRAGMA data_version").fetchone()[0])
            )
            if self.current is not None and version == self._data_version:
                return self.current
            await self._stop_builder()
            fingerprint = await self.db.run(self.fingerprint)
            graph = None
            if self._graph_wanted(fingerprint[0]):
                graph = await asyncio.to_thread(
                    HNSWVectors.load, self.graph_path, self.dim, fingerprint
                )
            matrix: VectorMatrix | HNSWVectors
            if graph is not None:
                matrix = graph
            else:
                matrix = VectorMatrix(self.dim)
                await self.db.run(lambda conn: self._read_rows(conn, matrix))
            with self._lock:
                self.current, self.dirty = matrix, False
                self._data_version = version
                self._generation += 1
                self._maybe_build()
            return matrix

    def _read_rows(self, conn: sqlite3.Connection, matrix: VectorMatrix) -> None:
        import numpy as np

        cursor = conn.execute(f"SELECT rowid, collection, vector FROM {self.table}")
        while batch := cursor.fetchmany(_LOAD_BATCH):
            matrix.add(
                [b[0] for b in batch],
                [b[1] for b in batch],
                np.frombuffer(b"".join(b[2] for b in batch), np.float32),
            )

    # -- searching and writing (worker threads) -------------------------------------------------

    def search(self, query: Any, k: int, collection: str) -> tuple[list[tuple[int, float]], int]:
        """The `k` nearest (row id, cosine) pairs in `collection`, and how many it holds."""
        with self._lock:
            assert self.current is not None
            return self.current.search(query, k, collection), self.current.count(collection)

    def apply(self, removed: list[int], added: list[tuple[int, str, bytes]]) -> None:
        """A committed write: rows removed, rows (row id, collection, vector BLOB) added."""
        import numpy as np

        with self._lock:
            vectors = self.current
            if vectors is None:
                return
            if self._builder is not None:
                self._touched.update(removed)
                self._touched.update(a[0] for a in added)
            self.dirty = self.dirty or isinstance(vectors, HNSWVectors)
            vectors.remove(removed)
            if added:
                vectors.add(
                    [a[0] for a in added],
                    [a[1] for a in added],
                    np.frombuffer(b"".join(a[2] for a in added), np.float32),
                )
            self._maybe_build()

    # -- the graph ------------------------------------------------------------------------------

    def _maybe_build(self) -> None:
        """Start building a graph in the background if the exact matrix has grown enough."""
        matrix = self.current
        if (
            self._builder is not None
            or not isinstance(matrix, VectorMatrix)
            or not self._graph_wanted(len(matrix))
        ):
            return
        rowids, codes, vectors, names = matrix.snapshot()
        self._touched = set()
        self._stop.clear()
        self._builder = threading.Thread(
            target=self._build,
            args=(self._generation, rowids, codes, vectors, names),
            name="toolweave-hnsw",
            daemon=True,
        )
        self._builder.start()

    def _build(
        self, generation: int, rowids: Any, codes: Any, vectors: Any, names: dict[int, str]
    ) -> None:
        try:
            self._build_graph(generation, rowids, codes, vectors, names)
        except Exception:  # the exact matrix keeps answering; say why there is no graph
            logger.exception("building the HNSW graph for %s failed", self.graph_path)
            with self._lock:
                if isinstance(self.current, VectorMatrix):
                    self.current.release_snapshot()

    def _build_graph(
        self, generation: int, rowids: Any, codes: Any, vectors: Any, names: dict[int, str]
    ) -> None:
        graph = HNSWVectors(self.dim)
        for start in range(0, len(rowids), _BUILD_CHUNK):
            if self._stop.is_set():
                return
            end = start + _BUILD_CHUNK
            live = codes[start:end] >= 0
            graph.add(
                rowids[start:end][live].tolist(),
                [names[int(c)] for c in codes[start:end][live]],
                vectors[start:end][live],
            )
        with self._lock:
            matrix = self.current
            if (
                self._stop.is_set()
                or generation != self._generation
                or not isinstance(matrix, VectorMatrix)
            ):
                return
            # Writes committed while the graph was built: replay them from the matrix.
            touched = sorted(self._touched)
            graph.remove(touched)
            rowids, collections, fresh = matrix.rows(touched)
            if rowids:
                graph.add(rowids, collections, fresh)
            self.current, self.dirty = graph, True
            matrix.release_snapshot()
            self._builder = None

    async def build_graph(self) -> bool:
        """Wait for the HNSW graph (starting its build if the store is large enough); False if
        this index searches exactly (below the threshold, no usearch, or in memory)."""
        await self.loaded()
        with self._lock:
            self._maybe_build()
            builder = self._builder
        if builder is not None:
            await asyncio.to_thread(builder.join)
        return isinstance(self.current, HNSWVectors)

    async def _stop_builder(self) -> None:
        builder = self._builder
        if builder is None:
            return
        self._stop.set()
        await asyncio.to_thread(builder.join)
        with self._lock:
            if isinstance(self.current, VectorMatrix):
                self.current.release_snapshot()
            self._builder = None

    async def close(self) -> None:
        """Stop a build still running, and save a graph changed since it was loaded."""
        await self._stop_builder()
        if isinstance(self.current, HNSWVectors) and self.dirty:
            fingerprint = await self.db.run(self.fingerprint)
            await asyncio.to_thread(self.current.save, self.graph_path, fingerprint)
        self.current = None
