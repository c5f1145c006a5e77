"""The graph builder waits for the index's searches in flight before each chunk (`SearchGate`
in `_background`), at most `DEFER_MAX` per chunk, and a close wakes it; the postings read ahead
waits the same way before each step.

A search is held in flight by a gate around the real `LiveVectors.search` (the vector side of
`SQLiteTextIndex.search`, inside the whole search call the builder waits for).
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from toolweave.storage.retrieval import Record, SQLiteTextIndex, _background, _live_vectors
from toolweave.storage.retrieval._background import SearchGate
from toolweave.storage.retrieval.hnsw import HNSWVectors

ROWS = 1_200
CHUNK = 100
FOREVER = 3_600.0
"""A bound no test reaches: the builder then leaves its wait only when a search ends or stops."""


def text(number: int) -> str:
    return f"note{number} topic{number % 17} shelf{number % 5} planted record"


class HeldSearch:
    """Holds every vector search of `index` inside the search path until `release` is set."""

    def __init__(self, index: SQLiteTextIndex, monkeypatch: pytest.MonkeyPatch) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        original = index.vectors.search

        def held(*args: Any) -> Any:
            self.entered.set()
            self.release.wait()
            return original(*args)

        monkeypatch.setattr(index.vectors, "search", held)


def wait_deferred(gate: SearchGate, count: int) -> None:
    """Block until the builder has waited for searches `count` times (it notifies each time)."""
    with gate.changed:
        gate.changed.wait_for(lambda: gate.deferrals >= count)


async def below_threshold(
    path: Path, monkeypatch: pytest.MonkeyPatch, defer: float
) -> SQLiteTextIndex:
    """An index one record short of building its graph, its vectors loaded; its builder will
    wait at most `defer` seconds before a chunk."""
    monkeypatch.setattr(_background, "DEFER_MAX", defer)
    index = SQLiteTextIndex(path, "hash:64", hnsw_threshold=ROWS)
    await index.write([Record(f"r{n}", text(n)) for n in range(ROWS - 1)])
    await index.search(text(5), limit=1, mode="vector")
    assert not index.vectors.building
    return index


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_live_vectors, "_BUILD_CHUNK", CHUNK)


async def test_a_search_in_flight_holds_the_builder_between_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = await below_threshold(tmp_path / "held.db", monkeypatch, FOREVER)
    gate = index.vectors.gate
    hold = HeldSearch(index, monkeypatch)
    search = asyncio.create_task(index.search(text(7), limit=3, mode="vector"))
    await asyncio.to_thread(hold.entered.wait)
    assert gate.searching == 1

    await index.write([Record(f"r{ROWS - 1}", text(ROWS - 1))])  # the build starts
    assert index.vectors.building
    await asyncio.to_thread(wait_deferred, gate, 1)
    assert index.vectors.building and index.vectors.build_progress == 0.0  # not one chunk
    assert gate.searching == 1 and not search.done()

    hold.release.set()
    assert (await search)[0].record.id == "r7"
    assert gate.searching == 0
    assert await index.build_graph()  # released: it goes on to the end
    assert isinstance(index.vectors.current, HNSWVectors)
    assert [hit.record.id for hit in await index.search(text(9), limit=1, mode="vector")] == ["r9"]
    await index.close()


async def test_the_build_completes_under_searches_that_never_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One search held for the whole build and a loop of others beside it: the gate is never
    idle, and every chunk goes ahead after `DEFER_MAX`."""
    index = await below_threshold(tmp_path / "busy.db", monkeypatch, 0.001)
    gate = index.vectors.gate
    hold = HeldSearch(index, monkeypatch)
    held = asyncio.create_task(index.search(text(3), limit=3, mode="vector"))
    await asyncio.to_thread(hold.entered.wait)
    await index.write([Record(f"r{ROWS - 1}", text(ROWS - 1))])
    builder = index.vectors._builder
    assert builder is not None
    done = asyncio.create_task(asyncio.to_thread(builder.join))
    searched = 0
    while not done.done():
        hits = await index.search(text(searched % ROWS), limit=3, mode="keyword")
        assert hits[0].record.id == f"r{searched % ROWS}"
        searched += 1
    assert gate.deferrals >= ROWS // CHUNK  # each chunk waited, none forever
    assert isinstance(index.vectors.current, HNSWVectors)
    hold.release.set()
    assert (await held)[0].record.id == "r3"
    await index.close()


async def test_close_during_a_held_build_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = await below_threshold(tmp_path / "close.db", monkeypatch, FOREVER)
    gate = index.vectors.gate
    with gate:  # a search in flight, as `FusedSearch.search` counts one
        await index.write([Record(f"r{ROWS - 1}", text(ROWS - 1))])
        builder = index.vectors._builder
        assert builder is not None
        await asyncio.to_thread(wait_deferred, gate, 1)
        await index.close()  # the stop wakes the builder's wait
        assert not builder.is_alive()
        assert index.vectors.current is None and not index.vectors.building


async def reopened(path: Path) -> SQLiteTextIndex:
    """An index of `ROWS` records, opened again: its postings are not held yet."""
    index = SQLiteTextIndex(path, "hash:64")
    await index.write([Record(f"r{n}", text(n)) for n in range(ROWS)])
    await index.close()
    return SQLiteTextIndex(path, "hash:64")


async def held_read(index: SQLiteTextIndex) -> asyncio.Task[int]:
    """The postings read ahead of `index`, started while a search is in flight (the caller
    holds the gate), once it waits for that search."""
    read = asyncio.create_task(index.warm_postings())
    await asyncio.to_thread(wait_deferred, index.vectors.gate, 1)
    return read


async def test_the_postings_reader_waits_for_the_searches_in_flight(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_background, "DEFER_MAX", FOREVER)
    index = await reopened(tmp_path / "read.db")
    gate = index.vectors.gate
    with gate:  # a search in flight
        read = await held_read(index)
        assert not read.done() and not index._postings.whole
    assert await read > ROWS  # released: it read every word
    assert index._postings.whole
    hits = await index.keyword_search(text(11), limit=1)
    assert [hit.record.id for hit in hits] == ["r11"]
    await index.close()


async def test_close_during_a_held_read_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_background, "DEFER_MAX", FOREVER)
    index = await reopened(tmp_path / "close-read.db")
    gate = index.vectors.gate
    with gate:
        read = await held_read(index)
        await index.close()  # the stop wakes the reader's wait
        await read
        assert not index._postings.whole


async def test_a_memory_search_holds_the_gate_for_its_whole_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memory manager scores, reads linked facts and ranks after the index's search: the
    builder must not start a chunk in between, so the gate spans the manager's whole call."""
    from toolweave.memory import MemoryManager, _search

    manager = MemoryManager(tmp_path / "memory.db", embedder="hash:64")
    await manager.add("Alice likes green tea", "semantic")
    await manager.add("Bob drinks green tea every morning", "episodic")
    gate = manager.index.search_gate
    assert gate is not None
    in_flight: list[int] = []
    original = _search._score

    def scored(*args: Any) -> Any:
        in_flight.append(gate.searching)
        return original(*args)

    monkeypatch.setattr(_search, "_score", scored)
    hits = await manager.search("green tea", memory_types=["semantic", "episodic"])
    assert len(hits) == 2 and in_flight == [1, 1]
    assert gate.searching == 0
    await manager.close()
