"""A memory agent: two conversations a day apart share one memory file. In the first the
model stores what it learned with the `memory` tool; in the second `memory_context` puts the
most relevant memories into the prompt, so the answer uses them without being told again.

.venv/bin/python examples/memory_agent.py                      # offline, a temporary file
TOOLWEAVE_MODEL=openai:gpt-4o .venv/bin/python examples/memory_agent.py
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path
from typing import Any

from toolweave import Agent
from toolweave.llm import Message, Model, ModelRequest, ScriptedModel, ToolCallPart
from toolweave.memory import MemoryManager, MemorySettings

FACT = "用户张三喜欢喝乌龙茶，不加糖；对花生过敏"
REMEMBER = {"action": "add", "content": FACT, "memory_type": "semantic", "importance": 0.9}


def _model(script: list[Any]) -> Model | str:
    """`TOOLWEAVE_MODEL` when set, else the offline script."""
    return os.environ.get("TOOLWEAVE_MODEL") or ScriptedModel(script)


def recall(request: ModelRequest) -> Message:
    """Answer from the memories the agent put into the prompt (offline script)."""
    prompt = "\n".join(str(getattr(p, "text", "")) for m in request.messages for p in m.parts)
    drink = "乌龙茶（不加糖）" if "乌龙茶" in prompt else "（不记得）"
    allergy = "，并避开花生" if "花生" in prompt else ""
    return Message.assistant(f"给张三准备{drink}{allergy}。")


async def main() -> None:
    path = Path(tempfile.mkdtemp()) / "memory.db"
    async with MemoryManager(path, user_id="zhangsan") as memory:
        first = Agent(
            _model(
                [
                    Message.assistant(tool_calls=[ToolCallPart("m1", "memory", REMEMBER)]),
                    Message.assistant("好的，我记住了。"),
                ]
            ),
            memory=memory,
        )
        print("第一次:", (await first.run(f"记住：{FACT}")).output)

        second = Agent(_model([recall]), memory=MemorySettings(memory, context=3))
        print("第二次:", (await second.run("明天张三来开会，茶歇准备什么？")).output)
        print(await memory.stats())


if __name__ == "__main__":
    asyncio.run(main())
