"""The conversation every adapter test replays: two tools, parallel calls, results back."""

from __future__ import annotations

from typing import Any

import httpx

from toolweave.llm import (
    AnthropicModel,
    Finished,
    GeminiModel,
    ImagePart,
    Message,
    Model,
    ModelResponse,
    OpenAIChatModel,
    OpenAIResponsesModel,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCallReady,
)
from toolweave.tools import ToolDef

WEATHER = ToolDef(
    "get_weather",
    "Weather forecast for a city.",
    {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name, e.g. 北京"},
            "days": {"type": "integer", "default": 1, "minimum": 1},
            "unit": {"$ref": "#/$defs/Unit"},
        },
        "required": ["city"],
        "additionalProperties": False,
        "$defs": {"Unit": {"type": "string", "enum": ["c", "f"], "default": "c"}},
    },
)
CLOCK = ToolDef("get_time", "Current local time.", {"type": "object", "properties": {}})
TOOLS = [WEATHER, CLOCK]
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4"
    "2mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def opening() -> list[Message]:
    photo = ImagePart(data=PNG, mime_type="image/png")
    return [Message.system("You are a weather bot."), Message.user("北京和上海天气？", [photo])]


def with_results(response: ModelResponse) -> list[Message]:
    """History after executing every call: one error, one with an image, the rest JSON."""
    history = [*opening(), response.message]
    for index, call in enumerate(response.message.tool_calls):
        if index == 0:
            content: Any = [TextPart('{"temp": 15, "sky": "晴"}'), ImagePart(data=PNG)]
            history.append(Message.tool_result(call.id, call.name, content))
        elif index == 1:
            history.append(Message.tool_result(call.id, call.name, "city not found", True))
        else:
            history.append(Message.tool_result(call.id, call.name, "ok"))
    history.append(Message.user("Thanks. Summarise, please."))
    return history


async def collect(stream: Any) -> tuple[list[StreamEvent], ModelResponse]:
    events = [event async for event in stream]
    assert isinstance(events[-1], Finished), "a stream must end with Finished"
    assert sum(isinstance(e, Finished) for e in events) == 1
    return events, events[-1].response


def streamed_text(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def ready_calls(events: list[StreamEvent]) -> list[Any]:
    return [e.call for e in events if isinstance(e, ToolCallReady)]


ADAPTERS = {
    "openai_chat": OpenAIChatModel,
    "responses": OpenAIResponsesModel,
    "anthropic": AnthropicModel,
    "gemini": GeminiModel,
}
"""Each adapter by the prefix of its fixtures (`openai_chat_text.sse`, `gemini_tools.json`)."""


def adapter(kind: str, url: str, client: httpx.AsyncClient) -> Model:
    """The adapter `kind` pointed at a replay server, with a dummy key."""
    model: Model = ADAPTERS[kind]("m", base_url=url, api_key="k", client=client)
    return model
