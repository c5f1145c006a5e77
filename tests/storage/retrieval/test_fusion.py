"""Hybrid ranking: weighted normalised scores, side-preferring ties, a fixed candidate pool,
stored weights, and stemmed English words, on both backends where an index is involved."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolweave.errors import ConfigError
from toolweave.storage.retrieval import (
    FUSION_POOL,
    FusionWeights,
    IndexHit,
    Record,
    SQLiteTextIndex,
    fuse_hits,
    phrase_boost,
    reciprocal_rank_fusion,
)
from toolweave.storage.retrieval._words import WORDS_TOKENIZER
from toolweave.storage.retrieval.fusion import (
    AGREEMENT_DEPTH,
    CROSS_SCRIPT_DEPTH,
    DISAGREEMENT_SHARE,
    LONG_QUERY_WORDS,
    PHRASE_WEIGHT,
    agreed_weight,
    crossed_weight,
    long_query,
    weights_for,
)

IndexFactory = Callable[..., Any]
WEIGHTS = FusionWeights(latin=0.2, cjk=0.1, long_latin=0.7)
LONG_ENGLISH = " ".join(f"word{i}" for i in range(LONG_QUERY_WORDS))
LONG_CHINESE = (
    "我们昨天在公园里放风筝，晚上一起去看了一场电影。周末打算和家人去海边游泳，"
    "老师表扬了我的作文，妈妈做了红烧肉和糖醋排骨，弟弟参加了学校的篮球比赛，"
    "爷爷种的西红柿终于成熟了，邻居家的小猫生了三只小猫。"
)


def keyword_hits(*scored: tuple[str, float]) -> list[IndexHit]:
    return [
        IndexHit(Record(id_, id_), 0.0, keyword_rank=rank, keyword_score=score)
        for rank, (id_, score) in enumerate(scored, start=1)
    ]


def vector_hits(*scored: tuple[str, float]) -> list[IndexHit]:
    return [IndexHit(Record(id_, id_), cos, vector_score=cos) for id_, cos in scored]


def test_weighted_scores_keep_a_strong_keyword_match_that_rank_fusion_loses() -> None:
    # "exact" is far ahead on keywords; the weak vector side ranks "near" first and "exact"
    # 40th. Rank fusion counts both lists alike and puts "near" first.
    keyword = keyword_hits(("exact", 12.0), ("near", 3.0))
    filler = [(f"v{i}", 0.60 - i * 0.003) for i in range(38)]
    vector = vector_hits(("near", 0.62), *filler, ("exact", 0.45))
    rrf = reciprocal_rank_fusion([[h.record.id for h in keyword], [h.record.id for h in vector]])
    assert max(rrf, key=lambda key: rrf[key]) == "near"
    fused = fuse_hits(keyword, vector, 3, weight=0.1)
    assert [h.record.id for h in fused][:2] == ["exact", "near"]
    top = fused[0]
    assert top.keyword_rank == 1 and top.keyword_score == 12.0 and top.vector_score == 0.45
    assert top.score == pytest.approx(0.9 * 1.0 + 0.1 * 0.0)
    # Agreement adds up: a record both sides rank first scores 1.0.
    both = fuse_hits(keyword_hits(("a", 2.0)), vector_hits(("a", 0.9), ("b", 0.1)), 2, weight=0.3)
    assert both[0].record.id == "a" and both[0].score == pytest.approx(1.0)


def test_ties_go_to_the_stronger_side_never_to_the_record_id() -> None:
    # With w = 0.5 a keyword-only best and a vector-only best tie at 0.5.
    for keyword_id, vector_id in (("a", "z"), ("z", "a")):
        keyword = keyword_hits((keyword_id, 5.0))
        vector = vector_hits((vector_id, 0.9), ("other", 0.2))
        fused = fuse_hits(keyword, vector, 3, weight=0.5)
        assert fused[0].score == pytest.approx(fused[1].score)
        assert fused[0].record.id == keyword_id
    # When the vector side weighs more, its best wins the tie of equal keyword evidence.
    keyword = keyword_hits(("k1", 5.0), ("k2", 5.0))
    vector = vector_hits(("k2", 0.9), ("k1", 0.9), ("low", 0.1))
    assert fuse_hits(keyword, vector, 3, weight=0.0)[0].record.id == "k1"  # keyword rank
    assert fuse_hits(keyword, vector, 3, weight=1.0)[0].record.id == "k2"  # vector rank


def test_the_phrase_bonus_lifts_a_passage_with_the_query_words_side_by_side() -> None:
    def texts(*pairs: tuple[str, str, float]) -> list[IndexHit]:
        return [
            IndexHit(Record(id_, text), 0.0, keyword_rank=rank, keyword_score=score)
            for rank, (id_, text, score) in enumerate(pairs, start=1)
        ]

    # bm25 prefers the passage that scatters "super" and "bowl"; the one that says "the Super
    # Bowl was played" has 2 of the query's 3 content pairs (the super, super bowl).
    keyword = texts(
        ("scattered", "The bowl of soup was super hot, a super soup", 5.0),
        ("phrase", "The Super Bowl was played in February", 4.0),
    )
    boosted = phrase_boost("Where was the Super Bowl played?", keyword)
    assert [h.record.id for h in boosted] == ["phrase", "scattered"]
    assert [h.keyword_rank for h in boosted] == [1, 2]
    assert boosted[0].keyword_score == pytest.approx(4.0 + PHRASE_WEIGHT * 5.0 * 2 / 3)
    assert boosted[1].keyword_score == 5.0
    # A query of one word has no pairs: the keyword order stands.
    assert phrase_boost("bowl", keyword) == keyword
    # Chinese pairs are jieba's adjacent words.
    zh = texts(("apart", "茶很好，下午我喝乌龙", 2.5), ("together", "每天下午喝乌龙茶", 2.0))
    assert [h.record.id for h in phrase_boost("下午喝乌龙茶", zh)] == ["together", "apart"]


async def test_hybrid_search_ranks_the_phrase_match_first(make_index: IndexFactory) -> None:
    index = make_index()
    await index.write(
        [
            Record("scattered", "super soup in a super bowl, super hot soup, a bowl of rice"),
            Record("phrase", "The Super Bowl was played in February in Santa Clara"),
            Record("other", "Rice is grown in paddies"),
        ]
    )
    for mode in ("keyword", "hybrid"):
        hits = await index.search("Where was the Super Bowl played?", mode=mode, limit=3)
        assert hits[0].record.id == "phrase", mode


def test_the_vector_weight_is_cut_when_the_sides_disagree() -> None:
    keyword = keyword_hits(*((f"k{i}", 10.0 - i) for i in range(AGREEMENT_DEPTH + 1)))
    deep = vector_hits((f"k{AGREEMENT_DEPTH}", 0.9), ("k0", 0.5))
    agreeing = vector_hits((f"k{AGREEMENT_DEPTH - 1}", 0.9), ("k0", 0.5))
    assert agreed_weight(0.1, keyword, agreeing) == 0.1
    assert agreed_weight(0.1, keyword, deep) == pytest.approx(0.1 * DISAGREEMENT_SHARE)
    # Single-sided searches and empty sides keep their weight.
    assert agreed_weight(1.0, keyword, deep) == 1.0 and agreed_weight(0.0, keyword, deep) == 0.0
    assert agreed_weight(0.1, [], deep) == 0.1 and agreed_weight(0.1, keyword, []) == 0.1


def test_a_latin_query_over_chinese_records_is_ranked_by_its_vectors() -> None:
    """`crossed_weight`: an English query whose nearest records are mostly Chinese, and whose
    best keyword match is Chinese too (a chance match of a Latin word in it), is ranked by the
    vectors alone; a Chinese query, an English best keyword match, mostly English neighbours and
    single-sided searches keep their weight."""

    def hits(*texts: str, vector: bool) -> list[IndexHit]:
        return [
            IndexHit(
                Record(f"r{i}", t),
                0.5,
                keyword_rank=None if vector else i + 1,
                keyword_score=None if vector else 1.0,
                vector_score=0.5 if vector else None,
            )
            for i, t in enumerate(texts)
        ]

    chinese = [f"第{i}段 讲的是 1998 年的比赛" for i in range(CROSS_SCRIPT_DEPTH)]
    near = hits(*chinese, vector=True)
    chance = hits("1998 年的比赛", vector=False)
    assert crossed_weight(0.1, "What happened in 1998?", chance, near, WEIGHTS) == 1.0
    assert crossed_weight(0.1, "What happened in 1998?", [], near, WEIGHTS) == 1.0
    assert crossed_weight(0.1, "1998 年发生了什么", chance, near, WEIGHTS) == 0.1
    english = hits("In 1998 the final was played", vector=False)
    assert crossed_weight(0.1, "What happened in 1998?", english, near, WEIGHTS) == 0.1
    mixed = hits(*chinese[: CROSS_SCRIPT_DEPTH // 2], *["an English text"] * 5, vector=True)
    assert crossed_weight(0.1, "What happened in 1998?", chance, mixed, WEIGHTS) == 0.1
    for single in (0.0, 1.0):
        assert crossed_weight(single, "What happened in 1998?", chance, near, WEIGHTS) == single


def test_a_chinese_query_over_english_records_takes_the_weight_of_an_english_one() -> None:
    """`crossed_weight`: a Chinese query whose nearest records and best keyword match are
    English is fused with the weight of an English query of its length: the long one's (a
    conversation, whose words the records do not share), the short one's for a question; a
    Chinese best keyword match keeps the Chinese weight."""
    english = [
        IndexHit(Record(f"e{i}", f"Bart flew a kite on day {i}"), 0.5, vector_score=0.5)
        for i in range(CROSS_SCRIPT_DEPTH)
    ]
    named = [IndexHit(Record("e0", "Bart flew a kite"), 0.0, keyword_rank=1, keyword_score=2.0)]
    assert long_query(LONG_CHINESE) and not long_query("Bart 放风筝了吗")
    assert WEIGHTS.for_query(LONG_CHINESE) == 0.1  # no long Chinese weight: the short one
    assert crossed_weight(0.1, LONG_CHINESE, named, english, WEIGHTS) == 0.7
    assert crossed_weight(0.1, LONG_CHINESE, [], english, WEIGHTS) == 0.7
    assert crossed_weight(0.1, "Bart 放风筝了吗", named, english, WEIGHTS) == 0.2
    chinese = [IndexHit(Record("z", "Bart 放风筝"), 0.0, keyword_rank=1, keyword_score=2.0)]
    assert crossed_weight(0.1, LONG_CHINESE, chinese, english, WEIGHTS) == 0.1


def test_an_embedder_that_crosses_languages_sets_its_own_crossed_weight() -> None:
    """`FusionWeights.crossed` replaces both cross-script rules (either direction, any length);
    a query over records of its own script keeps its weight."""
    crossing = FusionWeights(latin=0.2, cjk=0.3, long_latin=0.7, crossed=0.9)
    english = [
        IndexHit(Record(f"e{i}", f"Bart flew a kite on day {i}"), 0.5, vector_score=0.5)
        for i in range(CROSS_SCRIPT_DEPTH)
    ]
    chinese = [
        IndexHit(Record(f"z{i}", f"第{i}天 Bart 放了风筝"), 0.5, vector_score=0.5)
        for i in range(CROSS_SCRIPT_DEPTH)
    ]
    for query in (LONG_CHINESE, "Bart 放风筝了吗"):
        assert crossed_weight(0.3, query, [], english, crossing) == 0.9
        assert crossed_weight(0.3, query, [], chinese, crossing) == 0.3
    assert crossed_weight(0.2, "Did Bart fly a kite?", [], chinese, crossing) == 0.9
    assert crossed_weight(0.2, "Did Bart fly a kite?", [], english, crossing) == 0.2
    assert FusionWeights.from_json(crossing.to_json()) == crossing
    with pytest.raises(ConfigError, match=r"FusionWeights.crossed must be a number from 0 to 1"):
        FusionWeights(latin=0.1, cjk=0.1, crossed=2.0)


def test_weights_are_checked_and_depend_on_the_query_script() -> None:
    weights = FusionWeights(latin=0.3, cjk=0.0)
    assert weights.for_query("budget review") == 0.3
    assert weights.for_query("预算 review") == 0.0
    assert FusionWeights.from_json(weights.to_json()) == weights
    # A long query (LONG_QUERY_WORDS distinct words) takes the long weight of its script.
    assert WEIGHTS.for_query(LONG_ENGLISH) == 0.7 and WEIGHTS.for_query("word1 word2") == 0.2
    assert FusionWeights.from_json(WEIGHTS.to_json()) == WEIGHTS
    # Weights stored before the long ones existed rank long queries as they did.
    assert FusionWeights.from_json('{"cjk": 0.1, "latin": 0.2}').for_query(LONG_ENGLISH) == 0.2
    with pytest.raises(ConfigError, match=r"FusionWeights.long_cjk must be a number from 0 to 1"):
        FusionWeights(latin=0.1, cjk=0.1, long_cjk=-0.5)
    assert weights_for("wordllama:256") == weights_for("wordllama:64")
    with pytest.raises(ConfigError, match=r"FusionWeights.latin must be a number from 0 to 1"):
        FusionWeights(latin=1.5, cjk=0.0)


async def test_the_top_result_does_not_depend_on_k(make_index: IndexFactory) -> None:
    index = make_index()
    topics = ["budget", "review", "falcon", "quarterly", "meeting", "notes", "plan", "launch"]
    records = [
        Record(f"r{i:03d}", " ".join(topics[(i * j) % len(topics)] for j in range(1, 4)) + f" {i}")
        for i in range(FUSION_POOL + 30)
    ]
    await index.write(records)
    for query in ("quarterly budget review", "falcon launch plan", "meeting notes"):
        tops = {(await index.search(query, limit=k))[0].record.id for k in (1, 3, 5, 10, 20, 50)}
        assert len(tops) == 1, (query, tops)
        ranked = [h.record.id for h in await index.search(query, limit=10)]
        assert [h.record.id for h in await index.search(query, limit=5)] == ranked[:5]


async def test_keyword_hits_carry_comparable_scores(make_index: IndexFactory) -> None:
    index = make_index()
    await index.write(
        [
            Record("all", "quarterly budget review for falcon"),
            Record("one", "falcon kickoff meeting notes"),
            Record("zh", "季度预算评审"),
        ]
    )
    hits = await index.search("quarterly budget review falcon", mode="keyword", limit=5)
    assert [h.record.id for h in hits] == ["all", "one"]
    assert hits[0].keyword_score > hits[1].keyword_score > 0
    zh = await index.search("预算", mode="keyword", limit=5)
    assert [h.record.id for h in zh] == ["zh"] and zh[0].keyword_score > 0


async def test_english_words_are_stemmed_and_chinese_keeps_its_words(
    make_index: IndexFactory,
) -> None:
    index = make_index()
    await index.write(
        [
            Record("run", "She was running along the river every morning"),
            Record("cat", "猫在沙发上睡觉"),
            Record("ml", "我喜欢机器学习"),
        ]
    )
    for query in ("runs", "run", "runner's river"):
        assert [h.record.id for h in await index.search(query, mode="keyword")][:1] == ["run"]
    assert [h.record.id for h in await index.search("学习", mode="keyword")] == ["ml"]
    assert [h.record.id for h in await index.search("沙发", mode="keyword")] == ["cat"]


async def test_the_fusion_weights_are_stored_with_the_index(make_index: IndexFactory) -> None:
    chosen = FusionWeights(latin=0.7, cjk=0.2)
    first = make_index(name="weights", fusion=chosen)
    assert await first.stored_fusion() == chosen
    await first.close()
    again = make_index(name="weights")
    assert await again.stored_fusion() == chosen
    await again.close()  # Qdrant's local mode lets one client hold a folder at a time
    fresh = make_index(name="defaults")
    assert await fresh.stored_fusion() == weights_for(fresh.embedder.name)


async def test_a_store_made_before_stemming_is_reindexed_on_open(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    index = SQLiteTextIndex(path, "hash", name="mem")
    await index.write([Record("run", "running every morning"), Record("zh", "机器学习")])
    await index.close()
    conn = sqlite3.connect(path)
    conn.executescript(
        "DROP TABLE mem_words;"
        "CREATE VIRTUAL TABLE mem_words USING fts5(words, tokenize='unicode61');"
        "INSERT INTO mem_words (rowid, words) SELECT rowid, text FROM mem;"
    )
    conn.commit()
    assert (
        conn.execute("SELECT count(*) FROM mem_words WHERE mem_words MATCH 'runs'").fetchone()[0]
        == 0
    )
    conn.close()
    reopened = SQLiteTextIndex(path, "hash", name="mem")
    assert [h.record.id for h in await reopened.search("runs", mode="keyword")] == ["run"]
    assert [h.record.id for h in await reopened.search("学习", mode="keyword")] == ["zh"]
    await reopened.close()


async def test_a_store_cut_with_jiebas_hmm_is_reindexed_on_open(tmp_path: Path) -> None:
    path = tmp_path / "hmm.db"
    index = SQLiteTextIndex(path, "hash", name="mem")
    await index.write([Record("zh", "机器学习"), Record("en", "running every morning")])
    await index.close()
    conn = sqlite3.connect(path)
    conn.executescript(  # the declaration of the words tables cut with the HMM
        "DROP TABLE mem_words;"
        "CREATE VIRTUAL TABLE mem_words USING fts5(words, tokenize='porter unicode61');"
        "INSERT INTO mem_words (rowid, words) SELECT rowid, 'stale' FROM mem;"
    )
    conn.commit()
    conn.close()
    reopened = SQLiteTextIndex(path, "hash", name="mem")
    assert [h.record.id for h in await reopened.search("学习", mode="keyword")] == ["zh"]
    assert [h.record.id for h in await reopened.search("runs", mode="keyword")] == ["en"]
    await reopened.close()
    conn = sqlite3.connect(path)
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'mem_words'").fetchone()[0]
    conn.close()
    assert WORDS_TOKENIZER in sql


async def test_a_postgres_store_made_before_stemming_is_reindexed_on_open(
    tmp_path: Path, postgres_dsn: str
) -> None:
    import psycopg

    from toolweave.storage.retrieval import PostgresQdrantIndex

    args: dict[str, Any] = {"qdrant_path": str(tmp_path / "q"), "name": "old_words"}
    index = PostgresQdrantIndex(postgres_dsn, "hash", **args)
    await index.write([Record("run", "running every morning"), Record("zh", "机器学习")])
    await index.close()
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute("UPDATE old_words SET words = to_tsvector('simple', text)")
        conn.execute("DELETE FROM old_words_meta WHERE key = 'text'")
    reopened = PostgresQdrantIndex(postgres_dsn, "hash", **args)
    assert [h.record.id for h in await reopened.search("runs", mode="keyword")] == ["run"]
    assert [h.record.id for h in await reopened.search("学习", mode="keyword")] == ["zh"]
    await reopened.close()


async def test_both_backends_rank_a_small_set_alike(tmp_path: Path, postgres_dsn: str) -> None:
    from toolweave.storage.retrieval import PostgresQdrantIndex

    topics = {
        "pg": "Postgres stores rows durably and replicates them to standby servers",
        "fts": "Full text search ranks documents by bm25 over their stemmed words",
        "hnsw": "An HNSW graph finds approximate nearest neighbours of a vector quickly",
        "jieba": "jieba segments Chinese text into words for the full text index",
        "tea": "我最喜欢的茶是乌龙茶，每天下午喝一杯",
        "ml": "我最近在学习机器学习和深度学习",
        "cat": "猫在沙发上睡觉，狗在院子里跑",
        "trip": "The team travelled to Lisbon for the spring planning meeting",
        "budget": "Quarterly budget review for the Falcon project",
        "kickoff": "Falcon project kickoff meeting notes and action items",
    }
    records = [Record(key, text) for key, text in topics.items()]
    embedded = SQLiteTextIndex(tmp_path / "i.db", "hash", name="alike")
    scale = PostgresQdrantIndex(
        postgres_dsn, "hash", qdrant_path=str(tmp_path / "q"), name="alike_backends"
    )
    queries = [
        "which server stores rows",
        "ranking documents with bm25",
        "nearest neighbour graph",
        "乌龙茶",
        "学习深度学习",
        "沙发上的猫",
        "spring meeting in Lisbon",
        "Falcon budget review",
        "Falcon kickoff action items",
        "segmenting Chinese words",
    ]
    try:
        for index in (embedded, scale):
            await index.write(records)
        for mode in ("keyword", "hybrid"):
            tops = [
                [(await index.search(q, mode=mode, limit=3))[0].record.id for q in queries]
                for index in (embedded, scale)
            ]
            assert tops[0] == tops[1], mode
    finally:
        await embedded.close()
        await scale.close()
