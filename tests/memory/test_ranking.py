"""Memory ranking: relevance first, importance and recency only as a bounded tie-break, and
the three search modes, on both backends."""

from __future__ import annotations

import pytest

from tests.memory.conftest import ManagerFactory
from toolweave.memory import MemoryArgumentError


async def test_an_exact_match_beats_an_important_weak_match(make_manager: ManagerFactory) -> None:
    m = make_manager()
    await m.add("Project Falcon kickoff meeting notes!", "episodic", 0.95)
    await m.add("Quarterly budget review for Falcon.", "episodic", 0.5)
    hits = await m.search("Quarterly budget review Falcon", limit=2, explain=True)
    assert [h.item.content for h in hits] == [
        "Quarterly budget review for Falcon.",
        "Project Falcon kickoff meeting notes!",
    ]
    exact, weak = (h.explanation for h in hits)
    assert exact is not None and weak is not None
    assert exact["relevance"] - weak["relevance"] > exact["tie_band"]


async def test_importance_reorders_only_memories_of_close_relevance(
    make_manager: ManagerFactory,
) -> None:
    m = make_manager()
    await m.add("The user likes green tea, said on Monday.", "episodic", 0.2)
    await m.add("The user likes green tea, said on Friday.", "episodic", 0.9)
    hits = await m.search("user likes green tea", limit=2, explain=True)
    assert [h.item.importance for h in hits] == [0.9, 0.2]
    first, second = (h.explanation for h in hits)
    assert first is not None and second is not None
    assert abs(first["relevance"] - second["relevance"]) < first["tie_band"]


async def test_search_modes(make_manager: ManagerFactory) -> None:
    m = make_manager()
    await m.add("Alice moved to Lisbon in spring.", "episodic")
    await m.add("我最近在学习机器学习", "episodic")
    keyword = await m.search("Lisbon", mode="keyword", explain=True)
    assert [h.item.content for h in keyword] == ["Alice moved to Lisbon in spring."]
    assert keyword[0].explanation is not None
    assert keyword[0].explanation["vector_score"] is None
    vector = await m.search("Lisbon", mode="vector", explain=True)
    assert vector and all(
        h.explanation is not None and h.explanation["keyword_rank"] is None for h in vector
    )
    assert (await m.search("学习", mode="keyword"))[0].item.content == "我最近在学习机器学习"
    with pytest.raises(MemoryArgumentError, match="mode must be one of"):
        await m.search("x", mode="fuzzy")  # type: ignore[arg-type]
