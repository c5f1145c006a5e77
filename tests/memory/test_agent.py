"""`Agent(..., memory=manager, memory_context=3)`: the tool is there, and each run sees the
prompt's most relevant memories in its system message, as data."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolweave import Agent
from toolweave.errors import ConfigError
from toolweave.llm import Message, ScriptedModel, TextPart, ToolCallPart
from toolweave.memory import MemoryManager, MemorySettings
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
    await Agent(model, memory=memory).run("units?")
    assert all(m.role != "system" for m in model.requests[0].messages)
    with pytest.raises(ConfigError, match=r"needs Agent\(memory=\.\.\.\)"):
        Agent(model)
    await memory.close()
