"""The seed's weather tools served over MCP stdio by the official SDK (a real, independent peer).

Run as a script: `python weather_mcp_server.py`. The functions are toolweave's demo tools,
so answers match the local versions exactly.
"""

from __future__ import annotations

from mcp.server import MCPServer

from toolweave.tools.demo import calculate, celsius_to_fahrenheit, get_weather

server = MCPServer("weather")


@server.tool(name="get_weather")
def weather(city: str) -> dict[str, object]:
    """Current weather for a city: temperature in Celsius and conditions."""
    return get_weather.func(city)


@server.tool(name="celsius_to_fahrenheit")
def to_fahrenheit(celsius: float) -> float:
    """Convert a temperature from Celsius to Fahrenheit."""
    return celsius_to_fahrenheit.func(celsius)


@server.tool(name="calculate")
def calc(expression: str) -> float:
    """Evaluate an arithmetic expression."""
    return calculate.func(expression)


if __name__ == "__main__":
    server.run()
