"""The seed's MCP agent: the weather tools live in an MCP server (examples/weather_server.py,
started over stdio); the agent gets them as ordinary tools and calls them across the protocol.

.venv/bin/python examples/weather_mcp_agent.py                      # offline
TOOLWEAVE_MODEL=openai:gpt-4o-mini .venv/bin/python examples/weather_mcp_agent.py
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from _scripted_weather import INSTRUCTIONS, PROMPT, weather_model

from toolweave import Agent
from toolweave.mcp import MCPClient, as_tools

SERVER = Path(__file__).with_name("weather_server.py")
PREFIX = "weather__"


async def main() -> None:
    async with MCPClient.stdio(sys.executable, [str(SERVER)]) as client:
        print("MCP server:", client.server_info.name, client.protocol_version)
        tools = await as_tools(client, prefix=PREFIX)
        print("tools:", sorted(t.name for t in tools))
        agent = Agent(weather_model(PREFIX), tools, instructions=INSTRUCTIONS)
        result = await agent.run(PROMPT)
    for invocation in result.invocations:
        print(f"tool {invocation.name} -> {invocation.result.text}")
    print(result.output)


if __name__ == "__main__":
    asyncio.run(main())
