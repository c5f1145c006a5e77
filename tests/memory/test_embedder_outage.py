"""Memory whose OpenAI-compatible embedder is down: it remembers and recalls by keywords with a
warning in the hits, the tool's output and `stats`, then embeds what it missed once the endpoint
answers (both backends, a real HTTP endpoint on loopback)."""

from __future__ import annotations

from tests.memory.conftest import ManagerFactory
from tests.outage_embedder import NO_WAIT, Endpoint, endpoint, spec
from toolweave.memory import MemoryTool
from toolweave.storage.retrieval import IndexSettings
from toolweave.tools import ToolContext

__all__ = ["endpoint"]  # the fixture


async def test_memory_recalls_by_keywords_while_its_embedder_is_down(
    make_manager: ManagerFactory, endpoint: Endpoint
) -> None:
    endpoint.down()
    memory = make_manager(embedder=spec(endpoint), index=IndexSettings(embed_retry=NO_WAIT))
    await memory.add("The user drinks oolong tea every morning", memory_type="semantic")
    await memory.add("用户养了一只橘猫", memory_type="episodic")
    hits = await memory.search("oolong tea")
    assert [h.item.content for h in hits][:1] == ["The user drinks oolong tea every morning"]
    assert hits.warning is not None and "keywords only" in hits.warning
    assert [h.item.content for h in await memory.search("橘猫", limit=1)] == ["用户养了一只橘猫"]
    stats = await memory.stats()
    assert stats["embedding_warning"] == hits.warning and stats["missing_vectors"] == 2
    tool = MemoryTool(memory)
    out = await tool.execute({"action": "search", "query": "oolong tea"}, ToolContext())
    assert out.structured is not None and "keywords only" in out.structured["warning"]

    endpoint.up()
    hits = await memory.search("oolong tea")
    assert hits.warning is None and hits[0].item.content.startswith("The user drinks oolong")
    stats = await memory.stats()
    assert stats["embedding_warning"] is None and stats["missing_vectors"] == 0
    found = await memory.search("drinks oolong tea every morning", mode="vector", limit=1)
    assert found[0].item.content == "The user drinks oolong tea every morning"
    out = await tool.execute({"action": "search", "query": "oolong tea"}, ToolContext())
    assert out.structured is not None and "warning" not in out.structured
