"""Prompt caching: Anthropic breakpoints from an agent by default (and none when turned off),
cache reads and writes in `Usage`, OpenAI's `prompt_cache_key` per session, Gemini's implicit
cache in usage; and provider-run tool parts shown as agent events."""

from __future__ import annotations

import json

from tests.llm.mock import Answers, anthropic_stream
from tests.llm.oracles import check_anthropic, check_openai_chat, check_openai_responses
from tests.llm.replay_server import fixture_json
from toolweave.agent import Agent, ProviderToolActivity, Session
from toolweave.llm import (
    AnthropicModel,
    GeminiModel,
    Message,
    ModelRequest,
    ModelSettings,
    OpenAIChatModel,
    OpenAIResponsesModel,
    ProviderTool,
    TextPart,
)
from toolweave.llm.anthropic import CACHE_BREAKPOINTS_MAX
from toolweave.tools import tool


@tool
def get_weather(city: str) -> str:
    """Weather forecast for a city."""
    return f"{city}: sunny"


def _marked(body: dict[str, object]) -> list[str]:
    """Where the breakpoints are, as readable labels."""
    found = []
    text = json.dumps(body)
    for tool_def in body.get("tools", []):  # type: ignore[attr-defined]
        if "cache_control" in tool_def:
            found.append(f"tool {tool_def['name']}")
    for block in body.get("system", []):  # type: ignore[attr-defined]
        if "cache_control" in block:
            found.append("system")
    for index, message in enumerate(body["messages"]):  # type: ignore[index]
        for block in message["content"]:
            if "cache_control" in block:
                found.append(f"message {index} {block['type']}")
    assert text.count("cache_control") == len(found) <= CACHE_BREAKPOINTS_MAX
    return found


async def test_an_agent_marks_anthropic_breakpoints_and_reports_cache_reads() -> None:
    answers = Answers()
    call = {
        "type": "message",
        "role": "assistant",
        "stop_reason": "tool_use",
        "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}}
        ],
        "usage": {"input_tokens": 20, "cache_creation_input_tokens": 1500, "output_tokens": 9},
    }
    answers.json(call)
    answers.json(fixture_json("anthropic_text.json"))
    model = AnthropicModel("claude-sonnet-4-5", api_key="k", client=answers.client())
    agent = Agent(model, tools=[get_weather], instructions="You are a weather bot.")
    result = await agent.run("Weather in Oslo?")
    first, second = answers.bodies()
    for body in (first, second):
        check_anthropic(body)
    assert _marked(first) == ["tool read_result", "system", "message 0 text"]
    assert _marked(second) == [
        "tool read_result",
        "system",
        "message 0 text",
        "message 2 tool_result",
    ]
    usage = result.usage
    assert (usage.cache_write_tokens, usage.cache_read_tokens) == (1600, 2048)
    assert usage.input_tokens == 20 + 1500 + 12 + 100 + 2048


async def test_caching_turned_off_sends_no_breakpoints() -> None:
    answers = Answers()
    answers.json(fixture_json("anthropic_text.json"))
    model = AnthropicModel("claude-sonnet-4-5", api_key="k", client=answers.client())
    agent = Agent(
        model,
        tools=[get_weather],
        instructions="Be brief.",
        model_settings=ModelSettings(prompt_caching=False),
    )
    await agent.run("hi")
    body = answers.bodies()[0]
    assert "cache_control" not in json.dumps(body) and body["system"] == "Be brief."


async def test_openai_gets_the_session_as_prompt_cache_key() -> None:
    answers = Answers()
    reply = {
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}
        ],
        "usage": {
            "prompt_tokens": 2000,
            "completion_tokens": 2,
            "prompt_tokens_details": {"cached_tokens": 1920},
        },
    }
    answers.json(reply)
    answers.json(reply)
    model = OpenAIChatModel("gpt-4o", api_key="k", client=answers.client())
    result = await Agent(model).run("hi", session=Session("user-42"))
    assert result.usage.cache_read_tokens == 1920
    compat = OpenAIChatModel(
        "qwen", base_url="http://127.0.0.1:9/v1", client=answers.client(), require_api_key=False
    )
    await Agent(compat).run("hi", session=Session("user-42"))
    sent, other = answers.bodies()
    check_openai_chat(sent)
    assert sent["prompt_cache_key"] == "user-42"
    assert "prompt_cache_key" not in other, "only OpenAI's own API gets the key by default"
    body = OpenAIResponsesModel("gpt-5", api_key="k").build_body(
        ModelRequest([Message.user("hi")], cache_key="s1"), stream=False
    )
    check_openai_responses(body)
    assert body["prompt_cache_key"] == "s1"


def test_gemini_implicit_cache_in_usage() -> None:
    from toolweave.llm.gemini_parse import parse_generate_content

    response = parse_generate_content(
        {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}
            ],
            "usageMetadata": {
                "promptTokenCount": 4000,
                "cachedContentTokenCount": 3500,
                "candidatesTokenCount": 2,
            },
        }
    )
    assert (response.usage.input_tokens, response.usage.cache_read_tokens) == (4000, 3500)
    assert GeminiModel("gemini-2.5-flash", api_key="k").build_body(
        ModelRequest([Message.user("x")], cache_key="s")
    ).keys() == {"contents"}


async def test_provider_run_tools_show_in_agent_events() -> None:
    answers = Answers()
    opened = {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {}}
    query = {"type": "input_json_delta", "partial_json": '{"query": "Oslo"}'}
    answers.sse(
        anthropic_stream(
            [
                {"type": "content_block_start", "index": 0, "content_block": opened},
                {"type": "content_block_delta", "index": 0, "delta": query},
                {"type": "content_block_stop", "index": 0},
            ]
        )
    )
    model = AnthropicModel("claude-sonnet-4-5", api_key="k", client=answers.client())
    settings = ModelSettings(provider_tools=(ProviderTool("web_search"),))
    agent = Agent(model, model_settings=settings)
    session = Session()
    events = [event async for event in agent.run_stream("Oslo?", session=session)]
    shown = [e for e in events if isinstance(e, ProviderToolActivity)]
    assert [(e.part.tool, e.part.phase, e.part.id) for e in shown] == [
        ("web_search", "call", "srv_1")
    ]
    assert answers.bodies()[0]["tools"][0]["type"] == "web_search_20250305"
    kept = session.messages[-1]
    assert kept.provider_tools == [shown[0].part] and any(
        isinstance(p, TextPart) for p in kept.parts
    )
