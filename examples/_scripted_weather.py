"""The model the weather examples use: `TOOLWEAVE_MODEL` when set (any model string, e.g.
`openai:gpt-4o-mini` or `openai-compat:http://127.0.0.1:8000/v1#qwen2.5`), else an offline
`ScriptedModel` that plays the seed's scenario and reads the real tool results: it asks for the
weather, converts the temperature it got, then answers from both results."""

from __future__ import annotations

import os
import re

from toolweave.llm import Message, Model, ModelRequest, ScriptedModel, ToolCallPart

PROMPT = "请查询北京天气，并把摄氏温度换算成华氏温度，最后给出穿衣建议。"
INSTRUCTIONS = "Answer in the user's language. Use the tools for weather and conversions."


def _results(request: ModelRequest) -> list[str]:
    return [p.text for m in request.messages if m.role == "tool" for p in m.tool_results]


def _number(text: str, key: str) -> float:
    found = re.search(rf'"?{key}"?\s*[:=]\s*(-?\d+(?:\.\d+)?)', text)
    if found is None:
        raise ValueError(f"no {key} in the tool result: {text[:200]}")
    return float(found.group(1))


def weather_model(tool_prefix: str = "") -> Model | str:
    """`TOOLWEAVE_MODEL`, or the offline script; `tool_prefix` is what the tools' names start
    with (an MCP bridge adds one)."""
    configured = os.environ.get("TOOLWEAVE_MODEL")
    if configured:
        return configured

    def ask_weather(request: ModelRequest) -> Message:
        call = ToolCallPart("call_1", f"{tool_prefix}get_weather", {"city": "北京"})
        return Message.assistant(tool_calls=[call])

    def convert(request: ModelRequest) -> Message:
        celsius = _number(_results(request)[-1], "(?:temperature_c|celsius)")
        name = f"{tool_prefix}celsius_to_fahrenheit"
        return Message.assistant(tool_calls=[ToolCallPart("call_2", name, {"celsius": celsius})])

    def answer(request: ModelRequest) -> Message:
        weather, converted = _results(request)[-2:]
        celsius = _number(weather, "(?:temperature_c|celsius)")
        fahrenheit = float(re.findall(r"-?\d+(?:\.\d+)?", converted)[-1])  # the last number
        advice = "穿短袖，注意防晒" if celsius >= 25 else "穿一件薄外套"
        return Message.assistant(f"北京现在 {celsius:g}°C（{fahrenheit:g}°F），建议{advice}。")

    return ScriptedModel([ask_weather, convert, answer])
