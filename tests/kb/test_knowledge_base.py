"""KnowledgeBase on SQLite and on Postgres + Qdrant: the same tests, Chinese and English."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.kb.formats import SECTION_EN, SECTION_ZH, make_docx, make_html, make_pdf, make_xlsx
from toolweave.kb import KnowledgeBase, KnowledgeBaseError
from toolweave.kb.expand import HYDE_SYSTEM, MQE_SYSTEM
from toolweave.llm import Message, ModelRequest, ScriptedModel
from toolweave.storage.retrieval import load_embedder

KBFactory = Callable[..., KnowledgeBase]  # the make_kb fixture (conftest.py)

GUIDE = """# 部署指南

## 安装

使用 pip 安装 toolweave，然后运行 toolweave serve 启动服务。

## Configuration

The server reads toolweave.toml from the working directory. Set data_dir to move the stores.

## 故障排除

如果端口被占用，请修改 port 配置项。
"""

RECIPES = """# Recipes

## Dumplings

Fold the dough around the pork filling and steam for twelve minutes.

## 番茄炒蛋

先炒鸡蛋，再加入番茄翻炒，最后加盐调味。
"""


class FailingEmbedder:
    """The default embedder, until `fail` is set: then the next embedding call raises."""

    def __init__(self) -> None:
        self.inner = load_embedder("auto")
        self.fail = False

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Any:
        if self.fail:
            raise RuntimeError("embedding service crashed")
        return self.inner.embed(texts)


async def test_add_and_search_each_mode(make_kb: KBFactory) -> None:
    kb = make_kb()
    guide = await kb.add_text(GUIDE, title="部署指南")
    await kb.add_text(RECIPES)
    assert (guide.status, guide.chunks) == ("added", 3)
    for mode in ("hybrid", "keyword", "vector"):
        hits = await kb.search("端口被占用怎么办", k=3, mode=mode)
        assert hits, mode
        assert hits[0].heading_path == "部署指南 > 故障排除", mode
    top = (await kb.search("where is the configuration file read from", k=1))[0]
    assert top.heading_path == "部署指南 > Configuration" and top.title == "部署指南"
    assert GUIDE[top.start : top.end] == top.text and top.citation == "部署指南 > Configuration"
    assert (await kb.search("番茄", mode="keyword"))[0].heading_path == "Recipes > 番茄炒蛋"
    assert await kb.stats() == {
        "namespace": "default",
        "documents": 2,
        "chunks": 5,
        "embedder": kb.embedder.name,
        "opened_with": kb.embedder.name,
        "embedding_warning": None,
        "missing_vectors": 0,
    }


async def test_same_content_is_not_added_twice(make_kb: KBFactory) -> None:
    kb = make_kb()
    first = await kb.add_text(RECIPES, title="Recipes")
    again = await kb.add_text(RECIPES.replace("\n\n", "\n\n  ").upper().lower(), title=" recipes ")
    assert again.status == "unchanged" and again.doc_id == first.doc_id
    assert (await kb.stats())["documents"] == 1


async def test_file_with_the_content_of_a_text_is_a_duplicate(
    make_kb: KBFactory, tmp_path: Path
) -> None:
    kb = make_kb()
    text = await kb.add_text(GUIDE, title="部署指南")
    file = tmp_path / "guide.md"
    file.write_text(GUIDE, encoding="utf-8")
    added = await kb.add_file(file)
    assert (added.status, added.duplicate_of) == ("duplicate", text.doc_id)
    other = tmp_path / "other.md"
    other.write_text(RECIPES, encoding="utf-8")
    await kb.add_file(other)
    other.write_text(GUIDE, encoding="utf-8")  # an existing file that now copies another
    assert (await kb.add_file(other)).status == "replaced"
    assert await kb.search("dumplings", mode="keyword") == []


async def test_changed_file_replaces_its_chunks(make_kb: KBFactory, tmp_path: Path) -> None:
    kb = make_kb()
    file = tmp_path / "guide.md"
    file.write_text(GUIDE, encoding="utf-8")
    first = await kb.add_file(file)
    assert (await kb.add_file(file)).status == "unchanged"
    file.write_text(
        "# 部署指南\n\n## 升级\n\n运行 pip install -U toolweave 升级到新版本。\n", "utf-8"
    )
    second = await kb.add_file(file)
    assert (second.status, second.doc_id, second.chunks) == ("replaced", first.doc_id, 1)
    assert (await kb.stats())["chunks"] == 1
    assert await kb.search("端口被占用", mode="keyword") == []
    assert (await kb.search("升级", mode="keyword"))[0].heading_path == "部署指南 > 升级"


async def test_a_crash_mid_file_leaves_the_previous_state(
    make_kb: KBFactory, tmp_path: Path
) -> None:
    embedder = FailingEmbedder()
    kb = make_kb(embedder=embedder)
    file = tmp_path / "guide.md"
    file.write_text(GUIDE, encoding="utf-8")
    await kb.add_file(file)
    file.write_text(RECIPES, encoding="utf-8")
    embedder.fail = True
    with pytest.raises(RuntimeError, match="embedding service crashed"):
        await kb.add_file(file)
    assert (await kb.stats())["chunks"] == 3
    assert (await kb.search("端口被占用", mode="keyword"))[0].title == "部署指南"
    assert await kb.search("dumplings", mode="keyword") == []
    embedder.fail = False
    assert (await kb.add_file(file)).status == "replaced"  # the retry resumes


async def test_documents_in_several_formats(make_kb: KBFactory, tmp_path: Path) -> None:
    kb = make_kb()
    results = [
        await kb.add_file(make(tmp_path / name))
        for make, name in (
            (make_docx, "guide.docx"),
            (make_pdf, "scan.pdf"),
            (make_xlsx, "data.xlsx"),
            (make_html, "page.html"),
        )
    ]
    assert [r.report.format for r in results] == ["docx", "pdf", "xlsx", "html"]
    assert results[1].report.pages == 2 and results[1].report.warnings
    hits = await kb.search("混合检索 融合", k=10, mode="keyword")
    assert {h.title for h in hits} >= {"Retrieval Guide 检索指南", "scan"}
    docx_hit = next(h for h in hits if h.doc_id == results[0].doc_id)
    assert docx_hit.heading_path == "Retrieval Guide 检索指南 > 混合检索"
    assert SECTION_ZH in docx_hit.text
    cosine = await kb.search(SECTION_EN, k=10, mode="vector")
    assert SECTION_EN in cosine[0].text
    population = await kb.search("北京 population", k=3)
    assert any("21893095" in h.text for h in population)


async def test_remove_clear_and_documents(make_kb: KBFactory) -> None:
    kb = make_kb()
    guide = await kb.add_text(GUIDE, title="部署指南")
    await kb.add_text(RECIPES)
    assert [d.title for d in await kb.documents()] == ["Recipes", "部署指南"]
    found = await kb.document_text(guide.doc_id)
    assert found is not None and found[1] == GUIDE and found[0].chunks == 3
    assert await kb.remove(guide.doc_id) is True
    assert await kb.remove(guide.doc_id) is False
    assert await kb.document_text(guide.doc_id) is None
    assert (await kb.stats())["chunks"] == 2
    assert await kb.clear() == 1
    assert (await kb.stats())["documents"] == 0 and await kb.search("dumplings") == []


async def test_namespaces_isolate_collections(make_kb: KBFactory) -> None:
    kb = make_kb()
    other = kb.namespaced("team-b")
    await kb.add_text(GUIDE)
    await other.add_text(RECIPES)
    assert {h.doc_id for h in await kb.search("番茄 dumplings", k=5)} <= {
        d.doc_id for d in await kb.documents()
    }
    assert all(h.title == "Recipes" for h in await other.search("端口 port", k=5))
    await other.clear()
    assert (await kb.stats())["documents"] == 1
    with pytest.raises(KnowledgeBaseError, match="namespace 'bad name'"):
        kb.namespaced("bad name")


async def test_max_docs_is_enforced(make_kb: KBFactory) -> None:
    kb = make_kb(max_docs=1)
    await kb.add_text(GUIDE)
    with pytest.raises(KnowledgeBaseError, match="max_docs=1"):
        await kb.add_text(RECIPES)
    with pytest.raises(KnowledgeBaseError, match=r"text: it holds a NUL character \(\\x00\)"):
        await kb.add_text("a\x00b")
    with pytest.raises(KnowledgeBaseError, match="title: it holds a NUL"):
        await kb.add_text("ok", title="a\x00b")
    with pytest.raises(KnowledgeBaseError, match="metadata: it holds a NUL"):
        await kb.add_text("ok", metadata={"source": "a\x00b"})
    assert (await kb.add_text(GUIDE)).status == "unchanged"  # re-adding is not a new document


async def test_search_arguments_are_checked(make_kb: KBFactory) -> None:
    kb = make_kb()
    with pytest.raises(KnowledgeBaseError, match="query"):
        await kb.search("  ")
    with pytest.raises(KnowledgeBaseError, match="k must be an integer from 1 to 50"):
        await kb.search("x", k=0)
    with pytest.raises(KnowledgeBaseError, match="mode must be one of"):
        await kb.search("x", mode="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(KnowledgeBaseError, match="expand must be one of"):
        await kb.search("x", expand="more")  # type: ignore[arg-type]


async def test_mqe_searches_the_model_rewordings(make_kb: KBFactory) -> None:
    model = ScriptedModel([Message.assistant("番茄炒蛋怎么做\n西红柿炒鸡蛋的步骤")])
    kb = make_kb(model=model)
    await kb.add_text(GUIDE)
    await kb.add_text(RECIPES)
    hits = await kb.search("tomato egg recipe", k=2, expand="mqe")
    assert hits[0].heading_path == "Recipes > 番茄炒蛋"
    request: ModelRequest = model.requests[0]
    assert (
        request.messages[0].text == MQE_SYSTEM and "tomato egg recipe" in request.messages[1].text
    )


async def test_hyde_searches_a_hypothetical_answer(make_kb: KBFactory) -> None:
    passage = "如果端口被占用，可以在配置里修改 port 配置项，然后重新启动服务。"
    model = ScriptedModel([Message.assistant(passage)])
    kb = make_kb(model=model)
    await kb.add_text(GUIDE)
    await kb.add_text(RECIPES)
    hits = await kb.search("what now?", k=1, expand="hyde")
    assert hits[0].heading_path == "部署指南 > 故障排除"
    assert model.requests[0].messages[0].text == HYDE_SYSTEM


async def test_expansion_without_a_model_is_skipped_with_a_note(
    make_kb: KBFactory, caplog: pytest.LogCaptureFixture
) -> None:
    kb = make_kb()
    await kb.add_text(GUIDE)
    with caplog.at_level(logging.INFO, logger="toolweave.kb"):
        expanded = await kb.search("端口", expand="mqe")
    assert expanded == await kb.search("端口")
    assert "no model is configured" in caplog.text


async def test_reopening_reaches_the_same_data(make_kb: KBFactory) -> None:
    kb = make_kb()
    added = await kb.add_text(GUIDE)
    await kb.close()
    reopened = make_kb()
    assert (await reopened.add_text(GUIDE)).status == "unchanged"
    assert (await reopened.search("端口"))[0].doc_id == added.doc_id


async def test_progress_reports_embedding_batches(make_kb: KBFactory) -> None:
    kb = make_kb(batch_size=2, chunk_tokens=10, overlap_tokens=0)
    seen: list[tuple[int, int]] = []
    result = await kb.add_text(GUIDE, progress=lambda done, total: seen.append((done, total)))
    total = result.chunks  # the chunks only: the document record has nothing to embed
    assert seen[-1] == (total, total) and len(seen) == (total + 1) // 2
