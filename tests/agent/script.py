"""Shorthands for scripting model turns and reading back what the loop sent, shared by the
agent tests (imported by module name, like `agent_fake_openai`)."""

from __future__ import annotations

from typing import Any

from toolweave.agent import Agent, Session
from toolweave.llm import Message, ToolCallPart, ToolResultPart


def call(name: str, cid: str, **args: Any) -> ToolCallPart:
    return ToolCallPart(cid, name, args)


def calls(*parts: ToolCallPart, text: str = "") -> Message:
    return Message.assistant(text, list(parts))


def tool_messages(request_messages: list[Message]) -> list[ToolResultPart]:
    return [p for m in request_messages if m.role == "tool" for p in m.tool_results]


async def collect(agent: Agent, prompt: str, session: Session | None = None) -> list[Any]:
    return [event async for event in agent.run_stream(prompt, session)]
