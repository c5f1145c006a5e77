"""The stemmed words index of `SQLiteTextIndex`: its tokenizer, the rebuild of an older one,
and the bm25 scores keyword hits carry into fusion.

FTS5's `porter` wrapper stems the English words unicode61 splits ("running", "runs" -> "run")
and leaves jieba's Chinese words as they are. Keyword search finds candidates level by level
(every term, the rare terms, the newest matches of common ones; see `keyword_search`), each
with the bm25 FTS5 ranked it by. A rare-terms level leaves out the common terms, whose low idf
adds little, so the scores compare across levels closely enough to order all word matches by
them; substring-only matches rank below every word match. (Scoring every candidate again with
one expression would cost FTS5 a walk of each common term's whole doclist per query.)
"""

from __future__ import annotations

import sqlite3

from toolweave.storage.retrieval.fusion import SUBSTRING_SHARE
from toolweave.storage.retrieval.index import IndexHit, Record
from toolweave.storage.text import fts_texts

WORDS_TOKENIZER = "porter unicode61 remove_diacritics 1"
"""English words stemmed (Porter), the rest (jieba's Chinese words) as unicode61 splits them.
`remove_diacritics 1` is unicode61's default, spelled out to mark the tables whose Chinese was
cut without jieba's HMM (`toolweave.storage.text`): a table made before it is rebuilt."""


def scored_hits(records: list[Record], bm25: dict[str, float], by_words: int) -> list[IndexHit]:
    """Keyword hits best first: the first `by_words` records (word matches) by their bm25
    (ties keep the order found), then the substring-only matches, each scored a share of the
    weakest word match."""
    words = [(bm25[r.id], r) for r in records[:by_words]]
    order = sorted(range(len(words)), key=lambda i: -words[i][0])
    floor = min((score for score, _ in words), default=1.0) * SUBSTRING_SHARE
    ranked = [words[i] for i in order] + [(floor, r) for r in records[by_words:]]
    return [
        IndexHit(record, 0.0, keyword_rank=rank, keyword_score=score)
        for rank, (score, record) in enumerate(ranked, start=1)
    ]


def unstemmed(conn: sqlite3.Connection, t: str) -> bool:
    """Whether the words table predates stemming or the current segmentation (made with another
    tokenizer declaration)."""
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", [f"{t}_words"]).fetchone()
    return row is not None and WORDS_TOKENIZER not in row[0]


def stem_words(conn: sqlite3.Connection, t: str, chunk: int) -> None:
    """Rebuild the words table with the stemming tokenizer from the rows' text (one
    transaction: a crash leaves the old table)."""
    if not unstemmed(conn, t):
        return
    conn.execute(f"DROP TABLE {t}_words")
    conn.execute(f"CREATE VIRTUAL TABLE {t}_words USING fts5(words, tokenize='{WORDS_TOKENIZER}')")
    rows = conn.execute(f"SELECT rowid, text FROM {t} ORDER BY rowid").fetchall()
    for start in range(0, len(rows), chunk):
        part = rows[start : start + chunk]
        conn.executemany(
            f"INSERT INTO {t}_words (rowid, words) VALUES (?, ?)",
            zip([r[0] for r in part], fts_texts([r[1] for r in part]), strict=True),
        )
