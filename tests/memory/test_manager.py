"""MemoryManager on SQLite and on Postgres + Qdrant: the four types, in Chinese and English."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from toolweave.errors import ConfigError
from toolweave.memory import MemoryArgumentError, MemoryManager, Relation
from toolweave.memory.types import utc_now
from toolweave.storage.retrieval import IndexSettings

ManagerFactory = Callable[..., MemoryManager]


async def contents(manager: MemoryManager, query: str, **kwargs: Any) -> list[str]:
    return [hit.item.content for hit in await manager.search(query, **kwargs)]


async def test_the_four_types_store_and_return_their_fields(make_manager: ManagerFactory) -> None:
    m = make_manager()
    ids = {
        "working": await m.add("用户刚才问了关于Python函数的问题", "working", 0.6),
        "episodic": await m.add(
            "2024年3月15日，用户张三完成了第一个Python项目",
            "episodic",
            0.8,
            {"event_type": "milestone", "location": "在线学习平台"},
            timestamp="2024-03-15T10:00:00+00:00",
        ),
        "semantic": await m.add(
            "Python is an interpreted, object-oriented language", "semantic", 0.9
        ),
        "perceptual": await m.add(
            "用户上传了一张Python代码截图，包含函数定义",
            "perceptual",
            0.7,
            file_path="./uploads/code_screenshot.png",
        ),
    }
    for kind, id_ in ids.items():
        item = await m.get(id_)
        assert item is not None and item.memory_type == kind and item.user_id == "default"
    episode = await m.get(ids["episodic"])
    assert episode is not None and episode.timestamp.year == 2024
    assert episode.metadata == {"event_type": "milestone", "location": "在线学习平台"}
    picture = await m.get(ids["perceptual"])
    assert picture is not None
    assert picture.metadata == {"modality": "image", "file_path": "./uploads/code_screenshot.png"}
    assert await m.get("no-such-id") is None
    stats = await m.stats()
    assert {k: v["count"] for k, v in stats["types"].items()} == dict.fromkeys(ids, 1)
    assert stats["total"] == 4 and stats["dim"] == 256


async def test_identical_content_returns_the_existing_id(make_manager: ManagerFactory) -> None:
    m = make_manager()
    first = await m.add("我住在上海", "episodic")
    assert await m.add("我住在上海", "episodic") == first
    assert await m.add("  我住在上海 ", "episodic", importance=0.9) == first
    assert await m.add("scratch note", "working") == await m.add("scratch note", "working")
    ids = await m.add_many([{"content": "我住在上海", "memory_type": "episodic"}] * 3)
    assert ids == [first] * 3
    assert (await m.stats())["types"]["episodic"]["count"] == 1


async def test_search_finds_chinese_words_english_words_and_explains(
    make_manager: ManagerFactory,
) -> None:
    m = make_manager()
    await m.add_many(
        [
            {
                "content": "我最近在学习机器学习和深度学习",
                "memory_type": "episodic",
                "importance": 0.7,
            },
            {"content": "周末和朋友去爬山，天气很好", "memory_type": "episodic", "importance": 0.5},
            {"content": "The user prefers dark mode in every editor", "memory_type": "semantic"},
            {"content": "Meeting with the design team moved to Friday", "memory_type": "episodic"},
        ]
    )
    assert (await contents(m, "学习", limit=1))[0] == "我最近在学习机器学习和深度学习"
    assert (await contents(m, "爬山", limit=1))[0] == "周末和朋友去爬山，天气很好"
    assert (await contents(m, "dark mode", limit=1))[0].startswith("The user prefers dark mode")
    hits = await m.search("design meeting", limit=2, explain=True)
    top = hits[0]
    assert top.item.content.startswith("Meeting with the design team")
    assert top.explanation is not None
    assert top.explanation["keyword_rank"] == 1 and top.explanation["vector_score"] > 0
    assert top.explanation["formula"] == "relevance + 0.05 * (0.5 importance + 0.5 recency)"
    factors = top.explanation
    expected = factors["relevance"] + factors["tie_band"] * (
        0.5 * factors["importance"] + 0.5 * factors["recency"]
    )
    assert top.score == pytest.approx(expected)
    assert factors["keyword_score"] > 0 and factors["fused"] == factors["relevance"]
    assert (await m.search("design meeting"))[0].explanation is None
    only_semantic = await m.search("学习 editor", memory_types=["semantic"])
    assert {h.item.memory_type for h in only_semantic} == {"semantic"}
    assert await m.search("爬山", min_importance=0.9) == []


@pytest.mark.parametrize(
    ("three", "once"),
    [
        (
            "The worker reads max_retries, MAX-RETRIES wins and max retries is logged",
            "Set max_retries in the config",
        ),
        ("重试 max_retries 三次，MAX-RETRIES 默认，max retries 写入日志", "配置里的 max_retries"),
    ],
)
async def test_a_snake_case_term_is_scored_in_every_spelling(
    make_manager: ManagerFactory, three: str, once: str
) -> None:
    """The term "max_retries" is the words "max" and "retries" to the index: a memory naming it
    three times (underscore, hyphen, space) ranks above one naming it once, and both explain a
    positive keyword score."""
    m = make_manager()
    await m.add_many(
        [
            {"content": three, "memory_type": "semantic"},
            {"content": once, "memory_type": "semantic"},
            {"content": "The user prefers dark mode in every editor", "memory_type": "semantic"},
        ]
    )
    hits = await m.search("max_retries", limit=3, mode="keyword", explain=True)
    assert [h.item.content for h in hits] == [three, once]
    scores = [h.explanation["keyword_score"] for h in hits if h.explanation]
    assert len(scores) == 2 and scores[0] > scores[1] > 0


async def test_perceptual_memory_filters_by_modality(make_manager: ManagerFactory) -> None:
    m = make_manager()
    await m.add("会议录音：讨论了第三季度预算", "perceptual", file_path="meeting.mp3")
    await m.add(
        "A photo of the whiteboard with the budget plan", "perceptual", file_path="board.jpg"
    )
    await m.add("预算表格的文字说明", "perceptual", modality="text")
    audio = await m.search("预算 budget", modality="audio", limit=5)
    assert [h.item.metadata["modality"] for h in audio] == ["audio"]
    images = await m.search("budget", modality="image", limit=5)
    assert [h.item.content for h in images] == ["A photo of the whiteboard with the budget plan"]
    with pytest.raises(MemoryArgumentError, match="modality must be one of"):
        await m.add("x", "perceptual", modality="smell")
    with pytest.raises(MemoryArgumentError, match="belong to perceptual memories"):
        await m.add("x", "episodic", file_path="a.png")


async def test_semantic_graph_from_explicit_and_extracted_relations(
    make_manager: ManagerFactory,
) -> None:
    m = make_manager()
    await m.add("张三住在北京", "semantic", 0.8)
    await m.add("张三在阿里巴巴工作", "semantic", 0.8)
    await m.add(
        "Bob manages the search team", "semantic", relations=[("Bob", "manages", "search team")]
    )
    related = await m.related("张三")
    assert {(r.predicate, r.object) for r in related} == {("住在", "北京"), ("工作于", "阿里巴巴")}
    assert [(r.subject, r.predicate, r.object) for r in await m.related("bob")] == [
        ("Bob", "manages", "search team")
    ]
    hits = await m.search("张三", memory_types=["semantic"], explain=True)
    assert {h.item.content for h in hits[:2]} == {"张三住在北京", "张三在阿里巴巴工作"}
    assert hits[0].explanation is not None and hits[0].explanation["graph"] == 1.0
    assert (await m.stats())["entities"] == 5
    with pytest.raises(MemoryArgumentError, match=r"relations\[0\] must be a"):
        await m.add("bad", "semantic", relations=[("only", "two")])


async def test_a_contradicting_fact_supersedes_and_history_stays(
    make_manager: ManagerFactory,
) -> None:
    m = make_manager()
    paris = await m.add("Alice lives in Paris.", "semantic", 0.8)
    before = utc_now()
    london = await m.add("Alice lives in London.", "semantic", 0.8)
    old = await m.get(paris)
    assert old is not None and old.superseded_by == london and old.valid_to is not None
    assert old.content == "Alice lives in Paris."  # kept, never deleted
    current = await contents(m, "Where does Alice live?", memory_types=["semantic"])
    assert current == ["Alice lives in London."]
    then = await contents(m, "Alice", memory_types=["semantic"], as_of=before)
    assert then == ["Alice lives in Paris."]
    assert [r.object for r in await m.related("Alice")] == ["London"]
    # An update with new content supersedes too.
    newer = await m.update(london, content="Alice lives in Berlin.")
    assert newer is not None and newer.id != london and newer.content == "Alice lives in Berlin."
    replaced = await m.get(london)
    assert replaced is not None and replaced.superseded_by == newer.id
    assert [r.object for r in await m.related("Alice")] == ["Berlin"]
    stats = (await m.stats())["types"]["semantic"]
    assert stats == {"count": 3, "current": 1, "superseded": 2}
    with pytest.raises(MemoryArgumentError, match="was superseded"):
        await m.update(paris, content="Alice lives in Rome.")
    # Chinese, heuristic extraction: 住在 is single-valued.
    await m.add("李四住在杭州", "semantic")
    await m.add("李四住在深圳", "semantic")
    assert await contents(m, "李四", memory_types=["semantic"]) == ["李四住在深圳"]


async def test_update_and_remove_reach_every_index(make_manager: ManagerFactory) -> None:
    m = make_manager()
    keep = await m.add("今天学习了Rust的所有权", "episodic", 0.5, {"course": "rust"})
    doomed = await m.add("The cat knocked the vase over", "episodic")
    item = await m.update(keep, importance=0.95, metadata={"mood": "happy"})
    assert item is not None and item.importance == 0.95
    assert item.metadata == {"course": "rust", "mood": "happy"}
    changed = await m.update(keep, content="今天学习了Go的并发")
    assert changed is not None and changed.id == keep  # only semantic facts are versioned
    assert "今天学习了Rust的所有权" not in await contents(m, "所有权 Rust", limit=5)
    assert (await m.search("并发", limit=1))[0].item.id == keep
    assert await m.remove(doomed) is True
    assert await m.remove(doomed) is False
    assert await m.get(doomed) is None
    assert all(h.item.id != doomed for h in await m.search("cat vase", limit=10))
    assert await m.update("missing", importance=0.1) is None
    working = await m.add("临时的想法", "working")
    assert await m.remove(working) is True and await m.get(working) is None


async def test_forget_by_importance_age_and_capacity(make_manager: ManagerFactory) -> None:
    m = make_manager(max_memories=2)
    old = utc_now() - timedelta(days=90)
    await m.add("不重要的小事", "episodic", 0.05)
    await m.add("low value note", "working", 0.05)
    await m.add("三个月前的旅行", "episodic", 0.6, timestamp=old)
    await m.add("an important recent fact", "semantic", 0.9)
    await m.add("a middling recent event", "episodic", 0.5)
    assert await m.forget("importance_based", threshold=0.1) == 2
    assert await m.forget("time_based", max_age_days=30) == 1
    await m.add("another low one", "episodic", 0.2)
    assert await m.forget("capacity_based") == 1
    remaining = {h.item.content for h in await m.search("fact event one", limit=10)}
    assert remaining == {"an important recent fact", "a middling recent event"}
    with pytest.raises(MemoryArgumentError, match="strategy must be one of"):
        await m.forget("random")


async def test_consolidation_moves_important_memories_and_caps_importance(
    make_manager: ManagerFactory,
) -> None:
    m = make_manager()
    keep = await m.add("用户决定把项目迁移到Postgres", "working", 0.95)
    await m.add("a passing thought", "working", 0.3)
    assert await m.consolidate("working", "episodic", importance_threshold=0.7) == 1
    moved = await m.get(keep)
    assert moved is not None and moved.memory_type == "episodic" and moved.importance == 1.0
    assert len(m.working) == 1
    assert await m.consolidate("episodic", "semantic", importance_threshold=0.8) == 1
    fact = await m.get(keep)
    assert fact is not None and fact.memory_type == "semantic"
    assert (await m.stats())["types"]["episodic"]["count"] == 0
    with pytest.raises(MemoryArgumentError, match="different persistent type"):
        await m.consolidate("episodic", "working")


async def test_a_failed_consolidation_loses_nothing(
    make_manager: ManagerFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = make_manager()
    await m.add("重要的工作记忆", "working", 0.9)

    async def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(m.index, "write", broken)
    with pytest.raises(OSError, match="disk full"):
        await m.consolidate()
    monkeypatch.undo()
    assert [i.content for i in m.working.items()] == ["重要的工作记忆"]
    assert (await m.stats())["types"]["episodic"]["count"] == 0


async def test_users_are_isolated_and_clear_all(make_manager: ManagerFactory) -> None:
    alice = make_manager(user_id="alice")
    bob = alice.for_user("bob")
    await alice.add("alice's secret plan", "episodic")
    await bob.add("bob's grocery list", "episodic")
    assert await contents(bob, "alice's secret plan") == []
    assert await contents(bob, "grocery") == ["bob's grocery list"]
    assert await alice.clear_all() == 1
    assert (await alice.stats())["total"] == 0
    assert (await bob.stats())["total"] == 1
    summary = await bob.summary()
    assert "bob's grocery list" in summary and "episodic: 1" in summary


async def test_reopening_sees_everything_but_working_memory(make_manager: ManagerFactory) -> None:
    m = make_manager()
    fact = await m.add("数据库连接池的大小设为20", "semantic", 0.7)
    await m.add("just a working note", "working")
    await m.close()
    again = make_manager()
    assert (await again.get(fact)) is not None
    assert (await again.search("连接池", limit=1))[0].item.id == fact
    assert (await again.stats())["types"]["working"]["count"] == 0


async def test_bad_arguments_name_the_field(make_manager: ManagerFactory) -> None:
    m = make_manager()
    cases: list[tuple[Any, str]] = [
        (m.add("", "episodic"), "content must be a non-empty string"),
        (m.add("x", "dream"), "memory_type must be one of"),
        (m.add("a\x00b", "episodic"), r"content holds a NUL character \(\\x00\)"),
        (m.add("x", "episodic", metadata={"k": ["a\x00b"]}), "metadata holds a NUL"),
        (m.add("x", "episodic", importance=1.5), "importance must be a number from 0 to 1"),
        (m.add("x", "episodic", timestamp="yesterday"), "timestamp must be"),
        (m.add("x", "episodic", metadata={"k": object()}), "metadata must be JSON"),
        (m.search("x", limit=0), "limit must be an integer from 1 to 100"),
        (m.search("x", limit=10**6), r"\(max_search_limit\)"),
        (m.search("x", memory_types=["nope"]), "memory_types must be one of"),
        (m.add_many([{"content": "x", "colour": "red"}]), r"items\[0\]"),
    ]
    for call, message in cases:
        with pytest.raises(MemoryArgumentError, match=message):
            await call
    for bad_user in ("", "alice\x00bob"):  # with NUL: a write would land in alice's memories
        with pytest.raises(MemoryArgumentError, match="user_id must be"):
            MemoryManager(":memory:", user_id=bad_user)
    with pytest.raises(ConfigError, match="dsn= needs a vector store: pass qdrant_url"):
        MemoryManager(index=IndexSettings(dsn="postgresql://localhost/x"))


async def test_model_extracts_relations_after_the_write(make_manager: ManagerFactory) -> None:
    from toolweave.llm import FunctionModel, Message, TextPart

    model = FunctionModel(
        lambda request: Message("assistant", [TextPart('[["Carol", "speaks", "Mandarin"]]')])
    )
    m = make_manager(model=model)
    id_ = await m.add("Carol is fluent in Mandarin", "semantic")
    await m.wait_for_background()
    item = await m.get(id_)
    assert item is not None
    assert [r.as_list() for r in item.relations] == [["Carol", "speaks", "Mandarin"]]
    assert await m.related("Mandarin") == [Relation("Carol", "speaks", "Mandarin", id_)]
    assert "Carol is fluent in Mandarin" in model.requests[0].messages[0].parts[0].text  # type: ignore[union-attr]


async def test_common_words_in_every_memory_still_find_the_exact_one(
    make_manager: ManagerFactory,
) -> None:
    """1,500 memories, all holding the query's common words (more matches than keyword search
    ranks by bm25): the one with the query's rare number ranks first, in English and Chinese."""
    m = make_manager()
    await m.add_many(
        {
            "content": f"topic {i % 10} item {i % 100}: status report {i}"
            if i % 2
            else f"主题{i % 10}的第{i % 100}项：状态报告，编号{i}",
            "memory_type": "episodic",
        }
        for i in range(1_500)
    )
    found = await contents(m, "topic 7 item 17 report 717", limit=3)
    assert found[0] == "topic 7 item 17: status report 717"
    found = await contents(m, "主题 状态报告 编号 1234", limit=3)
    assert found[0] == "主题4的第34项：状态报告，编号1234"


def test_ids_stay_unique_whatever_the_caller_seeds_and_after_a_fork() -> None:
    """Ids draw their random bits from a generator of their own: `random.seed()` in the caller
    (an eval harness, a test) never makes two memories share an id, and a forked child draws
    other bits than its parent."""
    import os
    import random

    from toolweave.memory._codec import new_id

    random.seed(7)
    first = new_id()
    random.seed(7)
    assert new_id()[12:] != first[12:]  # past the millisecond timestamp
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its ids, then out without running any cleanup
        os.write(write, "".join(new_id()[12:] for _ in range(8)).encode())
        os._exit(0)
    os.close(write)
    child = os.read(read, 4096).decode()
    os.waitpid(pid, 0)
    parent = "".join(new_id()[12:] for _ in range(8))
    assert len(child) == len(parent) and child != parent
