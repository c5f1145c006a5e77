"""The `kb` and `notes` providers in `toolweave serve`, checked with the official MCP SDK client."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.kb.formats import make_docx
from toolweave.host import ToolHost, parse_config
from toolweave.host.providers.kb import KBProvider, kb_settings
from toolweave.mcp.server.testing import connect

TOOLWEAVE = Path(sys.executable).with_name("toolweave")


def write_config(tmp_path: Path, rules: str = "", **kb: object) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    (docs / "ports.md").write_text("# 服务\n\n## 端口\n\n默认端口是 8765。", encoding="utf-8")
    make_docx(docs / "guide.docx")
    kb_lines = "".join(f"{k} = {json.dumps(v)}\n" for k, v in {"paths": ["docs"], **kb}.items())
    config = tmp_path / "toolweave.toml"
    config.write_text(
        '[serve]\nproviders = ["kb", "notes"]\n'
        f"data_dir = {json.dumps(str(tmp_path / 'data'))}\n\n{rules}[kb]\n{kb_lines}",
        encoding="utf-8",
    )
    return config


async def test_official_client_over_stdio(tmp_path: Path) -> None:
    # `note` and `kb` can delete, so governance asks before they run; the operator allows them.
    config = write_config(tmp_path, '[serve.rules]\nallow = ["note", "kb"]\n\n', watch=False)
    params = StdioServerParameters(
        command=str(TOOLWEAVE), args=["serve", "--stdio", "--config", str(config)], cwd=tmp_path
    )
    async with Client(params, mode="auto") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        found = await client.call_tool("kb_search", {"query": "默认端口", "k": 1})
        added = await client.call_tool(
            "kb_add", {"content": "# FAQ\n\nThe admin panel lives at /admin.", "title": "FAQ"}
        )
        resources = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
        guide = next(r for r in resources if r.title == "Retrieval Guide 检索指南")
        text = (await client.read_resource(str(guide.uri))).contents[0]
        note = await client.call_tool(
            "note", {"action": "create", "title": "待办", "content": "检查端口配置。"}
        )
        searched = await client.call_tool("note", {"action": "search", "query": "端口"})
        listed = await client.call_tool("kb", {"action": "list"})
        faq = added.structured_content["doc_id"] if added.structured_content else ""
        removed = await client.call_tool("kb", {"action": "remove", "doc_id": faq})
        left = await client.call_tool("kb", {"action": "list"})
    assert sorted(tools) == ["kb", "kb_add", "kb_search", "note"]
    assert (
        tools["kb_search"].annotations is not None and tools["kb_search"].annotations.read_only_hint
    )
    assert found.structured_content is not None
    hit = found.structured_content["results"][0]
    assert hit["heading_path"] == "服务 > 端口" and "8765" in hit["text"]
    assert added.structured_content is not None and added.structured_content["status"] == "added"
    assert [t.uri_template for t in templates] == ["kb://{namespace}/{doc_id}"]
    assert str(guide.uri).startswith("kb://default/") and guide.mime_type == "text/markdown"
    assert "## 混合检索" in getattr(text, "text", "")
    assert not note.is_error and searched.structured_content is not None
    assert searched.structured_content["results"][0]["title"] == "待办"
    assert listed.structured_content is not None and listed.structured_content["total"] == 3
    assert removed.structured_content == {"removed": faq}
    assert left.structured_content is not None
    assert sorted(d["title"] for d in left.structured_content["documents"]) == [
        "Retrieval Guide 检索指南",
        "服务",
    ]


async def test_watched_paths_are_reingested_and_resources_republished(tmp_path: Path) -> None:
    config_file = write_config(tmp_path)
    from toolweave.host import load_host_config

    host = ToolHost(load_host_config(config_file))
    provider = next(p for p in host.providers if isinstance(p, KBProvider))
    await host.start()
    try:
        async with connect(host.server) as client:
            before = {r["name"] for r in await client.list_resources()}
            assert len(before) == 2
            docs = tmp_path / "docs"
            (docs / "ports.md").unlink()
            provider.synced.clear()
            while not provider.synced.is_set():  # the watcher starts asynchronously
                (docs / "new.md").write_text("# 新增\n\n监视后自动入库。", encoding="utf-8")
                try:
                    await asyncio.wait_for(provider.synced.wait(), timeout=0.5)
                except TimeoutError:
                    continue
            changed = "notifications/resources/list_changed"
            await asyncio.wait_for(client.wait_for_notification(changed), timeout=30)
            titles = {d.title for d in await provider.kb.documents()}
            assert titles == {"Retrieval Guide 检索指南", "新增"}
            found = await client.call_tool("kb_search", {"query": "自动入库", "k": 1})
            assert found["structuredContent"]["results"][0]["title"] == "新增"
            after = {r["name"] for r in await client.list_resources()}
            assert len(after) == 2 and after != before
            seen = sum(1 for method, _ in client.notifications if method == changed)
            await client.call_tool("kb_add", {"content": "# 工具\n\n通过工具添加。"})
            await asyncio.wait_for(client.wait_for_notification(changed, count=seen + 1), 30)
            assert len(await client.list_resources()) == 3
    finally:
        await host.close()


async def test_note_delete_and_kb_remove_are_refused_unless_allowed(tmp_path: Path) -> None:
    config = write_config(tmp_path, watch=False)
    params = StdioServerParameters(
        command=str(TOOLWEAVE), args=["serve", "--stdio", "--config", str(config)], cwd=tmp_path
    )
    async with Client(params, mode="auto") as client:
        listed = await client.call_tool("note", {"action": "list"})  # read-only: no asking
        refused = await client.call_tool("note", {"action": "delete", "note_id": "n1"})
        found = await client.call_tool("kb_search", {"query": "端口"})
        documents = await client.call_tool("kb", {"action": "list"})  # read-only: no asking
        kept = await client.call_tool("kb", {"action": "remove", "doc_id": "d1"})
    text = getattr(refused.content[0], "text", "")
    assert refused.is_error and '[serve.rules] allow = ["note"]' in text
    assert not listed.is_error and not found.is_error
    assert not documents.is_error and documents.structured_content is not None
    assert documents.structured_content["total"] == 2
    assert kept.is_error and '[serve.rules] allow = ["kb"]' in getattr(kept.content[0], "text", "")


def test_kb_settings_errors_name_the_key(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"\[kb\].pathz is not a known key"):
        parse_config({"kb": {"pathz": []}})
    with pytest.raises(ValueError, match=r"\[kb\].paths: Input should be a valid list"):
        parse_config({"kb": {"paths": "docs"}})
    with pytest.raises(ValueError, match=r"\[kb\].max_docs: Input should be greater than 0"):
        parse_config({"kb": {"max_docs": 0}})
    with pytest.raises(ValueError, match="dsn= needs a vector store"):
        parse_config({"kb": {"dsn": "postgresql://x"}})
    source = tmp_path / "toolweave.toml"
    settings = kb_settings(parse_config({"kb": {"paths": ["docs"]}}, source=source))
    assert settings.resolved_paths(source) == [(tmp_path / "docs").resolve()]
    with pytest.raises(ValueError, match=r"\[notes\].dir is not a known key"):
        parse_config({"serve": {"providers": ["notes"]}, "notes": {"dir": "x"}})
    settings = kb_settings(parse_config({"kb": {"paths": ["a"]}}, source=tmp_path / "t.toml"))
    assert settings.resolved_paths(tmp_path / "t.toml") == [(tmp_path / "a").resolve()]
    assert settings.watch and settings.max_docs == 10_000


async def test_scoped_kb_over_http_keeps_sessions_apart_and_the_shared_admin_only(
    tmp_path: Path,
) -> None:
    from tests.host.test_governance import _port, serve_config
    from toolweave.host import load_host_config

    config_file = write_config(
        tmp_path, '[serve.rules]\nallow = ["kb"]\n\n', watch=False, scopes=True
    )
    text = config_file.read_text(encoding="utf-8").replace(
        "[serve]\n", f'[serve]\ntransport = "http"\nport = {_port()}\n', 1
    )
    config_file.write_text(text, encoding="utf-8")
    async for url in serve_config(load_host_config(config_file)):
        async with Client(url, mode="legacy") as alice, Client(url, mode="legacy") as bob:
            await alice.call_tool("kb_add", {"content": "我的端口是 9001。", "title": "alice"})
            mine = await alice.call_tool("kb_search", {"query": "端口", "k": 5})
            theirs = await bob.call_tool("kb_search", {"query": "端口", "k": 5})
            shared = await alice.call_tool(
                "kb", {"action": "add", "content": "全员通知", "scope": "global"}
            )
        async with Client(url, mode="auto") as stateless:
            listed = await stateless.call_tool("kb", {"action": "list", "scope": "global"})
    assert mine.structured_content is not None and theirs.structured_content is not None
    assert {(r["scope"], r["title"]) for r in mine.structured_content["results"]} >= {
        ("session", "alice"),
        ("global", "服务"),
    }
    assert all(r["scope"] == "global" for r in theirs.structured_content["results"])
    assert shared.is_error and "admin" in shared.content[0].text  # type: ignore[union-attr]
    assert listed.structured_content is not None
    assert sorted(d["title"] for d in listed.structured_content["documents"]) == [
        "Retrieval Guide 检索指南",
        "服务",
    ]
