"""Searches during a background HNSW build: the graph built so far for the snapshot's slots it
holds, the int8 scan of the others, both rescored exactly, plus an exact scan of the rows
written since, find what an exact scan finds, at every step of the build.

Only `SQLiteTextIndex` has the in-memory HNSW path (`PostgresQdrantIndex` leaves vector
search to Qdrant), so these tests run on SQLite alone. The build is held between its chunks
(in place of its wait for the searches in flight, on the builder's thread only) so that every
moment of it is searched, including writes committed in the middle of it.
"""

from __future__ import annotations

import asyncio
import queue
import sqlite3
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from toolweave.storage.retrieval import Record, SQLiteTextIndex, _live_vectors
from toolweave.storage.retrieval._background import SearchGate
from toolweave.storage.retrieval._live_vectors import LiveVectors
from toolweave.storage.retrieval._running_build import RunningBuild
from toolweave.storage.retrieval.hnsw import HNSWVectors
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
    """Before each chunk the builder thread reports itself, then waits for one release (in
    place of its wait for the searches in flight, so searches are free to run meanwhile)."""
    monkeypatch.setattr(_live_vectors, "_BUILD_CHUNK", CHUNK)
    arrived: queue.Queue[str] = queue.Queue()
    go = threading.Semaphore(0)
    original_wait = SearchGate.wait_idle

    def gated_wait(self: SearchGate, stop: threading.Event) -> None:
        if threading.current_thread().name != "toolweave-hnsw":
            return original_wait(self, stop)
        arrived.put("add")
        go.acquire()
        return None

    monkeypatch.setattr(SearchGate, "wait_idle", gated_wait)
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
        assert index.vectors._running is not None  # every search of the build scans the copy
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
    assert index.vectors._running is None and index.vectors.build_progress == 0.0
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
    assert index.vectors._running is not None and index.vectors.build_progress == 2 * CHUNK / ROWS
    builder = index.vectors._halt_builder()  # what close() and the atexit hook do first
    assert builder is not None and index.vectors._running is None
    go.release()
    await asyncio.to_thread(builder.join)
    await index.close()
    assert index.vectors._running is None and index.vectors.current is None


def test_the_build_time_search_answers_as_the_exact_scan() -> None:
    """On 3,000 random unit vectors in two collections, with rows removed, a row replaced and
    rows written after the snapshot (some once the graph held them, the rest before the builder
    reached them), the build-time search returns exact scores of live rows only, at 0, 1,000,
    2,048 and 3,000 slots built: with no graph yet, or while the builder holds the graph, the
    exact top 10 (int8 rescored); with a graph, at least what the finished graph finds."""
    rng = np.random.default_rng(7)
    dim, count = 64, 3_000
    vectors = rng.standard_normal((count + 200, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    names = ["a" if n % 3 else "b" for n in range(count + 200)]
    removed = set(range(0, count, 7))
    queries = vectors[rng.integers(0, count + 200, 60)] + 0.3 * rng.standard_normal((60, dim))
    for built in (0, 1_000, 2_048, count):
        matrix = VectorMatrix(dim)
        matrix.add(list(range(count)), names[:count], vectors[:count])
        rowids, _, snapshot, code_names = matrix.snapshot()
        running = RunningBuild(matrix, rowids, snapshot, code_names)
        running.add_chunk(built // 2)
        matrix.remove(sorted(removed))  # what `LiveVectors.apply` does: the matrix, then drop
        matrix.add([5], ["a"], -vectors[5:6])  # replaced: its old vector must not answer
        matrix.add(list(range(count, count + 200)), names[count:], vectors[count:])
        running.drop([*removed, 5, *range(count, count + 200)])
        running.add_chunk(built)  # skips the gone rows
        finished = HNSWVectors(dim)  # the graph of the live rows, once built
        live = [rowid for rowid in range(count + 200) if rowid not in removed]
        finished.add(*matrix.rows(live), threads=1)
        matched = wanted = graph_matched = 0
        for query in queries.astype(np.float32):
            for collection in ("a", "b"):
                found, available = running.search(query, 10, collection)
                exact = matrix.search(query, 10, collection)
                if not built:
                    assert found == exact
                with running.adding:  # the builder is adding a chunk: the copy answers alone
                    assert running.search(query, 10, collection)[0] == exact
                scores = dict(matrix.search(query, count + 200, collection))
                assert all(scores[rowid] == score for rowid, score in found)  # exact, live
                assert available == matrix.count(collection)
                matched += len(set(found) & set(exact))
                wanted += len(exact)
                graph_matched += len(
                    {r for r, _ in finished.search(query, 10, collection)} & {r for r, _ in exact}
                )
        assert matched >= graph_matched, built
        old = running.search(vectors[5], 3, "a")[0]
        assert 5 not in [rowid for rowid, _ in old]  # its old vector is not its own any more
        assert len(running.graph) == len([s for s in range(built) if s not in removed | {5}])


def test_the_copy_scanned_from_its_last_slot_finds_nothing() -> None:
    """Right after the last chunk, before the graph takes over, the copy is scanned from its end
    (a whole number of 8,192-row blocks included)."""
    vectors = np.random.default_rng(3).standard_normal((8_192, 16)).astype(np.float32)
    scan = QuantizedSlots(vectors)
    assert len(scan.best_slots(vectors[0], np.ones(0, bool), 10, start=8_192)) == 0
    best = scan.best_slots(vectors[8_191], np.ones(2, bool), 1, start=8_190).tolist()
    assert best[0] == 8_191 and sorted(best) == [8_190, 8_191]  # `candidates(1)`, at most 2


async def test_a_build_stopped_inside_a_chunk_leaves_the_next_build_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process commits while the builder is inside a chunk: the reload stops that build
    and starts another; the stopped builder ends its chunk after the new build began, and only
    its own progress moves (before, it wrote the new build's, whose searches then skipped the
    first slots: `review5`)."""
    monkeypatch.setattr(_live_vectors, "_BUILD_CHUNK", CHUNK)
    in_add, release, second_held = threading.Event(), threading.Event(), threading.Event()
    original_add, original_halt = HNSWVectors.add, LiveVectors._halt_builder
    original_wait = SearchGate.wait_idle

    def add(self: HNSWVectors, *args: Any, **kwargs: Any) -> None:
        on_builder = threading.current_thread().name == "toolweave-hnsw"
        if on_builder and len(self) == 4 * CHUNK and not in_add.is_set():
            in_add.set()
            release.wait()  # inside the fifth chunk
        original_add(self, *args, **kwargs)

    def halt(self: LiveVectors) -> threading.Thread | None:
        builder = original_halt(self)
        if builder is not None:  # (the first load halts no build)
            release.set()  # the stopped builder ends its chunk once the reload went ahead
        return builder

    def wait_idle(self: SearchGate, stop: threading.Event) -> None:
        if threading.current_thread().name == "toolweave-hnsw" and in_add.is_set():
            if not stop.is_set():  # the new build, held before its first chunk
                second_held.wait()
            return None
        return original_wait(self, stop)

    monkeypatch.setattr(HNSWVectors, "add", add)
    monkeypatch.setattr(LiveVectors, "_halt_builder", halt)
    monkeypatch.setattr(SearchGate, "wait_idle", wait_idle)
    index = await building(tmp_path / "stale.db")
    await asyncio.to_thread(in_add.wait)
    other = sqlite3.connect(tmp_path / "stale.db", isolation_level=None)
    other.execute("INSERT OR REPLACE INTO records_meta (key, value) VALUES ('x', '1')")
    other.close()
    await index.vectors.loaded()  # stops the build, joins it, loads, starts another
    assert index.vectors.building and index.vectors.build_progress == 0.0
    found = await vector_ids(index, text(5), 3)
    assert found[0] == "r5" == (await exact_ids(index, text(5), 3))[0], found
    second_held.set()
    await index.close()
