"""Episodic recall by conversation and by time (seed 003): `search(session_id=, since=,
until=)` on both backends, through the `memory` tool (with the seed's `memory_type` spelling)
and the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.memory.conftest import ManagerFactory
from toolweave.memory import MemoryArgumentError, MemoryManager
from toolweave.memory.tool import MemoryTool
from toolweave.storage.retrieval import Embedder
from toolweave.tools.context import ToolContext

EPISODES = [
    ("s-march", "2024-03-15T10:00:00+00:00", "我们决定用 Postgres 存储会话"),
    ("s-march", "2024-03-16T09:00:00+00:00", "We decided to ship the Postgres session store"),
    ("s-april", "2024-04-02T12:00:00+00:00", "We decided to drop Postgres and keep SQLite"),
    ("s-april", "2024-04-03T08:00:00+00:00", "我们决定放弃 Postgres，保留 SQLite"),
]


async def _add_episodes(manager: MemoryManager) -> None:
    for session, when, text in EPISODES:
        await manager.add(text, "episodic", 0.7, timestamp=when, metadata={"session_id": session})


def _texts(hits: list[Any]) -> set[str]:
    return {h.item.content for h in hits}


async def test_search_by_session_and_by_time_range(make_manager: ManagerFactory) -> None:
    manager = make_manager()
    await _add_episodes(manager)
    await manager.add("Postgres decided in working memory", metadata={"session_id": "s-april"})
    march = await manager.search("Postgres decided 决定", 10, session_id="s-march")
    assert _texts(march) == {EPISODES[0][2], EPISODES[1][2]}
    april = await manager.search("Postgres 决定", 10, session_id="s-april")
    assert _texts(april) == {EPISODES[2][2], EPISODES[3][2], "Postgres decided in working memory"}
    ranged = await manager.search(
        "Postgres 决定",
        10,
        ["episodic"],
        since="2024-03-16T00:00:00+00:00",
        until="2024-04-02T12:00:00+00:00",
    )
    assert _texts(ranged) == {EPISODES[1][2], EPISODES[2][2]}  # both ends included
    assert await manager.search("Postgres", 10, session_id="s-none") == []
    day = await manager.search("Postgres 决定", 10, ["episodic"], until="2024-03-15")
    assert _texts(day) == {EPISODES[0][2]}  # a bare date: the whole day is included
    with pytest.raises(MemoryArgumentError, match="since must be a datetime"):
        await manager.search("Postgres", since="last week")
    with pytest.raises(MemoryArgumentError, match="session_id must be a non-empty string"):
        await manager.search("Postgres", session_id="")


async def test_the_tool_filters_by_session_and_takes_memory_type(
    tmp_path: Path, embedder: Embedder
) -> None:
    manager = MemoryManager(tmp_path / "memory.db", embedder=embedder)
    tool = MemoryTool(manager)
    for session, when, text in EPISODES:
        await tool.execute(
            {"action": "add", "content": text, "memory_type": "episodic", "timestamp": when},
            ToolContext(session_id=session),
        )
    found = (
        await tool.execute(
            {
                "action": "search",
                "query": "Postgres 决定",
                "memory_type": "episodic",
                "session_id": "s-april",
                "limit": 10,
            },
            ToolContext(),
        )
    ).structured
    assert {m["content"] for m in found["memories"]} == {EPISODES[2][2], EPISODES[3][2]}
    with pytest.raises(MemoryArgumentError, match="memory_type or memory_types, not both"):
        await tool.execute(
            {
                "action": "search",
                "query": "x",
                "memory_type": "episodic",
                "memory_types": ["semantic"],
            },
            ToolContext(),
        )
    await manager.close()


def test_the_cli_searches_one_session_and_a_period(tmp_path: Path) -> None:
    from toolweave.cli import app

    db = str(tmp_path / "memory.db")
    runner = CliRunner()
    for session, _, text in EPISODES:
        added = runner.invoke(
            app, ["memory", "--db", db, "add", text, "--meta", f"session_id={session}"]
        )
        assert added.exit_code == 0, added.output
    search = ["memory", "--db", db, "search", "Postgres 决定", "-n", "10", "--json"]
    found = runner.invoke(app, [*search, "--session", "s-march"])
    assert found.exit_code == 0, found.output
    assert {row["content"] for row in json.loads(found.output)} == {
        EPISODES[0][2],
        EPISODES[1][2],
    }
    future = runner.invoke(app, [*search, "--since", "2999-01-01T00:00:00+00:00"])
    assert future.exit_code == 0 and json.loads(future.output) == []
    bad = runner.invoke(app, [*search, "--until", "yesterday"])
    assert bad.exit_code == 2 and "until must be a datetime" in bad.output
