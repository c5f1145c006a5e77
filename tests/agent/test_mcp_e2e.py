"""The canonical scenario with its tools served by a real MCP server (the official SDK, over
stdio, reached through toolweave's MCPClient) and the model behind a loopback OpenAI server."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.agent.fake_openai import FakeOpenAI, Reply
from toolweave.agent import Agent, RunFailed, Session
from toolweave.llm import Message, ModelRequest, OpenAIChatModel, ScriptedModel, ToolCallPart
from toolweave.mcp import MCPError, as_tools
from toolweave.mcp.client import MCPClient

SERVER = str(Path(__file__).with_name("weather_mcp_server.py"))
PROMPT = "What's the weather in Beijing in Fahrenheit, and what should I wear?"
ANSWER = "Sunny, 12°C / 53.6°F in Beijing: a light jacket will do."


def weather_server() -> MCPClient:
    return MCPClient.stdio(sys.executable, [SERVER], name="weather")


async def test_weather_scenario_with_mcp_tools() -> None:
    replies = [
        Reply(None, [("call_w", "get_weather", {"city": "Beijing"})]),
        Reply(None, [("call_f", "celsius_to_fahrenheit", {"celsius": 12.0})]),
        Reply(ANSWER),
    ]
    async with weather_server() as client:
        tools = await as_tools(client)
        with FakeOpenAI(replies) as server:
            async with OpenAIChatModel("fake", base_url=server.base_url, api_key="sk-test") as m:
                events = [e async for e in Agent(m, tools).run_stream(PROMPT)]
    final = events[-1]
    assert final.result.output == ANSWER  # type: ignore[union-attr]
    sent = server.requests
    names = [t["function"]["name"] for t in sent[0]["tools"]]
    assert names == ["calculate", "celsius_to_fahrenheit", "get_weather", "read_result"]
    assert all(r["tools"] == sent[0]["tools"] for r in sent)
    weather, fahrenheit = sent[1]["messages"][-1], sent[2]["messages"][-1]
    assert weather["tool_call_id"] == "call_w" and '"celsius": 12.0' in weather["content"]
    assert fahrenheit["tool_call_id"] == "call_f" and "53.6" in fahrenheit["content"]


async def test_a_dead_mcp_server_ends_the_run() -> None:
    async with weather_server() as client:
        tools = await as_tools(client)
        pid = client.server_pid
        assert pid is not None

        def kill_then_call(request: ModelRequest) -> Message:
            os.kill(pid, signal.SIGKILL)
            return Message.assistant(
                "", [ToolCallPart("2", "celsius_to_fahrenheit", {"celsius": 1})]
            )

        model = ScriptedModel(
            [
                Message.assistant("", [ToolCallPart("1", "get_weather", {"city": "Beijing"})]),
                kill_then_call,
                Message.assistant("unreachable"),
            ]
        )
        session = Session()
        events: list[Any] = []
        with pytest.raises(MCPError):
            async for event in Agent(model, tools).run_stream(PROMPT, session):
                events.append(event)
    assert isinstance(events[-1], RunFailed) and events[-1].error.recoverable is False
    assert model.remaining == 1  # the model was not asked to recover from a broken transport
    results = [p for m in session.messages for p in m.tool_results]
    assert [p.call_id for p in results] == ["1", "2"] and results[1].is_error
