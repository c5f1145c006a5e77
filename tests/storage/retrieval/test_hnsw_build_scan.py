"""Searches during a background HNSW build: the int8 scan of the build's snapshot, rescored
exactly, plus an exact scan of the rows written since, find what an exact scan finds, at every
step of the build.

Only `SQLiteTextIndex` has the in-memory HNSW path (`PostgresQdrantIndex` leaves vector
search to Qdrant), so these tests run on SQLite alone. The build is held between its chunks
(a gate around the real `HNSWVectors.add`, on the builder's thread only) so that every
moment of it is searched, including writes committed in the middle of it.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from toolweave.storage.retrieval import Record, SQLiteTextIndex, _live_vectors
from toolweave.storage.retrieval._live_vectors import LiveVectors
from toolweave.storage.retrieval.hnsw import HNSW_BUILD_THREADS, HNSWVectors
from toolweave.storage.retrieval.vectors import QuantizedSlots, VectorMatrix

ROWS = 2_400
CHUNK = 400


def text(number: int) -> str:
    return f"note{number} topic{number % 17} shelf{number % 5} planted record"


async def vector_ids(index: SQLiteTextIndex, query: str, limit: int) -> list[str]:
    return [hit.record.id for hit in await index.search(query, limit=limit, mode="vector")]


async def exact_ids(index: SQLiteTextIndex, query: str, limit: int) -> list[str]:
    """What an exact scan of the whole matrix answers right now."""
    matrix = index.vectors.current
    assert isinstance(matrix, VectorMatrix)
    vector = index.embedder.embed([query])[0]
    rowids = [rowid for rowid, _ in matrix.search(vector, limit, "default")]
    ids = await index.db.run(
        lambda c: dict(
            c.execute(
                f"SELECT rowid, id FROM {index.vectors.table} WHERE rowid IN"
                f" ({','.join('?' * len(rowids))})",
                rowids,
            ).fetchall()
        )
    )
    return [ids[rowid] for rowid in rowids]


@pytest.fixture
def gated(monkeypatch: pytest.MonkeyPatch) -> tuple[queue.Queue[str], threading.Semaphore]:
    """Each chunk the builder thread adds reports itself, then waits for one release (not the
    replay at takeover, which runs holding the lock searches take)."""
    monkeypatch.setattr(_live_vectors, "_BUILD_CHUNK", CHUNK)
    arrived: queue.Queue[str] = queue.Queue()
    go = threading.Semaphore(0)
    original_add = HNSWVectors.add

    def gated_add(self: HNSWVectors, *args: Any, **kwargs: Any) -> None:
        chunk = kwargs.get("threads") == HNSW_BUILD_THREADS
        if chunk and threading.current_thread().name == "toolweave-hnsw":
            arrived.put("add")
            go.acquire()
        original_add(self, *args, **kwargs)

    monkeypatch.setattr(HNSWVectors, "add", gated_add)
    return arrived, go


async def building(path: Path) -> SQLiteTextIndex:
    """An index of `ROWS` records whose graph build has just started."""
    index = SQLiteTextIndex(path, "hash:64", hnsw_threshold=ROWS)
    await index.write([Record(f"r{n}", text(n)) for n in range(ROWS)])
    await index.search("warm", limit=1, mode="vector")  # loads the matrix, starts the build
    return index


async def test_every_moment_of_a_build_finds_what_an_exact_scan_finds(
    tmp_path: Path, gated: tuple[queue.Queue[str], threading.Semaphore]
) -> None:
    arrived, go = gated
    index = await building(tmp_path / "seg.db")
    builder = index.vectors._builder
    assert builder is not None

    def watch() -> None:
        builder.join()
        arrived.put("done")

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    probes = [0, 1, 999, 1_000, 1_500, 2_001, ROWS - 1]
    progress: list[float] = []
    steps = 0
    while await asyncio.to_thread(arrived.get) == "add":
        steps += 1
        progress.append(index.vectors.build_progress)
        assert index.vectors._scan is not None  # every search of the build scans the copy
        for number in probes:
            found = await vector_ids(index, text(number), 3)
            assert found[0] == f"r{number}", (steps, progress[-1], found)
            assert found[0] == (await exact_ids(index, text(number), 3))[0]
        if steps == 3:  # in the middle: a new row, a replaced row, a deleted one
            await index.write([Record("fresh", "a brand new memory"), Record("r1", "moved on")])
            await index.write(delete=[("default", "r999")])
            probes = [0, 1_000, 1_500, 2_001, ROWS - 1]
        if steps > 3:
            assert await vector_ids(index, "a brand new memory", 1) == ["fresh"]
            assert await vector_ids(index, "moved on", 1) == ["r1"]
            assert "r1" not in await vector_ids(index, text(1), 3)
            assert "r999" not in await vector_ids(index, text(999), 3)
        go.release()
    watcher.join()
    # Searched before the first chunk, and after each of the six but the last.
    assert progress == [i * CHUNK / ROWS for i in range(ROWS // CHUNK)]
    assert isinstance(index.vectors.current, HNSWVectors)
    assert index.vectors._scan is None and index.vectors.build_progress == 0.0
    assert await vector_ids(index, "moved on", 1) == ["r1"]
    assert "r999" not in await vector_ids(index, text(999), 3)
    await index.close()


async def test_a_build_stopped_midway_drops_its_scan(
    tmp_path: Path, gated: tuple[queue.Queue[str], threading.Semaphore]
) -> None:
    """Closing in the middle of a build stops it; its int8 copy is never searched after."""
    arrived, go = gated
    index = await building(tmp_path / "stop.db")
    for _ in range(2):
        await asyncio.to_thread(arrived.get)
        go.release()
    await asyncio.to_thread(arrived.get)
    assert index.vectors._scan is not None and index.vectors.build_progress == 2 * CHUNK / ROWS
    builder = index.vectors._halt_builder()  # what close() and the atexit hook do first
    assert builder is not None and index.vectors._scan is None
    go.release()
    await asyncio.to_thread(builder.join)
    await index.close()
    assert index.vectors._scan is None and index.vectors.current is None


def test_the_int8_scan_rescored_answers_as_the_exact_scan() -> None:
    """On 3,000 random unit vectors in two collections, with rows removed and rows written
    after the snapshot, the build-time search returns the exact top 10, scores included."""
    rng = np.random.default_rng(7)
    dim, count = 64, 3_000
    vectors = rng.standard_normal((count + 200, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    matrix = VectorMatrix(dim)
    names = ["a" if n % 3 else "b" for n in range(count + 200)]
    matrix.add(list(range(count)), names[:count], vectors[:count])
    _, _, snapshot, _ = matrix.snapshot()
    scan = QuantizedSlots(snapshot)
    matrix.remove(list(range(0, count, 7)))
    matrix.add(list(range(count, count + 200)), names[count:], vectors[count:])
    queries = vectors[rng.integers(0, count + 200, 60)] + 0.3 * rng.standard_normal((60, dim))
    for query in queries.astype(np.float32):
        for collection in ("a", "b"):
            found, available = LiveVectors._scanned_search(matrix, scan, query, 10, collection)
            assert found == matrix.search(query, 10, collection)
            assert available == matrix.count(collection)
            assert not {rowid for rowid, _ in found} & set(range(0, count, 7))
