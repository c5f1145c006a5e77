"""The postings `PostgresQdrantIndex` keeps in memory (`_pg_postings`): they follow every write to
the table, this index's and another process's (the trigger's write counter), and score as
postings read afresh do; a filtered search still finds the best records that pass the filter.
"""

from __future__ import annotations

import random
import uuid
from pathlib import Path

from toolweave.storage.retrieval import PostgresQdrantIndex, Record
from toolweave.storage.retrieval._pg_postings import FILTERED_CHUNK

WORDS = ["tea", "garden", "river", "stone", "lamp", "paper", "cloud", "horse", "茶", "花园"]


def text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 8)))


async def scores(index: PostgresQdrantIndex, query: str) -> dict[str, float]:
    hits = await index.keyword_search(query, limit=1_000, collection="c")
    return {hit.record.id: round(hit.keyword_score or 0.0, 9) for hit in hits}


async def test_kept_postings_follow_another_writers_writes_and_score_as_read_afresh(
    postgres_dsn: str, tmp_path: Path
) -> None:
    name = f"post_{uuid.uuid4().hex[:10]}"

    def opened(folder: str) -> PostgresQdrantIndex:
        return PostgresQdrantIndex(
            postgres_dsn, "hash", qdrant_path=str(tmp_path / folder), name=name
        )

    rng = random.Random(7)
    reader, writer = opened("a"), opened("b")
    try:
        await writer.write([Record(f"r{i}", text(rng), collection="c") for i in range(60)])
        before = await scores(reader, "tea garden")
        assert before
        await writer.write(
            [Record(f"r{i}", "tea tea tea", collection="c") for i in range(5)]
            + [Record(f"n{i}", "garden river", collection="c") for i in range(4)],
            delete=[("c", "r10"), ("c", "r11")],
        )
        after = await scores(reader, "tea garden")
        assert {"n0", "n1", "n2", "n3"} <= after.keys()
        assert "r10" not in after and "r11" not in after
        assert after != before
        fresh = opened("c")
        try:
            assert await scores(fresh, "tea garden") == after
        finally:
            await fresh.close()
        await reader.write([Record("own", "tea garden river", collection="c")])
        assert "own" in await scores(reader, "tea garden")
    finally:
        await reader.close()
        await writer.close()


async def test_a_filtered_search_reads_past_the_best_records_until_enough_pass(
    postgres_dsn: str, tmp_path: Path
) -> None:
    index = PostgresQdrantIndex(
        postgres_dsn,
        "hash",
        qdrant_path=str(tmp_path / "q"),
        name=f"filt_{uuid.uuid4().hex[:10]}",
    )
    try:
        best = [
            Record(f"b{i}", "lamp lamp lamp", {"kind": "other"}, collection="c")
            for i in range(FILTERED_CHUNK + 5)
        ]
        wanted = [
            Record(f"w{i}", "lamp and many other words here", {"kind": "w"}, "c") for i in range(3)
        ]
        await index.write(best + wanted)
        hits = await index.keyword_search("lamp", limit=2, collection="c", where={"kind": "w"})
        assert [hit.record.id for hit in hits] == ["w0", "w1"]
    finally:
        await index.close()
