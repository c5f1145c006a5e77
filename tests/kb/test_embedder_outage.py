"""A knowledge base whose OpenAI-compatible embedder is down: it opens, adds and answers by
keywords with a warning in the result, the tool's output and `stats`, then embeds what it
missed once the endpoint answers (both backends, a real HTTP endpoint on loopback)."""

from __future__ import annotations

from tests.kb.conftest import KBFactory
from tests.outage_embedder import NO_WAIT, Endpoint, endpoint, spec
from toolweave.kb.tools import knowledge_base_tools
from toolweave.storage.retrieval import IndexSettings
from toolweave.tools import ToolContext

__all__ = ["endpoint"]  # the fixture

GUIDE = "# Brewing\n\nOolong tea wants water at 90 degrees and three minutes of steeping."
GUIDE_ZH = "# 养猫\n\n橘猫每天需要两次喂食和新鲜的饮水。"


async def test_a_knowledge_base_searches_by_keywords_while_its_embedder_is_down(
    make_kb: KBFactory, endpoint: Endpoint
) -> None:
    endpoint.down()
    kb = make_kb(embedder=spec(endpoint), index=IndexSettings(embed_retry=NO_WAIT))
    await kb.add_text(GUIDE, title="Tea")
    await kb.add_text(GUIDE_ZH, title="猫")
    hits = await kb.search("oolong steeping")
    assert [h.title for h in hits][:1] == ["Tea"]
    assert hits.warning is not None and "keywords only" in hits.warning
    assert [h.title for h in await kb.search("橘猫喂食", k=1)] == ["猫"]
    stats = await kb.stats()
    assert stats["embedding_warning"] == hits.warning and stats["missing_vectors"] > 0
    tool = next(t for t in knowledge_base_tools(kb) if t.name == "kb_search")
    answer = await tool.execute({"query": "oolong steeping"}, ToolContext())
    assert answer.structured is not None and "keywords only" in answer.structured["warning"]

    endpoint.up()
    hits = await kb.search("oolong steeping")
    assert hits.warning is None and hits[0].title == "Tea"
    stats = await kb.stats()
    assert stats["embedding_warning"] is None and stats["missing_vectors"] == 0
    vector = await kb.search("water at 90 degrees", mode="vector", k=1)
    assert vector[0].title == "Tea" and vector[0].vector_score is not None
    answer = await tool.execute({"query": "oolong steeping"}, ToolContext())
    assert answer.structured is not None and "warning" not in answer.structured
