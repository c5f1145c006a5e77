"""Postings read ahead (`_sqlite_warm`): when the index opens, after a large write and after
another process's write, every word's postings are read in the background, so no query walks
FTS5's vocabulary; the scores equal postings read afresh, and `postings_kept` bounds them.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.storage.retrieval.test_keyword_postings import QUERIES, agree, text
from toolweave.storage.retrieval import Record, SQLiteTextIndex
from toolweave.storage.retrieval._sqlite_bm25 import RECOUNT_ROWS, Tokenizer
from toolweave.storage.text import fts_texts

COLLECTIONS = ["a", "b"]


def records(rng: random.Random, count: int, prefix: str) -> list[Record]:
    return [
        Record(f"{prefix}{i}", text(rng), collection=rng.choice(COLLECTIONS)) for i in range(count)
    ]


def postings_in(texts: list[str]) -> int:
    """(record, term) pairs of `texts` as the words table indexes them (Chinese segmented),
    counted by FTS5's tokenizer over a table of their own."""
    return len({(at, term) for at, term, _ in Tokenizer().counts(fts_texts(texts))})


async def vocabulary_reads(index: SQLiteTextIndex) -> list[str]:
    """The statements the index's connection runs from now on that read a term's postings."""
    statements: list[str] = []
    await index.db.run(lambda conn: conn.set_trace_callback(statements.append))
    return statements


async def test_postings_are_read_ahead_and_no_query_walks_the_vocabulary(tmp_path: Path) -> None:
    """Opened over a file, after another process's write and after a write too large to count
    in, the index reads every posting ahead; its searches then read none from FTS5, a small
    write's new words are counted in, and the scores equal postings read afresh."""
    rng = random.Random(3)
    path = tmp_path / "warm.db"
    first = records(rng, 300, "r")
    writer = SQLiteTextIndex(path, "hash:64")
    await writer.write(first)
    await writer.close()

    index = SQLiteTextIndex(path, "hash:64")
    assert await index.warm_postings() == postings_in([r.text for r in first])
    reads = await vocabulary_reads(index)
    for collection in COLLECTIONS:
        for query in QUERIES:
            assert await index.keyword_search(query, limit=5, collection=collection)
    assert not [s for s in reads if "_words_terms" in s]
    await agree(index, COLLECTIONS)

    # A small write is counted in, a word no record held before included.
    await index.write([Record("z", "zorblax tea garden", collection="a")])
    reads.clear()  # (`agree` reads postings afresh on the same connection)
    hits = await index.keyword_search("zorblax", limit=5, collection="a")
    assert [h.record.id for h in hits] == ["z"]
    assert not [s for s in reads if "_words_terms" in s]
    await agree(index, COLLECTIONS)

    # Another process's write: the next search reads the records again and starts a read ahead.
    other = SQLiteTextIndex(path, "hash:64")
    second = records(rng, 50, "s")
    await other.write(second)
    await index.keyword_search(QUERIES[0], limit=5, collection="a")
    everything = [r.text for r in first + second] + ["zorblax tea garden"]
    assert await index.warm_postings() == postings_in(everything)
    reads.clear()
    for query in QUERIES:
        await index.keyword_search(query, limit=5, collection="b")
    assert not [s for s in reads if "_words_terms" in s]
    await agree(index, COLLECTIONS)

    # This index's own write too large to count in drops the postings; they are read again.
    third = records(rng, RECOUNT_ROWS + 1, "t")
    await index.write(third)
    assert await index.warm_postings() == postings_in(everything + [r.text for r in third])
    await agree(index, COLLECTIONS)
    await other.close()
    await index.close()


async def test_postings_kept_bounds_the_read_ahead(tmp_path: Path) -> None:
    """At most `postings_kept` postings are read ahead (whole terms); the other words are read
    as queries ask for them, scoring the same."""
    rng = random.Random(5)
    path = tmp_path / "bounded.db"
    index = SQLiteTextIndex(path, "hash:64", postings_kept=150)
    written = records(rng, 120, "r")
    await index.write(written)
    held = await index.warm_postings()
    assert 0 < held <= 150 < postings_in([r.text for r in written])
    await agree(index, COLLECTIONS)
    await index.close()
    with pytest.raises(ValueError, match="postings_kept"):
        SQLiteTextIndex(path, "hash:64", postings_kept=0)


async def test_a_database_in_memory_reads_each_word_as_queries_ask(tmp_path: Path) -> None:
    index = SQLiteTextIndex(":memory:", "hash:64")
    await index.write([Record("r", "tea garden")])
    assert await index.warm_postings() == 0
    hits = await index.keyword_search("tea", limit=3)
    assert [h.record.id for h in hits] == ["r"]
    assert await index.warm_postings() == 1
    await index.close()


async def test_a_read_stopped_by_close_takes_nothing(tmp_path: Path) -> None:
    """A read ahead stopped (the index closing) returns nothing."""
    import sqlite3
    import threading

    from toolweave.storage.retrieval._background import SearchGate
    from toolweave.storage.retrieval._sqlite_bm25 import read_postings

    path = tmp_path / "stopped.db"
    index = SQLiteTextIndex(path, "hash:64")
    await index.write(records(random.Random(1), 50, "r"))
    await index.close()
    stop = threading.Event()
    conn = sqlite3.connect(path, isolation_level=None)
    assert read_postings(conn, "records", 1_000, stop, SearchGate()) is not None
    stop.set()
    assert read_postings(conn, "records", 1_000, stop, SearchGate()) is None
    conn.close()
