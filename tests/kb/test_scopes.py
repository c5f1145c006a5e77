"""Seed 004's two knowledge-base scopes: a session's own documents and the shared (global) ones,
searched together; only an admin changes the shared ones."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from toolweave.agent import Agent, Session
from toolweave.governance import ApprovalRequest, Governance
from toolweave.kb import KnowledgeBase, knowledge_base_tools
from toolweave.kb.scopes import ScopedKnowledgeBase, session_namespace
from toolweave.llm import Message, ScriptedModel, ToolCallPart
from toolweave.tools import ApprovalRequired, Tool, ToolContext


@pytest.fixture
async def kb(tmp_path: Path) -> AsyncIterator[KnowledgeBase]:
    base = KnowledgeBase(tmp_path / "kb.db", namespace="shared")
    await base.add_text("# 退货政策\n\n商品签收后 30 天内可以退货。", "退货政策")
    yield base
    await base.close()


async def _call(tool: Tool, session: str | None, **args: Any) -> Any:
    result = await tool.execute(args, ToolContext(session_id=session))
    assert not result.is_error, result.text
    return result.structured


async def test_a_session_searches_its_own_documents_and_the_shared_ones(
    kb: KnowledgeBase,
) -> None:
    scoped = ScopedKnowledgeBase(kb)
    await scoped.session("alice").add_text("# 订单\n\n我的退货单号是 A-1001。", "订单")
    await scoped.session("bob").add_text("# 订单\n\nBob 的退货单号是 B-2002。", "订单")
    hits = await scoped.search("退货", "alice", k=5)
    assert {(h.scope, h.hit.title) for h in hits} == {("session", "订单"), ("global", "退货政策")}
    assert all("B-2002" not in h.hit.text for h in hits)  # never another session's
    only_shared = await scoped.search("退货", "carol", k=5)
    assert [(h.scope, h.hit.title) for h in only_shared] == [("global", "退货政策")]
    assert [d.title for d in await kb.documents()] == ["退货政策"]  # sessions stay apart
    assert session_namespace("x" * 200) == session_namespace("x" * 200)
    assert len(session_namespace("x" * 200)) <= 64 and session_namespace(None) == "session:default"


async def test_the_kb_tools_add_to_the_session_and_search_both(kb: KnowledgeBase) -> None:
    tools = {t.name: t for t in knowledge_base_tools(kb, scoped=True)}
    kb_tool, kb_add, kb_search = tools["kb"], tools["kb_add"], tools["kb_search"]
    assert "scope" in kb_tool.parameters["properties"]
    assert "scope" not in knowledge_base_tools(kb)[2].parameters["properties"]
    await _call(kb_add, "alice", content="我的退货单号是 A-1001。", title="订单")
    await _call(kb_tool, "bob", action="add", content="Bob 的退货单号是 B-2002。", title="订单")
    found = await _call(kb_search, "alice", query="退货单号", k=5)
    assert {(r["scope"], r["title"]) for r in found["results"]} == {
        ("session", "订单"),
        ("global", "退货政策"),
    }
    assert all("B-2002" not in r["text"] for r in found["results"])
    mine = await _call(kb_tool, "alice", action="list")
    assert [d["title"] for d in mine["documents"]] == ["订单"]
    shared = await _call(kb_tool, "alice", action="list", scope="global")
    assert [d["title"] for d in shared["documents"]] == ["退货政策"]
    only = await _call(kb_tool, "alice", action="search", query="退货", scope="global")
    assert [r["scope"] for r in only["results"]] == ["global"]
    with pytest.raises(ApprovalRequired, match="only an admin changes") as asked:
        await kb_tool.execute(
            {"action": "clear", "confirm": True, "scope": "global"}, ToolContext(session_id="a")
        )
    assert asked.value.kind == "admin"
    assert [d.title for d in await kb.documents()] == ["退货政策"]


async def test_only_the_admin_approver_lets_a_call_change_the_shared_scope(
    kb: KnowledgeBase,
) -> None:
    asked: list[ApprovalRequest] = []

    async def admin(request: ApprovalRequest) -> bool:
        asked.append(request)
        return True

    def agent(governance: Governance) -> Agent:
        add = ToolCallPart("1", "kb", {"action": "add", "content": "新规定", "scope": "global"})
        model = ScriptedModel([Message.assistant("", [add]), Message.assistant("done")])
        return Agent(model, knowledge_base_tools(kb, scoped=True), governance=governance)

    user_only = Governance(approver=lambda request: True)
    refused = await agent(user_only).run("add it for everyone", Session("alice"))
    assert "admin" in refused.messages[2].tool_results[0].text
    assert [d.title for d in await kb.documents()] == ["退货政策"]
    approved = await agent(Governance(admin_approver=admin)).run("add it", Session("alice"))
    assert not approved.messages[2].tool_results[0].is_error
    assert [r.kind for r in asked] == ["admin"] and asked[0].session_id == "alice"
    assert sorted(d.title for d in await kb.documents()) == ["新规定", "退货政策"]
