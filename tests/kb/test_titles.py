"""A document's title is embedded once, heading its chunks: the document record costs no
embedding, a query naming the title still finds the document (in Python and through the served
tools), and a store written when each title was a record of its own (indexed and embedded)
keeps working; on both backends."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.host.providers.test_kb import TOOLWEAVE, write_config
from tests.kb.conftest import KBFactory
from tests.storage.retrieval.test_index import CountingEmbedder
from toolweave.host.providers.kb import KB_FILE
from toolweave.kb import KnowledgeBase

CACTUS = ("Water it once a month in winter.", "Cactus care")
BREAD = ("Sourdough needs a warm kitchen.", "Baking bread")
TEA = ("乌龙茶要用沸水冲泡。", "泡茶方法")


async def titles_found(kb: KnowledgeBase, query: str) -> dict[str, list[str]]:
    """The titles of the hits for `query`, per search mode."""
    modes = ("keyword", "vector", "hybrid")
    return {mode: [h.title for h in await kb.search(query, k=1, mode=mode)] for mode in modes}


async def vectored(kb: KnowledgeBase, collection: str) -> list[str]:
    """The ids of the records of `collection` that have a vector, sorted."""
    hits = await kb.index.search("any words", limit=10, collection=collection, mode="vector")
    return sorted(h.record.id for h in hits)


async def test_a_title_is_embedded_only_with_its_chunks(make_kb: KBFactory) -> None:
    embedder = CountingEmbedder()
    kb = make_kb(embedder=embedder)
    added = await kb.add_texts([{"text": t, "title": title} for t, title in (CACTUS, BREAD, TEA)])
    assert [r.chunks for r in added] == [1, 1, 1]
    # One embedding per chunk, each headed by its title; none for the document records.
    assert embedder.texts == [f"{title}\n{text}" for text, title in (CACTUS, BREAD, TEA)]
    assert await kb.index.missing_vectors() == 0
    stats = await kb.stats()
    assert (stats["documents"], stats["chunks"], stats["missing_vectors"]) == (3, 3, 0)
    found_by = await titles_found(kb, "cactus care")
    assert found_by == {mode: ["Cactus care"] for mode in ("keyword", "vector", "hybrid")}
    assert (await titles_found(kb, "泡茶方法"))["keyword"] == ["泡茶方法"]
    assert (await titles_found(kb, "泡茶方法"))["hybrid"] == ["泡茶方法"]
    assert [d.title for d in await kb.documents()] == ["Baking bread", "Cactus care", "泡茶方法"]
    found = await kb.document_text(added[0].doc_id)
    assert found is not None and found[0].title == "Cactus care" and found[1] == CACTUS[0]

    calls = embedder.calls
    again = await kb.add_text(*CACTUS)  # unchanged: nothing embedded
    assert again.status == "unchanged" and embedder.calls == calls
    assert await kb.remove(added[0].doc_id)
    assert [d.title for d in await kb.documents()] == ["Baking bread", "泡茶方法"]
    assert (await titles_found(kb, "cactus care"))["keyword"] == []


async def test_a_store_with_title_records_keeps_working(make_kb: KBFactory) -> None:
    kb = make_kb(embedder="hash")
    added = await kb.add_texts([{"text": t, "title": title} for t, title in (CACTUS, BREAD, TEA)])
    docs = kb.namespace + "#documents"
    # Written as before: each document record's text is its title, indexed and embedded.
    written = await kb.index.get([r.doc_id for r in added], docs)
    await kb.index.write([dataclasses.replace(r, text=r.payload["title"]) for r in written])
    everyone = sorted(r.doc_id for r in added)
    assert await vectored(kb, docs) == everyone
    await kb.close()

    kb = make_kb(embedder="hash")  # reopened by this version
    assert [d.title for d in await kb.documents()] == ["Baking bread", "Cactus care", "泡茶方法"]
    assert (await titles_found(kb, "cactus care"))["hybrid"] == ["Cactus care"]
    assert (await titles_found(kb, "泡茶方法"))["keyword"] == ["泡茶方法"]
    assert (await kb.add_text(*CACTUS)).status == "unchanged"
    assert (await kb.stats())["missing_vectors"] == 0
    # Written again, a document record loses its title's vector and words; removal still works.
    replaced = await kb.add_text("Sourdough rests a night.", BREAD[1], doc_id=added[1].doc_id)
    assert replaced.status == "replaced"
    assert await vectored(kb, docs) == sorted((added[0].doc_id, added[2].doc_id))
    assert (await titles_found(kb, "sourdough rests a night"))["hybrid"] == ["Baking bread"]
    assert await kb.remove(added[0].doc_id) and await kb.remove(added[1].doc_id)
    assert [d.title for d in await kb.documents()] == ["泡茶方法"]
    assert (await kb.stats())["chunks"] == 1
    assert await vectored(kb, docs) == [added[2].doc_id]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_served_tools_find_list_and_remove_by_title_without_title_vectors(
    tmp_path: Path, mode: str
) -> None:
    """`toolweave serve` over stdio, the official MCP SDK client in its default (2026) and
    legacy modes: the title finds its document, lists and removes it, and the store holds no
    document record with text or a vector."""
    config = write_config(tmp_path, '[serve.rules]\nallow = ["kb"]\n\n', watch=False)
    params = StdioServerParameters(
        command=str(TOOLWEAVE), args=["serve", "--stdio", "--config", str(config)], cwd=tmp_path
    )
    async with Client(params, mode=mode) as client:
        added = await client.call_tool("kb_add", {"content": CACTUS[0], "title": CACTUS[1]})
        found = await client.call_tool("kb_search", {"query": "cactus care", "k": 1})
        listed = await client.call_tool("kb", {"action": "list"})
        doc_id = (added.structured_content or {}).get("doc_id")
        removed = await client.call_tool("kb", {"action": "remove", "doc_id": doc_id})
        left = await client.call_tool("kb", {"action": "list"})
    assert found.structured_content is not None
    assert [r["title"] for r in found.structured_content["results"]] == [CACTUS[1]]
    titles = [d["title"] for d in (listed.structured_content or {})["documents"]]
    assert CACTUS[1] in titles and len(titles) == 3  # with the two files of docs/
    assert removed.structured_content == {"removed": doc_id}
    assert [d["title"] for d in (left.structured_content or {})["documents"]] == sorted(
        set(titles) - {CACTUS[1]}
    )
    with sqlite3.connect(tmp_path / "data" / KB_FILE) as conn:
        kinds = conn.execute(
            "SELECT collection LIKE '%#documents', count(*), sum(text <> ''),"
            " sum(length(vector) > 0) FROM kb GROUP BY 1 ORDER BY 1"
        ).fetchall()
    chunks, documents = kinds  # every chunk has text and a vector; no document record has
    assert chunks[1] == chunks[2] == chunks[3] > 0 and documents == (1, 2, 0, 0)
