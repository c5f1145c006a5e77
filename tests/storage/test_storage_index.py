"""The retrieval index: the same behaviour on SQLite and on Postgres + Qdrant.

Chinese and English words, substrings, short terms, payload filters, replacement and removal
from every index, all-or-nothing writes, the dimension guard and a reopen (restart).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from toolweave.storage import (
    DimensionMismatch,
    HashEmbedder,
    Record,
    load_embedder,
    reciprocal_rank_fusion,
)

IndexFactory = Callable[..., Any]

DOCS = [
    Record("zh-ml", "我喜欢机器学习和深度学习", {"lang": "zh", "importance": 0.9, "kind": "fact"}),
    Record("zh-cat", "猫在沙发上睡觉", {"lang": "zh", "importance": 0.4, "kind": "event"}),
    Record("en-py", "Python is a programming language", {"lang": "en", "importance": 0.7}),
    Record("en-db", "Postgres stores rows durably", {"lang": "en", "importance": 0.2}),
]


class CountingEmbedder:
    """Wraps an embedder and records how many texts it was asked to embed."""

    def __init__(self) -> None:
        self.inner = HashEmbedder(64)
        self.texts: list[str] = []

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Any:
        self.texts.extend(texts)
        return self.inner.embed(texts)


async def ids(index: Any, query: str, **kwargs: Any) -> list[str]:
    return [hit.record.id for hit in await index.search(query, **kwargs)]


async def test_words_substrings_and_short_terms_in_chinese_and_english(
    make_index: IndexFactory,
) -> None:
    index = make_index()
    await index.write(DOCS)
    keyword = {"mode": "keyword"}
    assert await ids(index, "学习", **keyword) == ["zh-ml"]  # a 2-char word inside 机器学习
    assert await ids(index, "沙发", **keyword) == ["zh-cat"]
    assert await ids(index, "猫", **keyword) == ["zh-cat"]  # one character: the LIKE fallback
    assert await ids(index, "PROGRAMMING", **keyword) == ["en-py"]
    assert await ids(index, "ython", **keyword) == ["en-py"]  # a substring, not a word
    assert await ids(index, "durably rows", **keyword) == ["en-db"]
    assert await ids(index, "量子计算", **keyword) == []


async def test_hybrid_search_reports_keyword_rank_and_vector_score(
    make_index: IndexFactory,
) -> None:
    index = make_index()
    await index.write(DOCS)
    hits = await index.search("机器学习", limit=4)
    assert hits[0].record.id == "zh-ml"
    assert hits[0].keyword_rank == 1
    assert hits[0].vector_score is not None and hits[0].vector_score > 0.5
    assert hits[0].score == max(h.score for h in hits)
    vector_only = await index.search("机器学习", limit=2, mode="vector")
    assert vector_only[0].record.id == "zh-ml" and vector_only[0].keyword_rank is None
    assert hits[0].record.payload == {"lang": "zh", "importance": 0.9, "kind": "fact"}


async def test_payload_filters_equality_any_of_and_ranges(make_index: IndexFactory) -> None:
    index = make_index()
    await index.write(DOCS)
    assert await index.count(where={"lang": "zh"}) == 2
    assert await index.count(where={"lang": ["zh", "en"]}) == 4
    assert await index.count(where={"importance": {"gte": 0.4, "lt": 0.9}}) == 2
    found = await ids(index, "Python 机器学习", limit=4, where={"lang": "en"})
    assert found[0] == "en-py" and set(found) == {"en-py", "en-db"}
    for mode in ("keyword", "vector"):
        found = await ids(
            index, "学习 Python", limit=4, where={"importance": {"gte": 0.8}}, mode=mode
        )
        assert found == ["zh-ml"]
    ordered = await index.find(order_by="importance", descending=True, limit=2)
    assert [r.id for r in ordered] == ["zh-ml", "en-py"]
    with pytest.raises(ValueError, match="where: field 'bad field'"):
        await index.count(where={"bad field": 1})
    with pytest.raises(ValueError, match="range operators"):
        await index.count(where={"importance": {"above": 1}})


async def test_replace_and_delete_reach_every_index(make_index: IndexFactory) -> None:
    index = make_index()
    await index.write(DOCS)
    await index.write([Record("zh-cat", "狗在院子里跑", {"lang": "zh"})])
    assert await ids(index, "沙发", mode="keyword") == []
    assert await ids(index, "院子", mode="keyword") == ["zh-cat"]
    assert (await index.get(["zh-cat"]))[0].payload == {"lang": "zh"}
    await index.write(delete=[("default", "zh-ml"), ("default", "missing")])
    assert await index.get(["zh-ml"]) == []
    assert "zh-ml" not in await ids(index, "机器学习", limit=10)
    assert "zh-ml" not in await ids(index, "机器学习", limit=10, mode="vector")
    assert await index.delete_where(where={"lang": "en"}) == 2
    assert await index.count() == 1
    assert await ids(index, "Python programming", limit=10) == ["zh-cat"]  # the vector side
    assert "en-py" not in await ids(index, "Python", limit=10, mode="vector")


async def test_collections_are_isolated(make_index: IndexFactory) -> None:
    index = make_index()
    await index.write([Record("a", "shared words here", collection="alice")])
    await index.write([Record("a", "shared words here too", collection="bob")])
    assert await ids(index, "shared", collection="alice") == ["a"]
    assert (await index.get(["a"], collection="bob"))[0].text == "shared words here too"
    assert await index.collections() == ["alice", "bob"]
    assert await index.count("carol") == 0


async def test_a_failed_write_leaves_nothing_behind(make_index: IndexFactory) -> None:
    index = make_index()
    await index.write(DOCS[:1])
    bad = Record("bad", "不能序列化的负载", {"value": object()})
    with pytest.raises(TypeError):
        await index.write([Record("good", "这条也不能留下"), bad], delete=[("default", "zh-ml")])
    assert [r.id for r in await index.find()] == ["zh-ml"]
    assert await ids(index, "留下", mode="keyword") == []
    assert await ids(index, "这条也不能留下", limit=5, mode="vector") == ["zh-ml"]
    with pytest.raises(ValueError, match="appears twice"):
        await index.write([Record("x", "one"), Record("x", "two")])


async def test_unchanged_text_is_not_embedded_again(make_index: IndexFactory) -> None:
    embedder = CountingEmbedder()
    index = make_index(embedder)
    await index.write(DOCS)
    embedder.texts.clear()
    await index.write([Record("zh-ml", DOCS[0].text, {"importance": 1.0})])
    assert embedder.texts == []
    assert (await index.get(["zh-ml"]))[0].payload == {"importance": 1.0}
    assert await ids(index, DOCS[0].text, limit=1, mode="vector") == ["zh-ml"]


async def test_reopen_sees_everything_and_guards_the_dimension(make_index: IndexFactory) -> None:
    index = make_index("hash:64")
    await index.write(DOCS)
    await index.close()
    reopened = make_index("hash:64")
    assert await reopened.count() == 4
    assert await ids(reopened, "深度学习", limit=1, mode="vector") == ["zh-ml"]
    assert await ids(reopened, "沙发", mode="keyword") == ["zh-cat"]
    await reopened.close()
    wrong = make_index("hash:128")
    with pytest.raises(DimensionMismatch, match=r"built with embedder 'hash:64'"):
        await wrong.search("任何")


async def test_default_embedder_finds_meaning_without_shared_words(
    make_index: IndexFactory,
) -> None:
    index = make_index(load_embedder("auto"))
    await index.write(
        [
            Record("cat", "The cat is sleeping on the sofa"),
            Record("market", "Stock markets fell sharply on Monday"),
        ]
    )
    assert await ids(index, "a kitten naps on the couch", limit=1, mode="vector") == ["cat"]
    assert await ids(index, "shares dropped this week", limit=1, mode="vector") == ["market"]


def test_reciprocal_rank_fusion_rewards_agreement() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["b", "c"]], k=60)
    assert max(fused, key=fused.__getitem__) == "b"
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)


async def test_hnsw_graphs_search_update_persist_and_rebuild(tmp_path: Any) -> None:
    from toolweave.storage import SQLiteTextIndex
    from toolweave.storage.hnsw import HNSWVectors

    path = tmp_path / "hnsw.db"
    index = SQLiteTextIndex(path, "hash:64", hnsw_threshold=1)
    await index.write(DOCS)
    assert await ids(index, "深度学习", limit=1, mode="vector") == ["zh-ml"]
    assert isinstance(index._matrix, HNSWVectors)
    await index.write(delete=[("default", "zh-ml")])
    await index.write([Record("zh-new", "深度学习的新论文", collection="other")])
    assert "zh-ml" not in await ids(index, "深度学习", limit=4, mode="vector")
    assert await ids(index, "深度学习", limit=1, mode="vector", collection="other") == ["zh-new"]
    await index.close()
    assert (tmp_path / "hnsw.db.records.hnsw" / "manifest.json").exists()

    reopened = SQLiteTextIndex(path, "hash:64", hnsw_threshold=1)
    assert await ids(reopened, "深度学习", limit=1, mode="vector", collection="other") == ["zh-new"]
    assert reopened._hnsw_dirty is False  # loaded from disk, not rebuilt
    writer = SQLiteTextIndex(path, "hash:64", hnsw_threshold=None)
    await writer.write([Record("en-ml", "deep learning papers", collection="other")])
    await writer.close()
    found = await ids(reopened, "deep learning papers", limit=1, mode="vector", collection="other")
    assert found == ["en-ml"]  # another process's commit: rebuilt from the rows
    assert reopened._hnsw_dirty is True
    await reopened.close()
