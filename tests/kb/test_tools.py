"""kb_add, kb_search and kb as tools, and folder ingest (resumable, pruned, watched)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.kb.formats import make_docx, make_html
from toolweave.kb import KnowledgeBase, KnowledgeBaseError, knowledge_base_tools
from toolweave.kb.ingest import ingest_paths, watch_paths
from toolweave.kb.tools import KB_ADD_CHUNK_CHARS, NO_MODEL_NOTE, KBTool
from toolweave.llm import Message, ScriptedModel
from toolweave.tools import Tool, ToolContext

LONG_ZH = "\n\n".join(
    f"第{i}段：知识库把长文档切成小块，检索命中块而非整篇。" * 8 for i in range(6)
)


@pytest.fixture
async def kb(tmp_path: Path) -> KnowledgeBase:
    base = KnowledgeBase(tmp_path / "kb.db")
    yield base  # type: ignore[misc]
    await base.close()


def by_name(tools: list[Tool]) -> dict[str, Tool]:
    return {t.name: t for t in tools}


async def call(tool: Tool, **args: Any) -> Any:
    result = await tool.execute(args, ToolContext())
    assert not result.is_error, result.content
    return result.structured


async def test_kb_add_uses_the_seed_chunking_and_dedupes(kb: KnowledgeBase) -> None:
    tools = by_name(knowledge_base_tools(kb))
    assert sorted(tools) == ["kb", "kb_add", "kb_search"]
    assert tools["kb_search"].annotations.read_only
    added = await call(tools["kb_add"], content=LONG_ZH, title="切片")
    assert added["status"] == "added" and added["chunks"] > 1
    hits = await kb.search("检索命中块", k=10)
    assert all(len(h.text) <= KB_ADD_CHUNK_CHARS for h in hits)
    again = await call(tools["kb_add"], content=LONG_ZH, title="切片")
    assert again["status"] == "unchanged"


async def test_kb_search_results_are_capped(kb: KnowledgeBase) -> None:
    tools = by_name(knowledge_base_tools(kb, max_result_chars=300))
    await call(tools["kb_add"], content=LONG_ZH, title="切片")
    found = await call(tools["kb_search"], query="知识库 长文档", k=10)
    assert sum(len(r["text"]) for r in found["results"]) <= 300
    assert found["results"][0]["title"] == "切片"
    expanded = await call(tools["kb_search"], query="知识库", expand="hyde")
    assert expanded["note"] == NO_MODEL_NOTE


async def test_rag_actions(kb: KnowledgeBase) -> None:
    kb_tool = by_name(knowledge_base_tools(kb))["kb"]
    assert kb_tool.parameters["properties"]["action"]["enum"] == [
        "add",
        "search",
        "ask",
        "stats",
        "list",
        "remove",
        "clear",
    ]
    await call(kb_tool, action="add", content="# Ports\n\nThe default port is 8765.", title="Ports")
    assert (await call(kb_tool, action="stats"))["documents"] == 1
    found = await call(kb_tool, action="search", query="default port")
    assert "8765" in found["results"][0]["text"]
    asked = await call(kb_tool, action="ask", query="which port?")
    assert asked["answer"] is None and asked["citations"][0]["title"] == "Ports"
    with pytest.raises(KnowledgeBaseError, match="confirm=true"):
        await kb_tool.execute({"action": "clear"}, ToolContext())
    assert await call(kb_tool, action="clear", confirm=True) == {"cleared_documents": 1}


async def test_kb_lists_and_removes_documents(kb: KnowledgeBase) -> None:
    kb_tool = KBTool(kb, max_result_chars=200)
    for i in range(4):
        await call(kb_tool, action="add", content=f"# 文档{i}\n\n第{i}篇的内容。", title=f"文档{i}")
    first = await call(kb_tool, action="list")
    assert first["total"] == 4 and 0 < len(first["documents"]) < 4  # paged by max_result_chars
    pages, offset = [first], first["next_offset"]
    while offset is not None:
        pages.append(await call(kb_tool, action="list", offset=offset))
        offset = pages[-1].get("next_offset")
    listed = [d for page in pages for d in page["documents"]]
    assert [d["title"] for d in listed] == [f"文档{i}" for i in range(4)]
    assert listed[0]["chunks"] == 1 and listed[0]["source"] is None
    doomed = listed[1]["doc_id"]
    assert await call(kb_tool, action="remove", doc_id=doomed) == {"removed": doomed}
    assert [d.title for d in await kb.documents()] == ["文档0", "文档2", "文档3"]
    with pytest.raises(KnowledgeBaseError, match=r"no such document.*action=list"):
        await kb_tool.execute({"action": "remove", "doc_id": doomed}, ToolContext())
    with pytest.raises(KnowledgeBaseError, match="remove needs doc_id"):
        await kb_tool.execute({"action": "remove"}, ToolContext())


def test_kb_actions_declare_what_they_do(kb: KnowledgeBase) -> None:
    kb_tool = KBTool(kb)
    listing = kb_tool.annotations_for({"action": "list"})
    removing = kb_tool.annotations_for({"action": "remove"})
    assert listing.read_only and not listing.destructive
    assert removing.destructive and not removing.read_only


async def test_rag_ask_answers_with_citations_from_the_model(tmp_path: Path) -> None:
    model = ScriptedModel([Message.assistant("默认端口是 8765 [1]。")])
    kb = KnowledgeBase(tmp_path / "kb.db", model=model)
    await kb.add_text("# 服务\n\n## 端口\n\n默认端口是 8765。", title="服务手册")
    kb_tool = by_name(knowledge_base_tools(kb))["kb"]
    asked = await call(kb_tool, action="ask", query="默认端口是多少？", k=1)
    assert asked["answer"] == "默认端口是 8765 [1]。"
    assert asked["citations"] == [
        {
            "n": 1,
            "doc_id": asked["citations"][0]["doc_id"],
            "title": "服务手册",
            "heading_path": "服务 > 端口",
        }
    ]
    prompt = model.requests[0].messages[1].text
    assert "[1] (服务手册 > 服务 > 端口)\n默认端口是 8765。" in prompt  # title + heading path
    await kb.close()


async def test_files_from_tools_only_inside_the_roots(kb: KnowledgeBase, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    make_docx(docs / "guide.docx")
    closed = by_name(knowledge_base_tools(kb))["kb"]
    with pytest.raises(KnowledgeBaseError, match="disabled"):
        await closed.execute(
            {"action": "add", "file_path": str(docs / "guide.docx")}, ToolContext()
        )
    kb_tool = by_name(knowledge_base_tools(kb, file_roots=[docs]))["kb"]
    added = await call(kb_tool, action="add", file_path=str(docs / "guide.docx"))
    assert added["status"] == "added"
    with pytest.raises(KnowledgeBaseError, match="is not inside"):
        await kb_tool.execute(
            {"action": "add", "file_path": str(docs / ".." / "x.md")}, ToolContext()
        )


async def test_ingest_is_resumable_and_prunes(kb: KnowledgeBase, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.md").write_text("# A\n\n第一份文档。", encoding="utf-8")
    make_html(docs / "sub" / "b.html")
    (docs / ".hidden.md").write_text("# hidden", encoding="utf-8")
    (docs / "broken.pdf").write_bytes(b"garbage")
    (docs / "image.png").write_bytes(b"\x89PNG")
    seen: list[str] = []
    first = await ingest_paths(kb, [docs], on_file=lambda path, _: seen.append(path.name))
    assert seen == ["a.md", "broken.pdf", "b.html"]
    assert [r.status for r in first.added] == ["added", "added"]
    assert list(first.failed) == [str(docs / "broken.pdf")]
    second = await ingest_paths(kb, [docs])
    assert [r.status for r in second.added] == ["unchanged", "unchanged"] and not second.changed
    (docs / "a.md").unlink()
    pruned = await ingest_paths(kb, [docs], prune=True)
    assert len(pruned.removed) == 1 and (await kb.stats())["documents"] == 1


async def test_watch_reingests_changed_files(kb: KnowledgeBase, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    await ingest_paths(kb, [docs])
    changes = watch_paths(kb, [docs], debounce_ms=50)
    pending = asyncio.ensure_future(anext(changes))
    await asyncio.sleep(0)  # let the watcher subscribe before the file appears
    while not pending.done():  # watchfiles starts asynchronously: write until it reports
        (docs / "new.md").write_text("# 新文档\n\n监视目录后自动入库。", encoding="utf-8")
        await asyncio.wait({pending}, timeout=0.5)
    summary = pending.result()
    assert summary.changed and (await kb.search("自动入库"))[0].title == "新文档"
    await changes.aclose()
