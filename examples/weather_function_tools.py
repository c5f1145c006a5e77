"""The seed's function-calling agent: plain Python functions become tools, the agent loop does
the rest (the seed's FunctionCallAgent, without the hand-written loop).

.venv/bin/python examples/weather_function_tools.py                      # offline
TOOLWEAVE_MODEL=openai:gpt-4o-mini .venv/bin/python examples/weather_function_tools.py
"""

from __future__ import annotations

from _scripted_weather import INSTRUCTIONS, PROMPT, weather_model

from toolweave import Agent

DEMO_WEATHER = {
    "北京": {"condition": "晴", "temperature_c": 30.0, "humidity": "35%"},
    "上海": {"condition": "小雨", "temperature_c": 27.0, "humidity": "78%"},
    "深圳": {"condition": "多云", "temperature_c": 32.0, "humidity": "70%"},
    "杭州": {"condition": "阴", "temperature_c": 28.0, "humidity": "65%"},
}


def get_weather(city: str) -> dict[str, object]:
    """查询指定城市的演示天气信息，返回天气、摄氏温度和湿度。

    Args:
        city: 城市名，例如：北京、上海、深圳、杭州。
    """
    weather = DEMO_WEATHER.get(
        city, {"condition": "未知", "temperature_c": 26.0, "humidity": "未知"}
    )
    return {"city": city, **weather, "source": "demo_local_weather_db"}


def celsius_to_fahrenheit(celsius: float) -> float:
    """把摄氏温度转换为华氏温度。

    Args:
        celsius: 摄氏温度数值，例如 30.0。
    """
    return round(celsius * 9 / 5 + 32, 2)


def main() -> None:
    # Plain functions are wrapped with @tool: the schema comes from the hints and docstring.
    agent = Agent(weather_model(), [get_weather, celsius_to_fahrenheit], instructions=INSTRUCTIONS)
    result = agent.run_sync(PROMPT)
    for invocation in result.invocations:
        print(f"tool {invocation.name}({invocation.args}) -> {invocation.result.text}")
    print(result.output)


if __name__ == "__main__":
    main()
