"""An index's background work yields to its searches (`_background`): the thread that builds
the HNSW graph and the one that reads the postings ahead run at `BACKGROUND_NICE` (Linux sets
it per thread), while the database's own thread, which serves the searches, keeps its
priority."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from toolweave.storage.retrieval import Record, SQLiteTextIndex, _sqlite_warm
from toolweave.storage.retrieval._background import BACKGROUND_NICE
from toolweave.storage.retrieval.hnsw import HNSWVectors

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="a nice value per thread is Linux's"
)
ROWS = 600


def own_nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


async def test_the_postings_are_read_ahead_behind_the_searches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[int, int]] = []
    original = _sqlite_warm.read_postings

    def read_postings(*args: Any) -> Any:
        seen.append((threading.get_native_id(), own_nice()))
        return original(*args)

    monkeypatch.setattr(_sqlite_warm, "read_postings", read_postings)
    path = tmp_path / "warm.db"
    writer = SQLiteTextIndex(path, "hash:64")
    await writer.write([Record(f"r{n}", f"note{n} about shelf{n % 7}") for n in range(ROWS)])
    await writer.close()
    seen.clear()  # the writer read its own postings ahead too

    index = SQLiteTextIndex(path, "hash:64")
    assert await index.warm_postings() > 0
    ((reader, nice),) = seen
    assert nice == BACKGROUND_NICE
    assert await index.db.run(lambda _: threading.get_native_id()) != reader
    assert await index.db.run(lambda _: own_nice()) == own_nice()  # searches' thread untouched
    assert [h.record.id for h in await index.keyword_search("note5", limit=1)] == ["r5"]
    await index.close()


async def test_the_graph_is_built_behind_the_searches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[int] = []
    original = HNSWVectors.add

    def add(self: HNSWVectors, *args: Any, **kwargs: Any) -> None:
        if threading.current_thread().name == "toolweave-hnsw":
            seen.append(own_nice())
        original(self, *args, **kwargs)

    monkeypatch.setattr(HNSWVectors, "add", add)
    index = SQLiteTextIndex(tmp_path / "graph.db", "hash:64", hnsw_threshold=ROWS)
    await index.write([Record(f"r{n}", f"note{n} about shelf{n % 7}") for n in range(ROWS)])
    assert await index.build_graph()
    assert seen and set(seen) == {BACKGROUND_NICE}
    assert own_nice() != BACKGROUND_NICE  # the caller's thread keeps its priority
    await index.close()
