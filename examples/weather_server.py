"""The seed's weather scenario as an MCP server: two tools and a prompt, offline demo data.

.venv/bin/python examples/weather_server.py            # stdio (Claude Desktop, Inspector)
.venv/bin/python examples/weather_server.py --http 8000  # Streamable HTTP at /mcp
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from toolweave.mcp import MCPServer

server = MCPServer(
    "weather",
    "1.0.0",
    instructions="Use get_weather for current conditions and celsius_to_fahrenheit to convert.",
)

# Fixed readings so the demo is reproducible offline.
_DEMO_WEATHER = {
    "北京": ("晴", 30.0, "35%"),
    "上海": ("小雨", 27.0, "78%"),
    "深圳": ("多云", 32.0, "70%"),
    "杭州": ("阴", 28.0, "65%"),
    "beijing": ("sunny", 30.0, "35%"),
    "shanghai": ("light rain", 27.0, "78%"),
}


@dataclass
class Weather:
    city: str
    condition: str
    temperature_c: float
    humidity: str
    source: str


@server.tool(read_only=True, title="Current weather")
def get_weather(
    city: Annotated[str, Field(description="City name, e.g. 北京, 上海, Beijing")],
) -> Weather:
    """Current demo weather for a city: condition, temperature in Celsius and humidity."""
    condition, celsius, humidity = _DEMO_WEATHER.get(
        city.strip().lower(), ("unknown", 26.0, "unknown")
    )
    return Weather(city, condition, celsius, humidity, source="demo_local_weather_db")


@server.tool(read_only=True)
def celsius_to_fahrenheit(celsius: float) -> float:
    """Convert a temperature from Celsius to Fahrenheit.

    Args:
        celsius: Temperature in degrees Celsius, e.g. 30.0.
    """
    return round(celsius * 9 / 5 + 32, 2)


@server.prompt(title="Should I take an umbrella?")
def umbrella_advice(city: str) -> str:
    """Ask whether to take an umbrella in a city tomorrow.

    Args:
        city: The city you are going to
    """
    return (
        f"I'm going to {city} tomorrow. Check the weather with get_weather and tell me, "
        "in one sentence, whether I should take an umbrella. Give the temperature in both "
        "Celsius and Fahrenheit."
    )


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run(transport="http", port=int(sys.argv[2]))
    else:
        server.run()
