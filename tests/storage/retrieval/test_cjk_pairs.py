"""Chinese keyword search matches character pairs beside jieba's words, on both backends.

jieba cuts a word its dictionary does not know into single characters ("連線逾時", Traditional
Chinese, is 連 線 逾 時): counted one by one, a short text that scatters those characters
outranks the one that names the phrase. The words index also holds each CJK run's overlapping
character pairs (連線, 線逾, 逾時), and so does the query, so the phrase wins. An index whose
words were cut before the pairs existed is re-cut when it is opened.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolweave.storage.retrieval import Record, SQLiteTextIndex
from toolweave.storage.text import SEGMENTATION, char_pairs, segment

IndexFactory = Callable[..., Any]

QUERY = "連線逾時"
PHRASE = Record("phrase", "資料庫連線逾時的處理方式、重試設定說明，以及相關日誌紀錄與監控告警")
SCATTERED = Record("scattered", "時間逾期，線上連絡")
FILLER = [
    Record(f"f{i}", text)
    for i, text in enumerate(
        ["今天天氣很好", "會議記錄與行動項目", "每週報告：花園小組", "旅行計畫與預算", "午餐菜單"]
    )
]


def test_pairs_follow_each_run_s_words() -> None:
    assert segment(QUERY) == ["連", "線", "逾", "時"]
    assert char_pairs(QUERY) == ["連線", "線逾", "逾時"]
    assert segment("日本語_text", pairs=True) == ["日本", "語", "日本", "本語", "_text"]
    assert char_pairs("Python编程，很好。") == ["编程", "很好"]  # no pair across punctuation


async def test_a_phrase_jieba_cuts_into_characters_ranks_first(make_index: IndexFactory) -> None:
    index = make_index("hash:64", name="pairs")
    await index.write([SCATTERED, PHRASE, *FILLER])
    hits = await index.keyword_search(QUERY, limit=5, collection="default", where=None)
    assert [h.record.id for h in hits] == ["phrase", "scattered"]
    assert hits[0].keyword_score > hits[1].keyword_score


async def test_an_sqlite_store_cut_without_pairs_is_recut_on_open(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    index = SQLiteTextIndex(path, "hash:64", name="mem")
    await index.write([SCATTERED, PHRASE, *FILLER])
    await index.close()
    conn = sqlite3.connect(path)
    with conn:  # the words as they were cut before: jieba's alone, and no segmentation row
        conn.execute("DELETE FROM mem_meta WHERE key = 'segmentation'")
        conn.execute("DELETE FROM mem_words")
        for rowid, text in conn.execute("SELECT rowid, text FROM mem").fetchall():
            words = " ".join(segment(text))
            conn.execute("INSERT INTO mem_words (rowid, words) VALUES (?, ?)", (rowid, words))
    conn.close()
    reopened = SQLiteTextIndex(path, "hash:64", name="mem")
    hits = await reopened.keyword_search(QUERY, limit=5, collection="default", where=None)
    await reopened.close()
    assert [h.record.id for h in hits] == ["phrase", "scattered"]
    conn = sqlite3.connect(path)
    row = conn.execute("SELECT value FROM mem_meta WHERE key = 'segmentation'").fetchone()
    conn.close()
    assert row == (SEGMENTATION,)


async def test_a_postgres_store_cut_without_pairs_is_recut_on_open(
    tmp_path: Path, postgres_dsn: str
) -> None:
    import psycopg

    from toolweave.storage.retrieval import PostgresQdrantIndex

    args: dict[str, Any] = {"qdrant_path": str(tmp_path / "q"), "name": "unpaired"}
    index = PostgresQdrantIndex(postgres_dsn, "hash:64", **args)
    await index.write([SCATTERED, PHRASE, *FILLER])
    await index.close()
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        rows = conn.execute("SELECT id, text FROM unpaired").fetchall()
        for id_, text in rows:  # jieba's words alone, under the version before the pairs
            conn.execute(
                "UPDATE unpaired SET words = to_tsvector('toolweave_porter', %s) WHERE id = %s",
                (" ".join(segment(text)), id_),
            )
        conn.execute("UPDATE unpaired_meta SET value = 'toolweave_porter' WHERE key = 'text'")
    reopened = PostgresQdrantIndex(postgres_dsn, "hash:64", **args)
    hits = await reopened.keyword_search(QUERY, limit=5, collection="default", where=None)
    await reopened.close()
    assert [h.record.id for h in hits] == ["phrase", "scattered"]
