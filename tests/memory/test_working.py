"""Working memory: capacity with lowest-priority eviction, a TTL, and the seed's hybrid score."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from toolweave.memory import MemoryArgumentError, MemoryManager
from toolweave.memory.types import utc_now
from toolweave.storage.retrieval import Embedder


@pytest.fixture
async def manager(tmp_path: Path, embedder: Embedder) -> MemoryManager:
    m = MemoryManager(
        tmp_path / "m.db", embedder=embedder, working_capacity=3, working_ttl_minutes=30
    )
    yield m  # type: ignore[misc]
    await m.close()


async def test_capacity_evicts_the_lowest_priority(manager: MemoryManager) -> None:
    keep = await manager.add("重要：明天九点开会", "working", 0.9)
    low = await manager.add("随手记的一句话", "working", 0.1)
    await manager.add("The user is debugging a flaky test", "working", 0.5)
    await manager.add("The user switched to the dark theme", "working", 0.5)
    assert len(manager.working) == 3
    assert await manager.get(low) is None and await manager.get(keep) is not None


async def test_ttl_expires_old_items(manager: MemoryManager) -> None:
    stale = await manager.add(
        "一小时前的想法", "working", 0.9, timestamp=utc_now() - timedelta(hours=1)
    )
    fresh = await manager.add("a thought from just now", "working", 0.2)
    assert await manager.get(stale) is None and await manager.get(fresh) is not None
    assert (await manager.stats())["types"]["working"]["count"] == 1


async def test_hybrid_score_follows_the_seed_formula(manager: MemoryManager) -> None:
    await manager.add(
        "用户在学习Python的装饰器", "working", 0.6, timestamp=utc_now() - timedelta(minutes=15)
    )
    await manager.add("用户喜欢喝乌龙茶", "working", 0.6)
    hits = await manager.search("Python 装饰器", memory_types=["working"], explain=True)
    assert [h.item.content for h in hits] == ["用户在学习Python的装饰器"]  # zero scores are dropped
    factors = hits[0].explanation
    assert factors is not None
    assert factors["keyword"] == 1.0 and 0 < factors["vector"] <= 1
    assert factors["time_decay"] == pytest.approx(0.5**0.5, abs=0.01)  # half a TTL old
    expected = (0.7 * factors["vector"] + 0.3 * factors["keyword"]) * factors["time_decay"]
    assert hits[0].score == pytest.approx(expected * (0.8 + 0.4 * 0.6))


def test_settings_are_checked(tmp_path: Path) -> None:
    with pytest.raises(MemoryArgumentError, match="working_capacity must be >= 1"):
        MemoryManager(tmp_path / "x.db", embedder="hash", working_capacity=0)
