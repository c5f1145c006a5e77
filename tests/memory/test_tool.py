"""The `memory` tool: called directly, through the registry, and served by `toolweave serve`
to the official MCP SDK client."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from toolweave.memory import MemoryArgumentError, MemoryManager
from toolweave.memory.tool import ALL_ACTIONS, DEFAULT_ACTIONS, MemoryTool
from toolweave.storage.retrieval import Embedder
from toolweave.tools import Permission, ToolRegistry
from toolweave.tools.context import ToolContext

TOOLWEAVE = Path(sys.executable).with_name("toolweave")


@pytest.fixture
async def manager(tmp_path: Path, embedder: Embedder) -> Any:
    m = MemoryManager(tmp_path / "memory.db", embedder=embedder)
    yield m
    await m.close()


async def call(tool: MemoryTool, session: str | None = "s-1", **args: Any) -> Any:
    return (await tool.execute(args, ToolContext(session_id=session))).structured


async def test_every_action_in_chinese_and_english(manager: MemoryManager) -> None:
    tool = MemoryTool(manager, actions=ALL_ACTIONS)
    added = await call(
        tool,
        action="add",
        content="2024年3月15日，用户张三完成了第一个Python项目",
        memory_type="episodic",
        importance=0.8,
        metadata={"event_type": "milestone"},
    )
    item = await manager.get(added["id"])
    assert item is not None and item.metadata == {"event_type": "milestone", "session_id": "s-1"}
    await call(
        tool, action="add", content="Python is an interpreted language", memory_type="semantic"
    )
    await call(tool, action="add", content="用户刚才问了关于Python函数的问题", importance=0.9)
    found = await call(tool, action="search", query="Python项目", limit=2, explain=True)
    assert found["memories"][0]["id"] == added["id"]
    assert "explanation" in found["memories"][0]
    stats = await call(tool, action="stats")
    assert stats["total"] == 3
    assert "Python" in (await tool.execute({"action": "summary"}, ToolContext())).text
    updated = await call(tool, action="update", memory_id=added["id"], importance=0.95)
    assert updated["importance"] == 0.95
    assert await call(tool, action="consolidate", importance_threshold=0.8) == {"consolidated": 1}
    assert await call(tool, action="forget", strategy="importance_based", threshold=0.6) == {
        "forgotten": 1
    }
    assert await call(tool, action="remove", memory_id=added["id"]) == {"removed": True}
    assert await call(tool, action="clear_all") == {"cleared": 1}


async def test_bad_calls_are_clear_recoverable_errors(manager: MemoryManager) -> None:
    tool = MemoryTool(manager)
    cases: list[tuple[dict[str, Any], str]] = [
        ({"action": "dance"}, "action must be one of"),
        ({"action": "clear_all"}, "action must be one of"),  # not served by default
        ({"action": "search"}, r"action 'search' needs \['query'\]"),
        ({"action": "stats", "query": "x"}, r"does not take \['query'\]"),
        ({"action": "add", "content": "x", "memory_type": "dream"}, "memory_type must be"),
        ({"action": "update", "memory_id": "nope", "importance": 0.2}, "no such memory"),
    ]
    for args, message in cases:
        with pytest.raises(MemoryArgumentError, match=message) as caught:
            await tool.execute(args, ToolContext())
        assert caught.value.recoverable


def test_schema_permissions_and_registry(manager: MemoryManager) -> None:
    tool = MemoryTool(manager)
    assert tool.name == "memory"
    assert tool.parameters["properties"]["action"]["enum"] == list(DEFAULT_ACTIONS)
    assert tool.permissions == {Permission.READ, Permission.WRITE, Permission.DELETE}
    reader = MemoryTool(manager, actions=["add", "search"])
    assert reader.permissions == {Permission.READ, Permission.WRITE}
    assert set(reader.parameters["properties"]) >= {"action", "content", "query"}
    # Destructive exactly when a deleting action is offered (served memory offers none).
    assert tool.annotations.destructive and not reader.annotations.destructive
    assert "strategy" not in reader.parameters["properties"]
    registry = ToolRegistry()
    registry.register(tool)
    assert registry.get("memory") is tool
    with pytest.raises(ValueError, match="unknown"):
        MemoryTool(manager, actions=["fly"])


async def test_served_memory_with_the_official_mcp_client(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (tmp_path / "toolweave.toml").write_text(
        f'[serve]\nproviders = ["memory"]\ndata_dir = "{data.as_posix()}"\n'
    )
    params = StdioServerParameters(
        command=str(TOOLWEAVE),
        args=["serve", "--stdio", "-c", "toolweave.toml"],
        cwd=tmp_path,
        env=dict(os.environ),
    )
    async with Client(params, mode="auto") as client:
        tools = (await client.list_tools()).tools
        added = await client.call_tool(
            "memory",
            {"action": "add", "content": "小明喜欢喝乌龙茶", "memory_type": "semantic"},
            meta={"toolweave/user_id": "xiaoming"},
        )
        other = await client.call_tool(
            "memory", {"action": "add", "content": "Bob likes espresso", "user_id": "bob"}
        )
        mine = await client.call_tool(
            "memory",
            {"action": "search", "query": "乌龙茶"},
            meta={"toolweave/user_id": "xiaoming"},
        )
        bobs = await client.call_tool(
            "memory", {"action": "search", "query": "乌龙茶", "user_id": "bob"}
        )
        bad = await client.call_tool("memory", {"action": "fly"})
    assert [t.name for t in tools] == ["memory"]
    assert tools[0].annotations is not None and tools[0].annotations.destructive_hint is False
    served_actions = tools[0].input_schema["properties"]["action"]["enum"]
    assert "search" in served_actions and not {"remove", "forget", "clear_all"} & set(
        served_actions
    )
    assert added.structured_content is not None and other.structured_content is not None
    assert mine.structured_content is not None
    assert [m["content"] for m in mine.structured_content["memories"]] == ["小明喜欢喝乌龙茶"]
    assert bobs.structured_content is not None and bobs.structured_content["count"] == 0
    assert bad.is_error and "action must be one of" in bad.content[0].text  # type: ignore[union-attr]
    assert (data / "memory.db").exists()
    reopened = MemoryManager(data / "memory.db", user_id="xiaoming", embedder="auto")
    assert (await reopened.stats())["types"]["semantic"]["count"] == 1
    await reopened.close()
