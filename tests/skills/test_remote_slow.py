"""A server slow to list its skills does not hold up an agent's run: two real toolkit servers
over loopback HTTP, one of which answers `skills/list` only once the test lets it. The run
goes on within `skills_timeout` without the slow server's skills (a warning names the server
and the setting), and the next run asks that server again.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.server.inprocess import serve_in_process
from tests.skills.factory import write_skill
from toolweave.agent import Agent
from toolweave.errors import ConfigError
from toolweave.llm import Message, ScriptedModel
from toolweave.mcp import MCPManager, MCPServer
from toolweave.mcp.client.config import ServerConfig
from toolweave.mcp.server.skills import ServedSkill
from toolweave.mcp.shared.jsonrpc import RequestContext
from toolweave.skills import SkillLibrary


def skill_server(tmp_path: Path, name: str, skill: str, description: str) -> MCPServer:
    server = MCPServer(name)
    folder = write_skill(tmp_path / name, skill, f"name: {skill}\ndescription: {description}")
    server.add_skills([ServedSkill.from_folder(folder)])
    return server


@pytest.fixture
async def urls(tmp_path: Path) -> AsyncIterator[tuple[str, str, asyncio.Event]]:
    """A prompt server, a slow one (its `skills/list` waits for the event) and the event."""
    fast = skill_server(tmp_path, "fast", "notes", "整理笔记 take notes")
    slow = skill_server(tmp_path, "slow", "recipes", "菜谱 cooking recipes")
    release = asyncio.Event()
    honest = slow.handlers["skills/list"]

    async def skills_list(session: Any, params: dict[str, Any], ctx: RequestContext) -> Any:
        await release.wait()
        return await honest(session, params, ctx)

    slow.handlers["skills/list"] = skills_list
    async with serve_in_process(fast) as fast_url, serve_in_process(slow) as slow_url:
        try:
            yield fast_url, slow_url, release
        finally:
            release.set()


async def test_a_server_slow_to_list_its_skills_does_not_hold_up_the_run(
    urls: tuple[str, str, asyncio.Event], caplog: pytest.LogCaptureFixture
) -> None:
    fast_url, slow_url, release = urls
    servers = {
        "fast": ServerConfig("fast", url=fast_url),
        "slow": ServerConfig("slow", url=slow_url),
    }
    async with MCPManager(servers, skills_timeout=0.5) as manager:
        library = SkillLibrary([])
        library.add_remote(manager)
        model = ScriptedModel([Message.assistant("第一次"), Message.assistant("second")])
        agent = Agent(model, [], skills=library)
        first = await agent.run("记笔记")
        listed_first = list(library.remote)
        release.set()
        manager.skills_timeout = 30.0  # the server now answers: give it all the time it needs
        second = await agent.run("what's for dinner?")
    assert first.output == "第一次" and second.output == "second"
    assert listed_first == ["fast__notes"]
    assert "- fast__notes: 整理笔记" in model.requests[0].messages[0].text
    assert "recipes" not in model.requests[0].messages[0].text
    # Too slow the first time, so asked again before the next run, which lists it.
    assert list(library.remote) == ["fast__notes", "slow__recipes"]
    assert "- slow__recipes: 菜谱 cooking recipes" in model.requests[1].messages[0].text
    (warning,) = [r.getMessage() for r in caplog.records if "skills/list did not" in r.getMessage()]
    assert "'slow'" in warning and "skills_timeout (0.5 s)" in warning


def test_skills_timeout_is_checked_where_it_is_set() -> None:
    entry = ServerConfig.from_dict("docs", {"url": "http://127.0.0.1:9/mcp", "skills_timeout": 2})
    assert entry.skills_timeout == 2.0 and entry.to_dict()["skills_timeout"] == 2.0
    for bad in (0, -1, math.nan, math.inf, True, "5"):
        raw = {"url": "http://127.0.0.1:9/mcp", "skills_timeout": bad}
        with pytest.raises(ConfigError, match=r"mcpServers\.docs\.skills_timeout must be a posi"):
            ServerConfig.from_dict("docs", raw)
    with pytest.raises(ValueError, match="skills_timeout must be a positive finite number"):
        MCPManager({}, skills_timeout=math.nan)
