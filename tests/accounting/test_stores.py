"""QueryLog and TeamStore on SQLite and on the real Postgres server."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support import store_args
from toolweave.accounting import QueryLog
from toolweave.agent.orchestration import GLOBAL_TEAM_SCOPE, TeamStore

__all__ = ["store_args"]


async def test_query_log_rows_and_recent_newest_first(store_args: dict[str, Any]) -> None:
    log = QueryLog(**store_args)
    try:
        first = await log.start("北京天气怎么样?", "chat-1")
        second = await log.start("convert 12 C", "chat-2")
        running = await log.recent(5)
        assert [r.id for r in running] == [second, first]
        assert {r.status for r in running} == {"running"}
        tools = [f"tool_{i}" for i in range(25)]
        await log.finish(first, "success", tools=tools, tokens=321, duration=1.5)
        await log.finish(second, "timeout", error="took too long")
        newest, oldest = await log.recent(2)
        assert (newest.id, newest.status, newest.error) == (second, "timeout", "took too long")
        assert oldest.input == "北京天气怎么样?" and oldest.session_id == "chat-1"
        assert oldest.tool_calls == 25 and oldest.tools == tools[:20]
        assert (oldest.tokens, oldest.duration, oldest.status) == (321, 1.5, "success")
        assert newest.duration >= 0
        assert [r.id for r in await log.recent(1)] == [second]
        with pytest.raises(ValueError, match="status='running'"):
            await log.finish(first, "running")
    finally:
        await log.close()


def test_query_log_recent_sync_reads_the_same_rows(tmp_path: Any) -> None:
    import asyncio

    log = QueryLog(tmp_path / "q.db")

    async def write() -> None:
        row = await log.start("hello", "s")
        await log.finish(row, "error", error="boom")

    asyncio.run(write())
    (row,) = log.recent_sync(10)
    assert (row.input, row.status, row.error) == ("hello", "error", "boom")
    log.close_sync()


async def test_teams_scoped_per_session_or_global(store_args: dict[str, Any]) -> None:
    teams = TeamStore(**store_args)
    try:
        members = [
            {"name": "研究员", "role": "Find sources."},
            {"name": "writer", "role": "Write."},
        ]
        await teams.save("调研小组", members, description="research", scope=GLOBAL_TEAM_SCOPE)
        await teams.save("reviewers", [{"name": "critic", "role": "Find flaws."}], scope="chat-1")
        # chat-1 sees its own and the global teams; chat-2 only the global one.
        assert [t.name for t in await teams.list(scope="chat-1")] == ["reviewers", "调研小组"]
        assert [t.name for t in await teams.list(scope="chat-2")] == ["调研小组"]
        found = await teams.get("调研小组", scope="chat-2")
        assert found is not None and [m.name for m in found.members] == ["研究员", "writer"]
        # A session's team shadows the global one of the same name, for that session only.
        await teams.save("调研小组", [{"name": "solo", "role": "All."}], scope="chat-1")
        mine = await teams.get("调研小组", scope="chat-1")
        assert mine is not None and mine.scope == "chat-1" and len(mine.members) == 1
        theirs = await teams.get("调研小组", scope="chat-2")
        assert theirs is not None and len(theirs.members) == 2
        assert await teams.delete("reviewers", scope="chat-2") is False
        assert await teams.delete("reviewers", scope="chat-1") is True
        assert await teams.get("reviewers", scope="chat-1") is None
    finally:
        await teams.close()


async def test_team_names_and_members_are_validated(tmp_path: Any) -> None:
    teams = TeamStore(tmp_path / "t.db")
    try:
        with pytest.raises(ValueError, match="team 'bad name!' is not a valid name"):
            await teams.save("bad name!", [{"name": "a", "role": "r"}])
        with pytest.raises(ValueError, match="at most 10"):
            await teams.save("big", [{"name": f"m{i}", "role": "r"} for i in range(11)])
        with pytest.raises(ValueError, match="distinct"):
            await teams.save("dup", [{"name": "a", "role": "r"}, {"name": "a", "role": "s"}])
        with pytest.raises(ValueError, match="non-empty list"):
            await teams.save("empty", [])
        with pytest.raises(ValueError, match="object"):
            await teams.save("weird", [{"name": "a", "role": "r", "model": "x"}])
    finally:
        await teams.close()
