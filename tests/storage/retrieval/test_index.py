"""The retrieval index: the same behaviour on SQLite and on Postgres + Qdrant.

Chinese and English words, substrings, short terms, payload filters, replacement and removal
from every index, all-or-nothing writes, the dimension guard and a reopen (restart).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from toolweave.storage import DimensionMismatch
from toolweave.storage.retrieval import HashEmbedder, Record, load_embedder, reciprocal_rank_fusion

IndexFactory = Callable[..., Any]

DOCS = [
    Record("zh-ml", "我喜欢机器学习和深度学习", {"lang": "zh", "importance": 0.9, "kind": "fact"}),
    Record("zh-cat", "猫在沙发上睡觉", {"lang": "zh", "importance": 0.4, "kind": "event"}),
    Record("en-py", "Python is a programming language", {"lang": "en", "importance": 0.7}),
    Record("en-db", "Postgres stores rows durably", {"lang": "en", "importance": 0.2}),
]


class CountingEmbedder:
    """Wraps an embedder and records the texts it was asked to embed and how many calls."""

    def __init__(self) -> None:
        self.inner = HashEmbedder(64)
        self.texts: list[str] = []
        self.calls = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Any:
        self.calls += 1
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


async def test_a_bulk_write_keeps_every_row_whole(make_index: IndexFactory) -> None:
    """1,203 records (several insert statements' worth), some holding control characters,
    backslashes, emoji and Chinese: every text, payload and vector comes back as written, and
    every record is found by its words, its substrings and its vector. A NUL character, which
    Postgres cannot store, is refused by both backends with the record named."""
    index = make_index()
    special = {
        7: "before\\u0000after 反斜杠 C:\\new",
        8: "tab\there\nnewline \x01 control 控制",
        9: "emoji 😀 e\u0301 قهوة 咖啡",
    }
    many = [
        Record(
            f"r{i}",
            special.get(i, f"记录{i}号 bulk record number{i}"),
            {"i": i, "tag": special.get(i, "plain")},
        )
        for i in range(1203)
    ]
    for bad, field in (
        (Record("nul", "a\x00b"), "text"),
        (Record("nul", "ok", {"note": ["a\x00b"]}), "payload"),
        (Record("a\x00b", "ok"), "id"),  # the id would be cut to "a"
        (Record("nul", "ok", collection="alice\x00bob"), "collection"),  # into alice's
    ):
        with pytest.raises(ValueError, match=f"has a NUL character .* in its {field}"):
            await index.write([*many[:3], bad])
    assert await index.count() == 0
    await index.write(many)
    stored = {r.id: r for r in await index.get([r.id for r in many])}
    assert [(stored[r.id].text, stored[r.id].payload) for r in many] == [
        (r.text, r.payload) for r in many
    ]
    for i in (0, 499, 500, 999, 1000, 1202):
        assert await ids(index, f"number{i}", mode="keyword") == [f"r{i}"]
        hits = await index.search(many[i].text, limit=5, mode="vector")
        assert any(h.record.id == f"r{i}" and h.score > 0.999 for h in hits)  # its own vector
    assert await ids(index, "反斜杠", mode="keyword") == ["r7"]
    assert await ids(index, "咖啡", mode="keyword") == ["r9"]
    await index.write(delete=[("default", f"r{i}") for i in range(0, 1203, 2)])
    assert await index.count() == 601
    assert await ids(index, "number1000", mode="keyword") == []
    assert await ids(index, "number1001", mode="keyword") == ["r1001"]


async def test_a_bulk_write_runs_a_few_statements_not_one_per_row(tmp_path: Any) -> None:
    """A statement per row would take the GIL back after every row, so a write thread beside
    any busy Python thread crawls; the SQLite index writes a chunk per statement."""
    from toolweave.storage.retrieval import SQLiteTextIndex

    index = SQLiteTextIndex(tmp_path / "few.db", HashEmbedder(16))
    await index.write(DOCS)
    statements: list[str] = []
    await index.db.run(lambda conn: conn.set_trace_callback(statements.append))
    await index.write([Record(f"m{i}", f"第{i}条 memory {i}") for i in range(2000)])
    ours = [s for s in statements if not s.startswith("--")]  # "--": FTS5's own, nested
    assert 0 < len(ours) < 40, ours
    statements.clear()
    await index.write(delete=[("default", f"m{i}") for i in range(2000)])
    await index.db.run(lambda conn: conn.set_trace_callback(None))
    # (a trigger firing is traced under its statement's text: the rows' DELETE shows per row)
    assert sum(s.startswith("DELETE FROM records_words") for s in statements) == 1
    assert await index.count() == len(DOCS)
    await index.close()


async def test_trigrams_read_the_rows_text_and_an_older_store_is_rebuilt(tmp_path: Any) -> None:
    """The trigram table indexes the rows' own text (no second copy) and stays exact through
    replacements, deletions and changes made by other code (FTS5's integrity check compares it
    with the rows); a store whose trigram table kept its own copy is rebuilt when opened, and
    finds the same."""
    import sqlite3

    from toolweave.storage.retrieval import SQLiteTextIndex

    path = tmp_path / "tri.db"
    index = SQLiteTextIndex(path, HashEmbedder(16))
    await index.write(DOCS)
    await index.write([Record("zh-cat", "狗在院子里跑 the dog runs", {"lang": "zh"})])
    await index.write(delete=[("default", "en-db")])

    def check(conn: sqlite3.Connection) -> None:  # rank 1: against the rows' text too
        conn.execute("INSERT INTO records_tri (records_tri, rank) VALUES ('integrity-check', 1)")

    await index.db.run(check)
    assert await ids(index, "ython", mode="keyword") == ["en-py"]
    assert await ids(index, "院子里", mode="keyword") == ["zh-cat"]
    assert await ids(index, "沙发上", mode="keyword") == []
    assert await ids(index, "durably", mode="keyword") == []
    assert await index.delete_where(where={"lang": "en"}) == 1
    await index.db.run(check)

    def older_code(conn: sqlite3.Connection) -> None:  # a row, then its FTS rows, by rowid
        rowid = conn.execute("SELECT rowid FROM records WHERE id = 'zh-ml'").fetchone()[0]
        for table in ("records", "records_words", "records_tri"):
            conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
        conn.execute("UPDATE records SET text = 'edited in place' WHERE id = 'zh-cat'")

    await index.db.transaction(older_code)
    await index.db.run(check)
    assert await ids(index, "deep", mode="keyword") == []
    assert await ids(index, "in plac", mode="keyword") == ["zh-cat"]
    await index.close()

    with sqlite3.connect(path) as conn:  # as a store made before looked
        conn.execute("DROP TABLE records_tri")
        conn.execute("CREATE VIRTUAL TABLE records_tri USING fts5(text, tokenize='trigram')")
        conn.execute("INSERT INTO records_tri (rowid, text) SELECT rowid, text FROM records")
    index = SQLiteTextIndex(path, HashEmbedder(16))
    sql = "SELECT sql FROM sqlite_master WHERE name = 'records_tri'"
    assert "content='records'" in (await index.db.run(lambda c: c.execute(sql).fetchone()))[0]
    await index.db.run(check)
    assert await index.count() == 1
    assert await ids(index, "in plac", mode="keyword") == ["zh-cat"]
    await index.write([Record("zh-cat", "猫又回来了")])
    await index.db.run(check)
    assert await ids(index, "in plac", mode="keyword") == []
    await index.close()


async def test_long_texts_are_written_in_smaller_chunks(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chunk is one SQLite value: long texts go in fewer to a statement (at least one)."""
    from toolweave.storage.retrieval import SQLiteTextIndex, _sqlite_rows

    monkeypatch.setattr(_sqlite_rows, "CHARS_PER_STATEMENT", 1_000)
    rows = [("c", f"r{i}", "x" * size, "{}", "x" * size) for i, size in enumerate([300] * 4)]
    assert _sqlite_rows._chunks(rows) == [(0, 1), (1, 2), (2, 3), (3, 4)]  # 900 chars each
    small = [("c", f"r{i}", "ab", "{}", "ab") for i in range(1_200)]
    assert _sqlite_rows._chunks(small) == [
        (0, 166),
        (166, 332),
        (332, 498),
        (498, 664),
        (664, 830),
        (830, 996),
        (996, 1162),
        (1162, 1200),
    ]
    assert _sqlite_rows._chunks([("c", "huge", "x" * 5_000, "{}", "x" * 5_000)]) == [(0, 1)]
    index = SQLiteTextIndex(tmp_path / "long.db", HashEmbedder(16))
    texts = [f"长文本 code{i}x " + "long words here " * (i % 40) for i in range(300)]
    await index.write([Record(f"t{i}", t) for i, t in enumerate(texts)])
    stored = {r.id: r.text for r in await index.get([f"t{i}" for i in range(300)])}
    assert [stored[f"t{i}"] for i in range(300)] == texts
    assert await ids(index, "code299x", mode="keyword") == ["t299"]
    await index.close()


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


class FlakyEmbedder(CountingEmbedder):
    """Fails (or, with `release`, waits for it) once asked for more than `after` texts."""

    def __init__(self, after: int, release: Any = None) -> None:
        super().__init__()
        self.after, self.release = after, release
        self.reached = threading.Event()

    def embed(self, texts: Sequence[str]) -> Any:
        if len(self.texts) + len(texts) > self.after and not self.reached.is_set():
            self.reached.set()
            if self.release is None:
                raise RuntimeError("the embedding service went away")
            self.release.wait()
        return super().embed(texts)


async def test_an_embedder_failing_mid_write_rolls_the_whole_write_back(
    make_index: IndexFactory,
) -> None:
    """An embedder that fails partway through a bulk write (here: past 600 texts) leaves
    nothing of the write behind, deletions included."""
    index = make_index(FlakyEmbedder(after=600))
    await index.write(DOCS[:1])
    many = [Record(f"m{i}", f"第{i}条记忆 memory number {i}") for i in range(1000)]
    with pytest.raises(RuntimeError, match="went away"):
        await index.write(many, delete=[("default", "zh-ml")])
    assert [r.id for r in await index.find()] == ["zh-ml"]
    assert await ids(index, "memory number", mode="keyword") == []
    await index.write(many[:10])  # and the index keeps working
    assert await index.count() == 11


async def test_a_cancelled_write_rolls_back_and_frees_the_database(tmp_path: Any) -> None:
    from toolweave.storage.retrieval import SQLiteTextIndex

    release = threading.Event()
    embedder = FlakyEmbedder(after=300, release=release)
    index = SQLiteTextIndex(tmp_path / "cancel.db", embedder)
    many = [Record(f"m{i}", f"memory number {i}") for i in range(1000)]
    task = asyncio.ensure_future(index.write(many))
    await asyncio.to_thread(embedder.reached.wait)  # cancelled while the embedder works
    task.cancel()
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await index.count() == 0
    await index.write(many[:3])
    assert await index.count() == 3
    await index.close()


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
    from toolweave.storage.retrieval import SQLiteTextIndex
    from toolweave.storage.retrieval.hnsw import HNSWVectors

    path = tmp_path / "hnsw.db"
    index = SQLiteTextIndex(path, "hash:64", hnsw_threshold=1)
    await index.write(DOCS)
    assert await ids(index, "深度学习", limit=1, mode="vector") == ["zh-ml"]
    assert await index.build_graph() is True
    assert isinstance(index.vectors.current, HNSWVectors)
    await index.write(delete=[("default", "zh-ml")])
    await index.write([Record("zh-new", "深度学习的新论文", collection="other")])
    assert "zh-ml" not in await ids(index, "深度学习", limit=4, mode="vector")
    assert await ids(index, "深度学习", limit=1, mode="vector", collection="other") == ["zh-new"]
    await index.close()
    assert (tmp_path / "hnsw.db.records.hnsw" / "manifest.json").exists()

    reopened = SQLiteTextIndex(path, "hash:64", hnsw_threshold=1)
    assert await ids(reopened, "深度学习", limit=1, mode="vector", collection="other") == ["zh-new"]
    assert isinstance(reopened.vectors.current, HNSWVectors)
    assert reopened.vectors.dirty is False  # loaded from disk, not rebuilt
    writer = SQLiteTextIndex(path, "hash:64", hnsw_threshold=None)
    await writer.write([Record("en-ml", "deep learning papers", collection="other")])
    await writer.close()
    found = await ids(reopened, "deep learning papers", limit=1, mode="vector", collection="other")
    assert found == ["en-ml"]  # another process's commit: reloaded from the rows
    assert await reopened.build_graph() is True
    assert reopened.vectors.dirty is True
    found = await ids(reopened, "deep learning papers", limit=1, mode="vector", collection="other")
    assert found == ["en-ml"]
    await reopened.close()


async def test_hnsw_graph_builds_in_the_background_and_replays_writes_made_meanwhile(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Searches stay exact while the graph builds; rows added, replaced and removed during the
    build are in the graph (or gone from it) when it takes over."""
    import threading

    from toolweave.storage.retrieval import SQLiteTextIndex
    from toolweave.storage.retrieval._background import SearchGate
    from toolweave.storage.retrieval.hnsw import HNSWVectors
    from toolweave.storage.retrieval.vectors import VectorMatrix

    started, release = threading.Event(), threading.Event()
    original_wait = SearchGate.wait_idle

    def held_before_each_chunk(self: SearchGate, stop: threading.Event) -> None:
        if threading.current_thread().name == "toolweave-hnsw":
            started.set()
            release.wait()
        original_wait(self, stop)

    monkeypatch.setattr(SearchGate, "wait_idle", held_before_each_chunk)
    index = SQLiteTextIndex(tmp_path / "bg.db", "hash:64", hnsw_threshold=len(DOCS))
    await index.write(DOCS)
    assert await ids(index, "深度学习", limit=1, mode="vector") == ["zh-ml"]
    await asyncio.to_thread(started.wait)  # the build is running, held at its first chunk
    assert isinstance(index.vectors.current, VectorMatrix)
    await index.write([Record("zh-new", "强化学习的新论文"), Record("en-py", "Rust is fast")])
    await index.write(delete=[("default", "zh-cat")])
    assert await ids(index, "强化学习的新论文", limit=1, mode="vector") == ["zh-new"]
    release.set()
    assert await index.build_graph() is True
    assert isinstance(index.vectors.current, HNSWVectors)
    assert await ids(index, "强化学习的新论文", limit=1, mode="vector") == ["zh-new"]
    assert await ids(index, "Rust is fast", limit=1, mode="vector") == ["en-py"]
    found = await ids(index, "猫在沙发上睡觉", limit=5, mode="vector")
    assert "zh-cat" not in found and len(found) == 4
    await index.close()


async def test_a_saved_graph_is_never_taken_for_rows_it_does_not_hold(tmp_path: Any) -> None:
    """Replacing the newest row reuses its row id (count, max and sum stay the same), and a
    graph saved by a process that missed another's write would look current: the write
    counter in the fingerprint and the check at close keep both from being loaded."""
    from toolweave.storage.retrieval import SQLiteTextIndex

    path = tmp_path / "fp.db"
    index = SQLiteTextIndex(path, "hash:64", hnsw_threshold=1)
    await index.write(DOCS)
    assert await index.build_graph() is True
    await index.close()  # saves the graph
    writer = SQLiteTextIndex(path, "hash:64", hnsw_threshold=None)
    await writer.write([Record("en-db", "Qdrant clusters vectors")])  # the newest row, replaced
    reopened = SQLiteTextIndex(path, "hash:64", hnsw_threshold=1)
    assert await ids(reopened, "Qdrant clusters vectors", limit=1, mode="vector") == ["en-db"]
    assert await reopened.build_graph() is True
    assert reopened.vectors.dirty is True  # built again from the rows, not the stale file
    await reopened.write([Record("zh-new", "新的记忆")])
    await writer.write([Record("late", "written by another process after the graph")])
    await reopened.close()  # its graph lacks "late": not saved as current
    await writer.close()
    again = SQLiteTextIndex(path, "hash:64", hnsw_threshold=1)
    found = await ids(again, "written by another process after the graph", limit=1, mode="vector")
    assert found == ["late"]
    assert await again.build_graph() is True
    assert again.vectors.dirty is True
    await again.close()


async def test_a_failed_vector_update_after_commit_reloads_instead_of_raising(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The write has committed when the in-memory vectors take it; if that fails, the caller
    is not told the write failed, and the next search reads the vectors from the rows."""
    from toolweave.storage.retrieval import SQLiteTextIndex
    from toolweave.storage.retrieval.vectors import VectorMatrix

    index = SQLiteTextIndex(tmp_path / "apply.db", "hash:64", hnsw_threshold=None)
    await index.write(DOCS)
    assert await ids(index, "深度学习", limit=1, mode="vector") == ["zh-ml"]  # loaded
    original = VectorMatrix.add
    failures = iter([RuntimeError("out of memory")])

    def failing_add(self: VectorMatrix, *args: Any) -> None:
        error = next(failures, None)
        if error is not None:
            raise error
        original(self, *args)

    monkeypatch.setattr(VectorMatrix, "add", failing_add)
    await index.write([Record("zh-new", "强化学习的新论文")])  # does not raise
    assert "reloading" in caplog.text
    assert await ids(index, "强化学习的新论文", limit=1, mode="vector") == ["zh-new"]
    await index.close()


async def test_every_match_of_a_common_term_is_scored_ties_go_to_the_newest(
    tmp_path: Any,
) -> None:
    """Keyword search scores every match of a word, however common (`rank_cap` bounds only
    substring matches): an old exact name is found, a shorter old record holding a common word
    outranks the newer longer ones, and equal scores go to the newest records."""
    from toolweave.storage.retrieval import SQLiteTextIndex

    with pytest.raises(ValueError, match="rank_cap"):
        SQLiteTextIndex(tmp_path / "zero.db", "hash:64", rank_cap=0)
    index = SQLiteTextIndex(tmp_path / "cap.db", "hash:64", rank_cap=10)
    old = [Record("old-zh", "张伟 喜欢 乌龙茶"), Record("old-en", "Zorblax likes tea")]
    common = [Record(f"n{i}", f"大家 喜欢 乌龙茶 tea number {i}") for i in range(50)]
    await index.write(old)
    await index.write(common)
    assert [h.record.id for h in await index.keyword_search("张伟 乌龙茶", limit=1)] == ["old-zh"]
    assert [h.record.id for h in await index.keyword_search("Zorblax tea", limit=1)] == ["old-en"]
    # No record has both terms: the rare one's match still ranks first.
    found = await index.keyword_search("Zorblax 乌龙茶", limit=3)
    assert found[0].record.id == "old-en"
    newest = await index.keyword_search("乌龙茶", limit=5)
    assert [h.record.id for h in newest] == ["old-zh", "n49", "n48", "n47", "n46"]
    # A filter that rejects the newest matches widens the bound until enough pass.
    await index.write([Record("u2", "乌龙茶 for the other user", collection="u2")])
    others = [Record(f"o{i}", f"乌龙茶 other user note {i}", collection="u3") for i in range(30)]
    await index.write(others)
    found = await index.keyword_search("乌龙茶", limit=3, collection="u2")
    assert [h.record.id for h in found] == ["u2"]
    found = await index.keyword_search("乌龙茶", limit=3, where=None)
    assert len(found) == 3 and all(h.record.collection == "default" for h in found)
    await index.close()


async def test_the_recorded_embedder_is_the_one_the_vectors_were_made_with(
    make_index: IndexFactory,
) -> None:
    index = make_index("hash:64")
    await index.write(DOCS[:1])
    assert await index.recorded_embedder() == ("hash:64", 64)
    await index.close()
    other = make_index("hash:128")
    if make_index.backend == "sqlite":  # type: ignore[attr-defined]
        assert await other.recorded_embedder() == ("hash:64", 64)  # read without the vectors
    else:  # opening Postgres checks the embedder first
        with pytest.raises(DimensionMismatch, match=r"built with embedder 'hash:64'"):
            await other.recorded_embedder()


EXIT_DURING_BUILD = """
import asyncio, sys
from toolweave.storage.retrieval import Record
from toolweave.storage.retrieval.sqlite_index import SQLiteTextIndex

async def main() -> None:
    index = SQLiteTextIndex(sys.argv[1], "hash:64", hnsw_threshold=1000)
    await index.write([Record(f"r{i}", f"text {i} about topic {i % 97}") for i in range(30000)])
    await index.search("topic 5", limit=3)  # loads the vectors: the graph build starts
    print("building" if index.vectors._builder is not None else "built", flush=True)

asyncio.run(main())  # no close(): the interpreter exits with the build running
"""


def test_a_script_that_exits_during_a_graph_build_does_not_abort(tmp_path: Path) -> None:
    """Issue 37: the daemon builder killed inside usearch at exit aborted the process
    ("terminate called without an active exception"); an atexit hook stops it first."""
    script = tmp_path / "exit.py"
    script.write_text(EXIT_DURING_BUILD, encoding="utf-8")
    ran = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "exit.db")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "terminate called" not in ran.stderr
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() in ("building", "built")
