"""The vectors of one `SQLiteTextIndex`, held in memory and kept in step with its file.

They load on the first vector search (an exact `VectorMatrix`), follow this index's own writes
as they commit, and reload when another process commits (seen through `PRAGMA data_version`).
Loading and applying a write both run on the database's worker thread, so they happen in
commit order and no write can fall between reading the rows and installing what was read.

From `hnsw_threshold` vectors on, an HNSW graph takes over from the exact scan, which reads
every vector per query (10 ms at 100k, 100 ms at 1M). Building the graph takes seconds to a
minute or two on 2 cores, so it happens in a background thread at a lower priority than the
searches of its own process (`yield_to_searches`), which waits before each small chunk for the
index's searches in flight (`SearchGate`); the writes made meanwhile are replayed onto the
graph before it takes over. Meanwhile a search asks the graph built so far for the snapshot's
slots it holds, scans an int8 copy of the others (`QuantizedSlots`: of the vectors' principal
components, an eighth of the float32 scan's bytes at 256 dimensions), rescores both exactly,
and scans the rows written since the snapshot exactly (`RunningBuild`, one per build); the
copy is made before the build starts (0.15 s at 100k on an idle machine, within the load or
write that starts it), so no search of the
build scans float32 beside it. The graph is saved beside the file on close, with a fingerprint
of the rows it holds (including a counter every write transaction bumps, so a replaced row
cannot pass for the old one), and loaded instead of rebuilt next time if the fingerprint still
matches.

A script may end without closing its index while a build is still running: at interpreter exit
the daemon builder would be killed inside usearch's C++ code, which aborts the process
("terminate called without an active exception"). An `atexit` hook stops and joins every
running build first (it stops between chunks of `_BUILD_CHUNK` vectors), so `close()` is never
required to exit cleanly.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import sqlite3
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolweave.storage.retrieval._background import SearchGate, yield_to_searches
from toolweave.storage.retrieval._running_build import RunningBuild
from toolweave.storage.retrieval.hnsw import HNSWVectors, hnsw_available
from toolweave.storage.retrieval.vectors import VectorMatrix

if TYPE_CHECKING:
    from toolweave.storage.sqlite import SQLiteDatabase

logger = logging.getLogger(__name__)

WRITES_KEY = "writes"
"""The `<table>_meta` row every write transaction increments (part of the graph fingerprint)."""
_BUILD_CHUNK = 8
"""Vectors added to a graph between checks of the stop flag (a close waits at most one chunk)
and of the searches in flight (one chunk is what a search starting meanwhile runs beside, or
waits for before it searches the graph so far: 0.64 ms at 100k, 4.8 ms for 64; 8 cost 7.5%
more per vector than 64 in usearch, 4 cost 13%)."""
_LOAD_BATCH = 20_000


def count_write(conn: sqlite3.Connection, table: str) -> int:
    """Bump the write counter and return its new value; call inside every transaction that
    changes `table`'s rows."""
    row = conn.execute(
        f"INSERT INTO {table}_meta (key, value) VALUES (?, '1') ON CONFLICT (key)"
        " DO UPDATE SET value = CAST(value AS INTEGER) + 1 RETURNING value",
        (WRITES_KEY,),
    ).fetchone()
    return int(row[0])


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
        # Searches run in worker threads, writes and loads on the database's thread, the
        # graph's takeover in the builder thread; this lock keeps them from interleaving.
        self._lock = threading.Lock()
        self._generation = 0
        self._builder: threading.Thread | None = None
        self._build_failed = False
        # Set while a reload or close is under way: no build may start until `_load` ends.
        self._suspended = False
        self._stop = threading.Event()  # the running build's own stop flag
        self._touched: set[int] = set()
        # What searches see of the running build: its int8 copy and its graph so far.
        self._running: RunningBuild | None = None
        #: The index's searches in flight, which the builder lets finish before each chunk.
        self.gate = SearchGate()
        _INSTANCES.add(self)

    @property
    def building(self) -> bool:
        """Whether a graph is being built in the background (searches scan meanwhile)."""
        return self._builder is not None

    @property
    def build_progress(self) -> float:
        """The share of the vectors a running build has added to its graph so far."""
        running = self._running
        return running.progress if running is not None else 0.0

    @property
    def graph_path(self) -> Path:
        return Path(f"{self.db.path}.{self.table}.hnsw")

    def _graph_wanted(self, count: int) -> bool:
        return (
            self.hnsw_threshold is not None
            and count >= self.hnsw_threshold
            and self.db.path != ":memory:"
            and not self._build_failed
            and hnsw_available()
        )

    def fingerprint(self, conn: sqlite3.Connection) -> list[Any]:
        """What identifies the rows a graph was built from."""
        count, top, total = conn.execute(
            f"SELECT count(*), coalesce(max(rowid), 0), total(rowid) FROM {self.table}"
        ).fetchone()
        row = conn.execute(
            f"SELECT value FROM {self.table}_meta WHERE key = ?", (WRITES_KEY,)
        ).fetchone()
        writes = int(row[0]) if row else 0
        return [int(count), int(top), float(total), writes, self.embedder_name]

    # -- loading (the database's thread) --------------------------------------------------------

    async def loaded(self) -> VectorMatrix | HNSWVectors:
        """The vectors as of the last commit, by anyone; loaded (or reloaded) if need be."""
        async with self._load_lock:
            version = int(
                await self.db.run(lambda c: c.execute("PRAGMA data_version").fetchone()[0])
            )
            if self.current is not None and version == self._data_version:
                return self.current
            await self._stop_builder()
            return await self.db.run(self._load)

    def _load(self, conn: sqlite3.Connection) -> VectorMatrix | HNSWVectors:
        # The fingerprint first: a commit after it changes the version, so it is never missed.
        fingerprint = self.fingerprint(conn)
        version = int(conn.execute("PRAGMA data_version").fetchone()[0])
        matrix: VectorMatrix | HNSWVectors | None = None
        if self._graph_wanted(fingerprint[0]):
            matrix = HNSWVectors.load(self.graph_path, self.dim, fingerprint)
        if matrix is None:
            matrix = VectorMatrix(self.dim)
            cursor = conn.execute(
                f"SELECT rowid, collection, vector FROM {self.table} WHERE length(vector) > 0"
            )
            while batch := cursor.fetchmany(_LOAD_BATCH):
                _add_rows(matrix, batch)
        with self._lock:
            self.current, self.dirty = matrix, False
            self._data_version = version
            self._generation += 1
            self._suspended = self._build_failed = False
            self._maybe_build()
        return matrix

    # -- searching (worker threads) and writing (the database's thread) -------------------------

    def search(self, query: Any, k: int, collection: str) -> tuple[list[tuple[int, float]], int]:
        """The `k` nearest (row id, cosine) pairs in `collection`, and how many it holds."""
        with self._lock:
            vectors = self.current
            if vectors is None:  # closed meanwhile
                return [], 0
            if isinstance(vectors, VectorMatrix) and self._running is not None:
                return self._running.search(query, k, collection)
            return vectors.search(query, k, collection), vectors.count(collection)

    def apply(self, removed: list[int], added: list[tuple[int, str, bytes]]) -> None:
        """A write that just committed: rows removed, rows (row id, collection, BLOB) added.

        Runs on the database's thread right after COMMIT, so writes apply in commit order. It
        never raises (the write has committed): on failure the vectors are dropped and the
        next search reloads them from the rows."""
        with self._lock:
            vectors = self.current
            if vectors is None:  # not loaded yet: the first search reads these rows
                return
            try:
                if self._builder is not None:
                    self._touched.update(removed)
                    self._touched.update(a[0] for a in added)
                self.dirty = self.dirty or isinstance(vectors, HNSWVectors)
                vectors.remove(removed)
                if added:
                    _add_rows(vectors, added)
                if self._running is not None:  # after the matrix: see `_running_build`
                    self._running.drop([*removed, *(a[0] for a in added)])
                self._maybe_build()
            except Exception:
                logger.exception("updating the vectors of %s failed; reloading", self.table)
                self.current, self._data_version = None, None
                self._stop.set()
                self.gate.wake()
                self._builder = None
                self._drop_running()

    # -- the graph (a background thread) --------------------------------------------------------

    def _maybe_build(self) -> None:
        """Start building a graph if the exact matrix has grown enough (holding `_lock`)."""
        matrix = self.current
        if (
            self._builder is not None
            or self._suspended
            or not isinstance(matrix, VectorMatrix)
            or not self._graph_wanted(len(matrix))
        ):
            return
        rowids, _, vectors, names = matrix.snapshot()
        try:
            running = RunningBuild(matrix, rowids, vectors, names)
        except BaseException:
            matrix.release_snapshot()
            raise
        self._running = running
        self._touched = set()
        self._stop = stop = threading.Event()
        builder = threading.Thread(
            target=self._build,
            args=(self._generation, stop, running),
            name="toolweave-hnsw",
            daemon=True,
        )
        self._builder = builder
        try:
            builder.start()
        except BaseException:
            self._builder = None
            self._drop_running()
            matrix.release_snapshot()
            raise

    def _build(
        self,
        generation: int,
        stop: threading.Event,
        running: RunningBuild,
    ) -> None:
        graph: HNSWVectors | None = None
        failed = False
        try:
            graph = self._built_graph(stop, running)
        except Exception:  # the exact matrix keeps answering; say why there is no graph
            logger.exception("building the HNSW graph for %s failed", self.graph_path)
            failed = True
        with self._lock:
            if self._builder is not threading.current_thread():
                return  # stopped: `_stop_builder` released the snapshot
            self._builder = None
            self._drop_running()
            self._build_failed = self._build_failed or failed
            current = self.current
            if not isinstance(current, VectorMatrix):
                return
            current.release_snapshot()
            touched, self._touched = sorted(self._touched), set()
            if graph is None or stop.is_set() or generation != self._generation:
                return
            # Writes committed while the graph was built: replay them from the matrix.
            graph.remove(touched)
            rowids, collections, fresh = current.rows(touched)
            if rowids:
                graph.add(rowids, collections, fresh)
            self.current, self.dirty = graph, True

    def _built_graph(self, stop: threading.Event, running: RunningBuild) -> HNSWVectors | None:
        """The graph of the snapshot's slots whose rows are still live, added in chunks of
        `_BUILD_CHUNK` (usearch lets go of the GIL while it adds), each once the index's
        searches in flight end (`SearchGate`); None once `stop` is set."""
        yield_to_searches()
        count = len(running.rowids)
        for start in range(0, count, _BUILD_CHUNK):
            self.gate.wait_idle(stop)
            if stop.is_set():
                return None
            running.add_chunk(min(start + _BUILD_CHUNK, count))
        return running.graph

    def _drop_running(self) -> None:
        """Forget the build's int8 copy and graph so far (holding `_lock`, with the snapshot
        they copy): searches scan the matrix again."""
        self._running = None

    async def build_graph(self) -> bool:
        """Wait for the HNSW graph (starting its build if the store is large enough); False if
        this index searches exactly (below the threshold, no usearch, or in memory)."""
        await self.loaded()

        def start() -> threading.Thread | None:
            with self._lock:
                self._maybe_build()
                return self._builder

        builder = await asyncio.to_thread(start)
        if builder is not None:
            await asyncio.to_thread(builder.join)
        return isinstance(self.current, HNSWVectors)

    def _halt_builder(self) -> threading.Thread | None:
        """Tell the running build to stop and keep new ones from starting until `_load` (or
        ever, after close); the build's thread, for the caller to join."""
        with self._lock:
            self._suspended = True
            builder, self._builder = self._builder, None
            self._drop_running()
            if builder is None:
                return None
            self._stop.set()
            self.gate.wake()
            if isinstance(self.current, VectorMatrix):
                self.current.release_snapshot()
            return builder

    async def _stop_builder(self) -> None:
        builder = self._halt_builder()
        if builder is not None:
            await asyncio.to_thread(builder.join)

    async def close(self) -> None:
        """Stop a build still running, and save a graph changed since it was loaded (unless
        another process wrote since, which the graph would not hold)."""
        async with self._load_lock:
            await self._stop_builder()
            graph = self.current
            if isinstance(graph, HNSWVectors) and self.dirty:

                def state(conn: sqlite3.Connection) -> tuple[int, list[Any]]:
                    fingerprint = self.fingerprint(conn)  # first, as in `_load`
                    return int(conn.execute("PRAGMA data_version").fetchone()[0]), fingerprint

                version, fingerprint = await self.db.run(state)
                if version == self._data_version:
                    await asyncio.to_thread(graph.save, self.graph_path, fingerprint)
            with self._lock:
                self.current = None


def _add_rows(vectors: VectorMatrix | HNSWVectors, rows: Sequence[tuple[int, str, bytes]]) -> None:
    """Add (row id, collection, float32 BLOB) rows, as read from the table or just written; a
    row without a vector (an empty BLOB: the embedder failed) is left out."""
    import numpy as np

    rows = [r for r in rows if r[2]]
    if not rows:
        return
    vectors.add(
        [r[0] for r in rows],
        [r[1] for r in rows],
        np.frombuffer(b"".join(r[2] for r in rows), np.float32),
    )


_INSTANCES: weakref.WeakSet[LiveVectors] = weakref.WeakSet()


@atexit.register
def _stop_builds_at_exit() -> None:
    """Stop and join every running graph build before the interpreter kills daemon threads."""
    for live in list(_INSTANCES):
        builder = live._halt_builder()
        if builder is not None:
            builder.join()
