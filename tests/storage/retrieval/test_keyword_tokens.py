"""Keyword scores count a query term as the words index holds it, on both backends.

FTS5's unicode61 tokenizer (and Postgres' tsvector, made from the same tokens) splits text at
every character that is not a letter or a digit: "max_retries", "max-retries" and "max retries"
are all the two words "max" and "retri". A term scored in one piece ("max_retries") would find
those records through FTS5 but count none of the other spellings FTS5 sees as the same words:
a record naming the term three times would score as one naming it once, a record FTS5 matched
would score 0, and the two backends would disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolweave.storage.retrieval import PostgresQdrantIndex, Record, SQLiteTextIndex
from toolweave.storage.text import keyword_terms

IndexFactory = Callable[..., Any]

FILLER = [f"weekly report number {i} for the garden team" for i in range(12)]

CASES = {
    # query, a record naming it three times (spellings unicode61 splits alike), one naming it
    # once in a shorter text
    "en": (
        "max_retries",
        "max_retries, MAX-RETRIES and max retries in the loop",
        "max_retries is read from the config",
    ),
    "zh": (
        "用户_id",
        "用户_id 和 用户-id 和 用户 id 的 日志",
        "用户_id 写在 配置 里",
    ),
}


def test_keyword_terms_split_as_unicode61_does() -> None:
    """Each query term splits where FTS5 splits text; single letters and stop words go as
    `query_terms` drops them; jieba's words stay whole."""
    assert keyword_terms("max_retries") == ["max", "retries"]
    assert keyword_terms("MAX_RETRIES user_id") == ["max", "retries", "user", "id"]
    assert keyword_terms("gpt-4o v1.2.3 don't C++") == ["gpt", "4o", "v1", "don"]
    assert keyword_terms("__init__ the_end") == ["init", "end"]
    assert keyword_terms("日本語_text") == ["日本", "語", "text"]
    assert keyword_terms("用户_id 重试次数") == ["用户", "id", "重试", "次数"]


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_split_term_counts_every_spelling_the_index_holds(
    make_index: IndexFactory, lang: str
) -> None:
    """The record naming the term three times (underscore, hyphen, space) ranks above the one
    naming it once, and every word match has a positive score."""
    query, three, once = CASES[lang]
    index = make_index("hash:64", name=f"tokens_{lang}")
    await index.write(
        [Record("three", three), Record("once", once)]
        + [Record(f"f{i}", text) for i, text in enumerate(FILLER)]
    )
    hits = await index.keyword_search(query, limit=5, collection="default", where=None)
    assert [h.record.id for h in hits] == ["three", "once"]
    assert all(h.keyword_score is not None and h.keyword_score > 0 for h in hits)
    assert hits[0].keyword_score > hits[1].keyword_score  # type: ignore[operator]


async def test_a_term_split_from_cjk_scores_its_matches(make_index: IndexFactory) -> None:
    """A CJK word joined to a Latin one by "_" is jieba's words and "text": the record FTS5
    finds by "text" alone scores above 0 (looked for as "_text", it would count nothing)."""
    index = make_index("hash:64", name="tokens_mixed")
    await index.write(
        [
            Record("both", "日本語_text 的 说明"),
            Record("text", "plain text only"),
            Record("other", "nothing to see here"),
        ]
    )
    hits = await index.keyword_search("日本語_text", limit=5, collection="default", where=None)
    assert [h.record.id for h in hits] == ["both", "text"]
    assert all(h.keyword_score is not None and h.keyword_score > 0 for h in hits)


PARITY_RECORDS = [
    "Set max_retries in the config; MAX-RETRIES caps the loop and max retries wins.",
    "The max_retries setting and the user_id column.",
    "We tried gpt-4o and gpt 4o mini on release v1.2.3 of the parser.",
    "Release v1.2.3 notes: don't run the user_id migration twice.",
    "每个 用户_id 都不同，重试次数 写在配置里。",
    "日本語_text 的 说明，重试 三次。",
    "plain text with running jobs",
    "running_jobs counts the jobs that run now",
    *FILLER,
]
PARITY_QUERIES = [
    "max_retries",
    "user_id",
    "gpt-4o",
    "v1.2.3",
    "don't",
    "running_jobs",
    "日本語_text",
    "用户_id 重试次数",
]


async def test_both_backends_score_split_terms_alike(postgres_dsn: str, tmp_path: Path) -> None:
    """The same records and queries get the same bm25 on SQLite and on Postgres, record by
    record (to rounding), for terms with underscores, hyphens, dots, apostrophes and CJK."""
    records = [Record(str(i), text) for i, text in enumerate(PARITY_RECORDS)]
    embedded = SQLiteTextIndex(tmp_path / "parity.db", "hash:64")
    scale = PostgresQdrantIndex(
        postgres_dsn, "hash:64", qdrant_path=str(tmp_path / "qdrant"), name="tokens_parity"
    )
    try:
        for index in (embedded, scale):
            await index.write(records)
        for query in PARITY_QUERIES:
            scores = []
            for index in (embedded, scale):
                hits = await index.keyword_search(query, limit=20, collection="default")
                scores.append({h.record.id: h.keyword_score for h in hits})
            ours, theirs = scores
            assert ours.keys() == theirs.keys(), query
            assert all(score and score > 0 for score in ours.values()), (query, ours)
            for id_, score in ours.items():
                assert score == pytest.approx(theirs[id_], rel=1e-6), (query, id_, ours, theirs)
    finally:
        await embedded.close()
        await scale.close()
