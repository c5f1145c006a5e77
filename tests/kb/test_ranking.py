"""Knowledge-base hits carry their evidence, titles are searchable, bulk adds are one write,
and the duplicate check is indexed; on both backends."""

from __future__ import annotations

from typing import Any

from tests.kb.conftest import KBFactory
from tests.storage.retrieval.test_index import CountingEmbedder
from toolweave.storage.retrieval.fusion import FUSION_FORMULA


async def test_the_title_is_indexed_and_hits_explain_their_scores(make_kb: KBFactory) -> None:
    kb = make_kb(embedder="hash")
    await kb.add_text("Water it once a month in winter.", title="Cactus care")
    await kb.add_text("Sourdough needs a warm kitchen.", title="Baking bread")
    hits = await kb.search("cactus", mode="keyword")
    assert [h.title for h in hits] == ["Cactus care"]
    assert hits[0].text == "Water it once a month in winter."  # the title line is not repeated
    assert hits[0].keyword_rank == 1 and (hits[0].keyword_score or 0) > 0
    assert hits[0].explanation is None
    explained = await kb.search("cactus winter", explain=True)
    top = explained[0]
    assert top.title == "Cactus care" and top.explanation is not None
    assert top.explanation["formula"] == FUSION_FORMULA
    assert top.explanation["fused"] == top.score
    assert top.explanation["keyword_rank"] == 1 and top.vector_score is not None
    assert 0.0 <= top.explanation["vector_weight"] <= 1.0
    assert "explanation" in top.as_json()
    await kb.add_text("冬天每月浇一次水。", title="仙人掌养护")
    zh = await kb.search("仙人掌", mode="keyword")
    assert [h.title for h in zh] == ["仙人掌养护"] and zh[0].text == "冬天每月浇一次水。"


async def test_add_texts_is_one_write_with_one_embedder_call(make_kb: KBFactory) -> None:
    embedder = CountingEmbedder()
    kb = make_kb(embedder=embedder)
    results = await kb.add_texts(
        [
            "Alpha notes about ports and sockets.",
            {"text": "Beta: 周一和团队讨论了预算", "title": "Beta", "metadata": {"k": 1}},
            "Alpha notes about ports and sockets.",
        ]
    )
    assert [r.status for r in results] == ["added", "added", "duplicate"]
    assert results[2].duplicate_of == results[0].doc_id and results[2].chunks == results[0].chunks
    assert embedder.calls == 1
    assert (await kb.stats())["documents"] == 2
    again = await kb.add_texts(["Alpha notes about ports and sockets."])
    assert again[0].status == "unchanged"
    assert [h.title for h in await kb.search("预算", mode="keyword")] == ["Beta"]


async def test_the_duplicate_check_uses_an_index_on_the_content_hash(make_kb: KBFactory) -> None:
    kb = make_kb(embedder="hash")
    await kb.add_text("Some text.")
    if make_kb.backend == "sqlite":  # type: ignore[attr-defined]
        index: Any = kb.index
        plan = await index.db.run(
            lambda c: c.execute(
                "EXPLAIN QUERY PLAN SELECT id FROM kb WHERE collection = ?"
                " AND json_extract(payload, '$.content_hash') = ?",
                ["default#documents", "x"],
            ).fetchall()
        )
        assert any("kb_by_content_hash" in str(row) for row in plan)
    else:
        import psycopg

        index = kb.index
        with psycopg.connect(index.dsn) as conn:
            names = [
                r[0]
                for r in conn.execute(
                    "SELECT indexname FROM pg_indexes WHERE tablename = %s", (index.name,)
                )
            ]
        assert f"{index.name}_by_content_hash" in names
