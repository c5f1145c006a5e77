"""The agent never changes the registry its caller passed in: memory, skills and orchestration
register in the agent's own layer, so two agents (one with memory, one with memory and skills)
share one registry, both work, and the shared registry ends as it began."""

from __future__ import annotations

from pathlib import Path

from toolweave import Agent
from toolweave.llm import Message, ScriptedModel, ToolCallPart
from toolweave.memory import MemoryManager
from toolweave.skills import SkillLibrary
from toolweave.storage.retrieval import Embedder
from toolweave.tools import PermissionPolicy, ToolRegistry, tool

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"


@tool(read_only=True)
def clock() -> str:
    """The time (fixed)."""
    return "12:00"


async def test_two_agents_share_one_registry_and_leave_it_unchanged(
    tmp_path: Path, embedder: Embedder
) -> None:
    shared = ToolRegistry()
    shared.register(clock)
    before = shared.names()
    memory = MemoryManager(tmp_path / "memory.db", embedder=embedder)
    add = ToolCallPart("1", "memory", {"action": "add", "content": "用户住在杭州"})
    first = Agent(
        ScriptedModel([Message.assistant(tool_calls=[add]), Message.assistant("记住了")]),
        shared,
        memory=memory,
    )
    read = ToolCallPart("1", "skill_read", {"name": "web-research"})
    both = [read, ToolCallPart("2", "clock", {})]
    second = Agent(
        ScriptedModel([Message.assistant(tool_calls=both), Message.assistant("done")]),
        shared,
        memory=memory,
        skills=SkillLibrary([EXAMPLES]),
    )
    assert shared.names() == before  # nothing registered on the caller's registry
    assert {"memory", "clock"} <= set(first.registry.names())
    assert {"memory", "skill_read", "clock"} <= set(second.registry.names())
    assert "skill_read" not in first.registry

    remembered = await first.run("我住在杭州")
    researched = await second.run("research something")
    assert remembered.output == "记住了" and all(i.ok for i in remembered.invocations)
    assert researched.output == "done" and all(i.ok for i in researched.invocations)
    assert (await memory.search("杭州", limit=1))[0].item.content == "用户住在杭州"
    assert shared.names() == before and shared.stats() == {}

    shared.policy = PermissionPolicy.allow_all()  # the caller's policy still reaches its layer
    assert first.registry.policy is shared.policy
    await memory.close()
