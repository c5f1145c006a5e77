"""Lazy two-phase MCP loading inside a real agent run: the model discovers, loads into its
session's overlay, then calls the loaded tool; other sessions and the shared registry never
see it. The server is our own `examples/weather_server.py` over stdio."""

from __future__ import annotations

import sys
from pathlib import Path

from toolweave.agent import Agent, Session
from toolweave.llm import Message, ModelRequest, ScriptedModel, ToolCallPart
from toolweave.mcp import MCPManager

SERVER = str(Path(__file__).resolve().parents[2] / "examples" / "weather_server.py")
CONFIG = {"mcpServers": {"weather": {"command": sys.executable, "args": [SERVER]}}}


def names(request: ModelRequest) -> list[str]:
    return [d.name for d in request.tools]


def call(call_id: str, name: str, **args: object) -> Message:
    return Message.assistant(tool_calls=[ToolCallPart(call_id, name, dict(args))])


async def test_model_discovers_loads_and_calls_an_mcp_tool_in_its_session() -> None:
    model = ScriptedModel(
        [
            call("d", "mcp_discover"),
            call("l", "mcp_load", tools=["weather__get_weather"]),
            call("w", "weather__get_weather", city="Beijing"),
            Message.assistant("Sunny and 30 °C in Beijing."),
            Message.assistant("Still loaded."),
            Message.assistant("A fresh session."),
        ]
    )
    async with MCPManager.from_config(CONFIG) as manager:
        agent = Agent(model, manager.model_tools(lazy=True))
        session = Session()
        result = await agent.run("Weather in Beijing?", session=session)
        await agent.run("Anything else?", session=session)
        await agent.run("Hello", session=Session())

    discovered, loaded, called = (inv.result.text for inv in result.invocations)
    assert "weather__get_weather" in discovered and "weather__celsius_to_fahrenheit" in discovered
    assert "Loaded: weather__get_weather" in loaded
    assert '"temperature_c": 30.0' in called and result.invocations[2].ok

    lazy = ["mcp_discover", "mcp_load", "read_result"]
    first, second, third, _, same_session, other_session = model.requests
    assert names(first) == lazy == names(second)
    assert names(third) == [*lazy, "weather__get_weather"]
    assert names(same_session) == names(third)  # loaded tools stay for the session
    assert names(other_session) == lazy  # the shared registry is untouched
    assert agent.registry.names() == lazy
