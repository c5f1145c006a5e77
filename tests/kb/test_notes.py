"""Notes: the seed's file format, the index, ids, and search through the hybrid index."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml

from toolweave.kb import KnowledgeBase, KnowledgeBaseError, NoteNotFound, NoteStore, NoteTool
from toolweave.tools import ToolContext


@pytest.fixture
async def store(tmp_path: Path) -> NoteStore:
    notes = NoteStore(tmp_path / "notes")
    yield notes  # type: ignore[misc]
    await notes.close()


async def test_file_format_matches_the_seed(store: NoteStore) -> None:
    note = await store.create(
        "项目进展 - 第一阶段",
        "## 完成情况\n\n已完成数据模型层的重构。",
        type="task_state",
        tags=["refactoring", "phase1", "backend"],
    )
    text = (store.directory / f"{note.id}.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    meta = yaml.safe_load(text.split("---\n")[1])
    assert list(meta) == ["id", "title", "type", "tags", "created_at", "updated_at"]
    assert meta["tags"] == ["backend", "phase1", "refactoring"] and meta["type"] == "task_state"
    assert text.rstrip().endswith("已完成数据模型层的重构。")
    index = json.loads((store.directory / "index.json").read_text(encoding="utf-8"))
    assert index[note.id]["title"] == "项目进展 - 第一阶段"
    assert index[note.id]["file_path"] == str(store.directory / f"{note.id}.md")


async def test_crud_and_list(store: NoteStore) -> None:
    a = await store.create("Blocker: flaky CI", "The postgres job times out.", type="blocker")
    b = await store.create("结论", "使用混合检索。", type="conclusion", tags=["rag"])
    assert (await store.read(a.id)).content == "The postgres job times out."
    updated = await store.update(b.id, content="使用混合检索和 RRF。", tags=["rag", "search"])
    assert updated.created_at == b.created_at and updated.tags == ["rag", "search"]
    assert (await store.read(b.id)).content == "使用混合检索和 RRF。"
    assert [n["id"] for n in await store.list_notes(type="blocker")] == [a.id]
    assert [n["id"] for n in await store.list_notes(tag="search")] == [b.id]
    await store.delete(a.id)
    assert [n["id"] for n in await store.list_notes()] == [b.id]
    with pytest.raises(NoteNotFound, match="use action 'list'"):
        await store.read(a.id)
    with pytest.raises(NoteNotFound, match="is not a note id"):
        await store.read("../etc/passwd")


async def test_search_goes_through_the_hybrid_index(store: NoteStore) -> None:
    await store.create("Deployment", "Run toolweave serve behind a reverse proxy.")
    zh = await store.create("数据库迁移", "把 SQLite 数据迁移到 Postgres 需要导出再导入。")
    results = await store.search("迁移 Postgres")
    assert results[0]["id"] == zh.id and results[0]["title"] == "数据库迁移"
    await store.update(zh.id, content="迁移已经完成。")
    assert "完成" in (await store.search("迁移"))[0]["snippet"]
    await store.delete(zh.id)
    assert all(r["id"] != zh.id for r in await store.search("迁移"))


async def test_ids_never_collide_under_concurrent_creates(store: NoteStore) -> None:
    notes = await asyncio.gather(*(store.create(f"n{i}", f"body {i}") for i in range(30)))
    assert len({n.id for n in notes}) == 30
    assert len(list(store.directory.glob("note_*.md"))) == 30


async def test_index_is_rebuilt_from_the_files(store: NoteStore) -> None:
    note = await store.create("Keep", "me")
    (store.directory / "index.json").write_text("{broken", encoding="utf-8")
    assert [n["id"] for n in await store.list_notes()] == [note.id]


async def test_a_shared_knowledge_base_keeps_notes_in_their_own_namespace(
    tmp_path: Path,
) -> None:
    kb = KnowledgeBase(tmp_path / "kb.db")
    await kb.add_text("# 端口\n\n端口冲突时修改 port。")
    notes = NoteStore(tmp_path / "notes", kb)
    await notes.create("端口笔记", "记得检查端口。")
    assert (await kb.stats())["documents"] == 1
    assert [r["title"] for r in await notes.search("端口")] == ["端口笔记"]
    await notes.close()
    await kb.close()


async def test_note_tool_actions(store: NoteStore) -> None:
    tool = NoteTool(store)
    ctx = ToolContext()
    assert tool.name == "note"
    assert tool.parameters["properties"]["action"]["enum"] == [
        "create",
        "read",
        "update",
        "delete",
        "list",
        "search",
    ]

    async def call(**args: object) -> dict[str, object]:
        result = await tool.execute(dict(args), ctx)
        assert not result.is_error, result.content
        assert isinstance(result.structured, dict)
        return result.structured

    created = await call(
        action="create", title="周会结论", content="下周发布 0.2。", tags=["release"]
    )
    note_id = created["created"]["id"]  # type: ignore[index]
    assert (await call(action="read", note_id=note_id))["content"] == "下周发布 0.2。"
    await call(action="update", note_id=note_id, content="下周发布 0.2 和文档。")
    assert (await call(action="search", query="发布"))["results"][0]["id"] == note_id  # type: ignore[index]
    assert len((await call(action="list"))["notes"]) == 1  # type: ignore[arg-type]
    assert (await call(action="delete", note_id=note_id)) == {"deleted": note_id}
    with pytest.raises(KnowledgeBaseError, match="read needs note_id"):
        await tool.execute({"action": "read"}, ctx)
