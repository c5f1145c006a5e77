"""The seed's LangChain agent, toolweave's way: `@tool` registers each function (name, type
hints and docstring become the schema, as LangChain's `@tool` does), the registry shows what
was registered, and `Agent` runs the tool-calling loop that LangChainToolAgent wrote by hand.

.venv/bin/python examples/weather_langchain_style.py                      # offline
TOOLWEAVE_MODEL=deepseek:deepseek-chat .venv/bin/python examples/weather_langchain_style.py
"""

from __future__ import annotations

import json
from typing import Annotated

from _scripted_weather import INSTRUCTIONS, PROMPT, weather_model
from pydantic import Field

from toolweave import Agent, ToolRegistry, tool


@tool(read_only=True, tags=["weather"])
def get_weather(
    city: Annotated[str, Field(description="城市名，例如：北京、上海")],
) -> dict[str, object]:
    """查询指定城市的演示天气信息，返回天气、摄氏温度和湿度。"""
    readings = {"北京": ("晴", 30.0, "35%"), "上海": ("小雨", 27.0, "78%")}
    condition, celsius, humidity = readings.get(city, ("未知", 26.0, "未知"))
    return {"city": city, "condition": condition, "temperature_c": celsius, "humidity": humidity}


@tool(read_only=True, tags=["math"])
def celsius_to_fahrenheit(celsius: float) -> dict[str, float]:
    """把摄氏温度转换为华氏温度。

    Args:
        celsius: 摄氏温度数值，例如 30.0。
    """
    return {"celsius": celsius, "fahrenheit": round(celsius * 9 / 5 + 32, 2)}


def main() -> None:
    registry = ToolRegistry()
    registry.register(get_weather)
    registry.register(celsius_to_fahrenheit)
    print("===== 已注册工具 =====")
    for definition in registry.definitions():  # what the model is sent, sorted by name
        print(definition.name, "-", definition.description)
        print("  args:", json.dumps(definition.parameters["properties"], ensure_ascii=False))
    agent = Agent(weather_model(), registry, instructions=INSTRUCTIONS)
    print("===== 最终回答 =====")
    print(agent.run_sync(PROMPT).output)


if __name__ == "__main__":
    main()
