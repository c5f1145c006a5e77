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


DAYS = [
    "Bart flew a kite at the beach and felt very happy.",
    "Bart won the 100 meters race at school.",
    "Bart ate mango ice cream at the new shop.",
    "Lisa swam in the ocean by the seaside last summer.",
    "Lisa built sandcastles near the waves with her dad.",
    "Bart received a bouquet of roses at his birthday party.",
    "Grandpa grew tomatoes in the garden.",
    "The cat knocked the vase over.",
    "Bart danced at the Christmas party.",
    "Surfing lessons thrilled everybody.",
    "Quantum mechanics bored everybody.",
    "Seaside holidays delight kids.",
    "Tax returns are due in April.",
    "Invoice 4471 overdue.",
    "Zebras graze quietly.",
]
CONVERSATION = (
    "Bart: Hey, guess what, we are going to the coast this weekend! Assistant: That sounds"
    " wonderful, what are you planning to do there? Bart: I want to play in the sand and maybe"
    " fly something in the wind. Assistant: Great idea, the breeze near the water is perfect"
    " for that. Bart: Do you think the weather will be sunny? Assistant: The forecast says warm"
    " and bright, just right for a day outdoors with family and friends."
)


async def test_min_similarity_never_drops_what_hybrid_search_keeps(
    make_manager: ManagerFactory,
) -> None:
    """A memory only the vectors found, below `min_similarity`, stays when the index's hybrid
    ranking puts it at or above a keyword match (a long conversational query weighs the
    vectors 0.7), in hybrid and in vector mode; below every keyword match the floor still drops
    it. Oracle: the index's own hybrid ranking, cut after its last keyword match."""
    m = make_manager()
    for day in DAYS:
        await m.add(day, "episodic")
    ranked = await m.index.search(CONVERSATION, limit=50, collection=m.user_id, mode="hybrid")
    last = max(i for i, hit in enumerate(ranked) if hit.keyword_rank is not None)
    kept = {hit.record.text for hit in ranked[: last + 1]}
    hits = await m.search(CONVERSATION, limit=50)
    assert {h.item.content for h in hits} == kept
    vector_only = {h.record.text: h.vector_score or 0.0 for h in ranked if h.keyword_rank is None}
    below = {text for text, cosine in vector_only.items() if cosine < m.min_similarity}
    assert below & kept, "a vector-only memory below the floor that hybrid keeps"
    assert below - kept, "a vector-only memory below every keyword match is still dropped"
    # Vector mode keeps what hybrid keeps too, and drops the rest under the floor.
    by_vector = {h.item.content for h in await m.search(CONVERSATION, limit=50, mode="vector")}
    assert below & kept <= by_vector and not (below - kept) & by_vector
