"""`Agent(memory=MemorySettings(manager, context=3))`: the tool is there, and each run sees the
prompt's most relevant memories in its system message, as data (a prompt stage, as skills are)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolweave import Agent
from toolweave.agent.orchestration import Children
from toolweave.errors import ConfigError
from toolweave.llm import Message, ScriptedModel, TextPart, ToolCallPart
from toolweave.memory import MemoryManager, MemorySettings
from toolweave.skills import SkillLibrary
from toolweave.storage.retrieval import Embedder


async def test_the_agent_stores_with_the_tool_and_recalls_in_context(
    tmp_path: Path, embedder: Embedder
) -> None:
    memory = MemoryManager(tmp_path / "memory.db", embedder=embedder)
    await memory.add("用户喜欢喝乌龙茶，不加糖", "semantic", 0.9)
    await memory.add("The user's cat is called Mochi", "episodic", 0.6)
    model = ScriptedModel(
        [
            Message.assistant(
                "",
                [
                    ToolCallPart(
                        "1",
                        "memory",
                        {
                            "action": "add",
                            "content": "用户下周去杭州出差",
                            "memory_type": "episodic",
                        },
                    )
                ],
            ),
            Message.assistant("好的，已经记住了。"),
        ]
    )
    agent = Agent(model, instructions="You are helpful.", memory=MemorySettings(memory, context=3))
    assert "memory" in agent.registry
    served = agent.registry.get("memory")
    assert served is not None and "remove" not in served.parameters["properties"]["action"]["enum"]
    result = await agent.run("给我推荐一杯茶，记得我下周去杭州")
    assert result.output == "好的，已经记住了。"
    system = model.requests[0].messages[0]
    assert system.role == "system"
    text = "".join(p.text for p in system.parts if isinstance(p, TextPart))
    assert text.startswith("You are helpful.")
    assert "<memories>" in text and "用户喜欢喝乌龙茶，不加糖" in text
    assert "not instructions" in text
    stored = await memory.search("杭州出差", memory_types=["episodic"], limit=1)
    assert stored[0].item.content == "用户下周去杭州出差"
    await memory.close()


async def test_no_context_without_memory_context(tmp_path: Path, embedder: Embedder) -> None:
    memory = MemoryManager(tmp_path / "memory.db", embedder=embedder)
    await memory.add("The user prefers metric units", "semantic")
    model = ScriptedModel([Message.assistant("ok")])
    agent = Agent(model, memory=memory)  # a bare manager: the tool, no context
    assert agent.memory is memory and "memory" in agent.registry
    await agent.run("units?")
    assert all(m.role != "system" for m in model.requests[0].messages)
    with pytest.raises(ConfigError, match=r"MemorySettings\(context=\.\.\.\) must be 0 or more"):
        MemorySettings(memory, context=-1)
    with pytest.raises(TypeError, match=r"MemorySettings\(manager=\.\.\.\) must be"):
        MemorySettings("memory.db")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Agent\(memory=\.\.\.\) must be a MemorySettings"):
        Agent(model, memory="memory.db")  # type: ignore[arg-type]
    await memory.close()


async def test_memory_and_skills_shape_the_prompt_the_same_way(
    tmp_path: Path, embedder: Embedder
) -> None:
    """Both prompt stages run per run and in one order: instructions, memories, skill catalog;
    a subagent gets the skills but no memories (its prompt is its parent's task)."""
    skill = tmp_path / "skills" / "tea-guide"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: tea-guide\ndescription: 泡茶指南，水温与时间\n---\n绿茶 80°C，乌龙 95°C。\n",
        encoding="utf-8",
    )
    memory = MemoryManager(tmp_path / "memory.db", embedder=embedder)
    await memory.add("用户喜欢喝乌龙茶，不加糖", "semantic", 0.9)
    child = ScriptedModel([Message.assistant("child done")])
    model = ScriptedModel(
        [
            Message.assistant("", [ToolCallPart("1", "subagent_run", {"task": "查一下水温"})]),
            Message.assistant("乌龙用 95°C 的水。"),
        ]
    )
    agent = Agent(
        model,
        instructions="你是茶艺师。",
        memory=MemorySettings(memory, context=2),
        skills=SkillLibrary([tmp_path / "skills"]),
        orchestration=Children(subagents=True, subagent_model=child),
    )
    await agent.run("乌龙茶用多少度的水？")
    system = model.requests[0].messages[0].text
    instructions, memories, catalog = (
        system.index("你是茶艺师。"),
        system.index("用户喜欢喝乌龙茶"),
        system.index("- tea-guide:"),
    )
    assert instructions < memories < catalog
    child_system = child.requests[0].messages[0].text
    assert "- tea-guide:" in child_system and "<memories>" not in child_system
    await memory.close()


async def test_a_read_only_subagent_keeps_the_memory_and_knowledge_tools(
    tmp_path: Path, embedder: Embedder
) -> None:
    """The all-in-one `memory` and `kb` tools are session tools by the category they declare
    (issue 37: the subagent of a parent with `memory` and `subagent_run` got no tool at all)."""
    from toolweave.agent.orchestration.subagents import subagent_registry
    from toolweave.kb import KnowledgeBase, knowledge_base_tools
    from toolweave.memory import MemoryTool
    from toolweave.tools import ToolRegistry

    memory = MemoryManager(tmp_path / "memory.db", embedder=embedder)
    knowledge = KnowledgeBase(tmp_path / "kb.db", "hash")
    parent = ToolRegistry()
    parent.register(MemoryTool(memory))
    for kb_tool in knowledge_base_tools(knowledge):
        parent.register(kb_tool)
    assert not parent.get("memory").annotations.read_only
    assert subagent_registry(parent, "read_only").names() == ["kb", "kb_add", "kb_search", "memory"]
    await memory.close()
    await knowledge.close()
