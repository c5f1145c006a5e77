"""The postings `SQLiteTextIndex` scores words from (`_sqlite_bm25.Postings`): kept in memory,
they follow this index's writes, another process's writes and deletions, and score exactly as
postings read afresh from the file; a query's words are matched to FTS5's own terms.
"""

from __future__ import annotations

import random
from pathlib import Path

from toolweave.storage.retrieval import Record, SQLiteTextIndex
from toolweave.storage.retrieval._sqlite_bm25 import Postings

WORDS = ["tea", "garden", "乌龙茶", "花园", "notes", "spring", "running", "runs", "report"]
WORDS += ["weekly", "报告", "喝"]
QUERIES = ["tea garden", "乌龙茶 花园", "running report", "weekly notes 喝", "runs spring tea"]


def fresh_scores(index: SQLiteTextIndex, collection: str, query: str) -> dict[int, float]:
    """bm25 by rowid from postings read afresh from the file."""
    from toolweave.storage.text import keyword_terms

    postings = Postings(index.name)
    rowids, scores = index.db.run_sync(
        lambda conn: postings.scores(conn, collection, keyword_terms(query), 64)
    )
    return dict(zip(rowids.tolist(), scores.tolist(), strict=True))


async def kept_scores(index: SQLiteTextIndex, collection: str, query: str) -> dict[int, float]:
    """bm25 by rowid from the index's own postings, as its keyword search reads them."""
    from toolweave.storage.text import keyword_terms

    postings = index._postings
    rowids, scores = await index.db.run(
        lambda conn: postings.scores(conn, collection, keyword_terms(query), 64)
    )
    return dict(zip(rowids.tolist(), scores.tolist(), strict=True))


async def agree(index: SQLiteTextIndex, collections: list[str]) -> None:
    """The index's kept scores equal scores from postings read afresh, for every query."""
    for collection in collections:
        for query in QUERIES:
            kept = await kept_scores(index, collection, query)
            fresh = fresh_scores(index, collection, query)
            assert kept.keys() == fresh.keys()
            for rowid, score in fresh.items():
                assert abs(kept[rowid] - score) < 1e-9


def text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 9)))


async def test_kept_postings_follow_writes_and_score_as_read_afresh(tmp_path: Path) -> None:
    """Writes, replacements and deletions by this index (small ones counted into the kept
    postings, a rowid used again after the newest row was deleted) and by another index on the
    same file (which makes the first read everything again) leave the kept scores equal to
    scores from postings read afresh, in every collection."""
    rng = random.Random(7)
    path = tmp_path / "postings.db"
    index = SQLiteTextIndex(path, "hash:64")
    other = SQLiteTextIndex(path, "hash:64")
    collections = ["a", "b"]

    await index.write(
        [Record(f"r{i}", text(rng), collection=rng.choice(collections)) for i in range(60)]
    )
    await agree(index, collections)
    for step in range(12):
        writer = other if step % 4 == 3 else index
        upsert = [
            Record(f"r{rng.randrange(80)}", text(rng), collection=rng.choice(collections))
            for _ in range(rng.randint(0, 4))
        ]
        upsert = list({(r.collection, r.id): r for r in upsert}.values())
        gone = [(rng.choice(collections), f"r{rng.randrange(80)}") for _ in range(2)]
        await writer.write(upsert, gone)
        if step == 5:
            await index.delete_where("b", {"missing": None})
        await agree(index, collections)
    newest = await index.find("a", order_by=None)
    await index.write(delete=[("a", newest[-1].id)])
    await index.write([Record("again", "tea tea garden", collection="a")])
    await agree(index, collections)
    await other.close()
    await index.close()


async def test_query_words_match_the_terms_fts5_indexed(tmp_path: Path) -> None:
    """Porter as FTS5 runs it ("technology" is "technolog", not PyStemmer's "technologi"),
    diacritics removed, case folded: each query finds its record by its words."""
    index = SQLiteTextIndex(tmp_path / "terms.db", "hash:64")
    await index.write(
        [
            Record("tech", "Technologies of the ancient world"),
            Record("cafe", "A café in Montréal"),
            Record("other", "A garden in spring"),
        ]
    )
    for query, expected in [("technology", "tech"), ("CAFE montreal", "cafe")]:
        hits = await index.keyword_search(query, limit=3)
        assert [h.record.id for h in hits] == [expected]
        assert hits[0].keyword_score is not None and hits[0].keyword_score > 0
    await index.close()


async def test_max_query_terms_is_a_checked_setting(tmp_path: Path) -> None:
    import pytest

    with pytest.raises(ValueError, match="max_query_terms"):
        SQLiteTextIndex(tmp_path / "zero.db", "hash:64", max_query_terms=0)


async def test_a_word_nearly_every_record_holds_is_left_out_beside_rarer_ones(
    tmp_path: Path,
) -> None:
    """Past `EVERYWHERE` records, a word more than half the collection holds (idf at its floor)
    adds no candidates to a query that has other words; alone, it still finds records."""
    from toolweave.storage.retrieval._pg_bm25 import EVERYWHERE

    index = SQLiteTextIndex(tmp_path / "common.db", "hash:64")
    filler = [Record(f"n{i}", f"weekly notes number {i}") for i in range(EVERYWHERE + 10)]
    rare = [Record(f"z{i}", f"zorblax notes {i}") for i in range(3)]
    await index.write(filler + rare)
    rare_rowids = set(fresh_scores(index, "default", "zorblax notes"))
    assert len(rare_rowids) == 3
    assert len(fresh_scores(index, "default", "notes")) == len(filler) + len(rare)
    hits = await index.keyword_search("zorblax notes", limit=10)
    assert {h.record.id for h in hits[:3]} == {"z0", "z1", "z2"}
    await index.close()
