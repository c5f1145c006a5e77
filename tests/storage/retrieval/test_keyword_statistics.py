"""Keyword scores use the collection's own statistics, on both backends: a word most of one
user's records hold is still rare, and weighs as rare, among another user's; and the figures
follow the writes made after they were first read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from toolweave.storage.retrieval import Record

IndexFactory = Callable[..., Any]

WORDS = {
    "en": {"tea": "tea", "garden": "garden", "filler": "weekly report", "other": "green tea"},
    "zh": {"tea": "红茶", "garden": "花园", "filler": "每周 报告", "other": "喝 红茶"},
}


def records(lang: str) -> list[Record]:
    """User "b": one record with "tea", three with "garden", 96 others; user "a": 50 records
    with "tea" (so "tea" is common in the table and rare in "b")."""
    w = WORDS[lang]
    b = [
        Record("b-tea", f"{w['tea']} party notes", collection="b"),
        Record("b-garden", f"{w['garden']} party notes", collection="b"),
        Record("b-garden2", f"{w['garden']} walk today notes", collection="b"),
        Record("b-garden3", f"{w['garden']} plan for spring notes", collection="b"),
    ]
    b += [Record(f"b{i}", f"{w['filler']} number {i}", collection="b") for i in range(96)]
    a = [Record(f"a{i}", f"{w['other']} notes {i}", collection="a") for i in range(50)]
    return a + b


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_word_common_in_one_collection_weighs_as_rare_in_another(
    make_index: IndexFactory, lang: str
) -> None:
    """Table-wide, "tea" (51 of 150 records) weighs less than "garden" (3), so "garden party
    notes" would rank first; within user "b" (one "tea" in 100 records, three "garden") the
    "tea" record ranks first. After five more "tea" records in "b" (fewer than a tenth of it,
    so its figures are brought up to date, not read again) "tea" weighs less than "garden"
    there too and the order turns."""
    index = make_index("hash:64", name=f"stats_{lang}")
    await index.write(records(lang))
    w = WORDS[lang]
    query = f"{w['tea']} {w['garden']}"

    async def ranked(collection: str) -> list[str]:
        hits = await index.keyword_search(query, limit=2, collection=collection, where=None)
        assert all(h.keyword_score is not None and h.keyword_score > 0 for h in hits)
        return [h.record.id for h in hits]

    assert await ranked("b") == ["b-tea", "b-garden"]
    if make_index.backend == "sqlite":  # type: ignore[attr-defined]
        # FTS5's own bm25 (table-wide statistics) orders them the other way.
        table = index.name
        rows = index.db.run_sync(
            lambda conn: conn.execute(
                f"SELECT r.id FROM {table}_words w JOIN {table} r ON r.rowid = w.rowid"
                f" WHERE {table}_words MATCH ? AND r.collection = 'b' ORDER BY w.rank LIMIT 2",
                [f'"{w["tea"]}" OR "{w["garden"]}"'],
            ).fetchall()
        )
        assert rows[0][0] == "b-garden"
    await index.write(
        [Record(f"b-more{i}", f"{w['tea']} tasting notes {i}", collection="b") for i in range(5)]
    )
    assert (await ranked("b"))[0] == "b-garden"
    # User "a" is untouched by "b"'s writes: "tea" is in all of its records.
    found = await index.keyword_search(w["tea"], limit=60, collection="a", where=None)
    assert {h.record.id for h in found} == {f"a{i}" for i in range(50)}


async def test_common_words_keep_collection_statistics_when_they_are_counted_once(
    tmp_path: Any,
) -> None:
    """With a `rank_cap` below the matches of "tea", its frequency in a collection is counted
    once and then kept up to date from new rows: the same orders as above, and every hit of a
    query made of common words carries a bm25 score."""
    from toolweave.storage.retrieval import SQLiteTextIndex

    index = SQLiteTextIndex(tmp_path / "common.db", "hash:64", rank_cap=10)
    await index.write(records("en"))
    hits = await index.keyword_search("tea garden", limit=2, collection="b", where=None)
    assert [h.record.id for h in hits] == ["b-tea", "b-garden"]
    more = [Record(f"b-more{i}", f"tea tasting notes {i}", collection="b") for i in range(5)]
    await index.write(more)
    hits = await index.keyword_search("tea garden", limit=2, collection="b", where=None)
    assert hits[0].record.id == "b-garden"
    common = await index.keyword_search("notes tea", limit=8, collection="a", where=None)
    assert len(common) == 8 and all(h.keyword_score and h.keyword_score > 0 for h in common)
    scores = [h.keyword_score for h in common]
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    await index.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_long_query_keeps_its_rarest_words_not_its_first(
    make_index: IndexFactory, lang: str
) -> None:
    """Past `max_query_terms` distinct words, keyword search scores the rarest ones in the
    collection: the one rare word at the end of a long query still finds its record, which
    the query's first words alone would not."""
    index = make_index("hash:64", name=f"long_{lang}", max_query_terms=2)
    w = WORDS[lang]
    await index.write(records(lang))
    rare = "zorblax" if lang == "en" else "乌龙茶"
    await index.write([Record("b-rare", f"{rare} {w['filler']}", collection="b")])
    query = f"{w['filler']} number {rare}"
    hits = await index.keyword_search(query, limit=1, collection="b", where=None)
    assert [h.record.id for h in hits] == ["b-rare"]
