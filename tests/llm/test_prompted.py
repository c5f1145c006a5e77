"""tool_mode="prompted": tools in the prompt, calls parsed from text, over a real loopback."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.llm.cases import CLOCK, TOOLS, WEATHER, collect, opening, streamed_text, with_results
from tests.llm.oracles import check_openai_chat
from tests.llm.replay_server import ReplayServer
from toolweave.llm import (
    Message,
    ModelRequest,
    OpenAIChatModel,
    PromptedToolsModel,
    ScriptedModel,
    ToolCallReady,
    parse_tool_calls,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'Checking.\n```json\n{"tool": "get_weather", "arguments": {"city": "北京"}}\n```',
            [("get_weather", {"city": "北京"})],
        ),
        (
            '<tool_call>\n{"name": "get_weather", "arguments": {"city": "上海"}}\n</tool_call>',
            [("get_weather", {"city": "上海"})],
        ),
        ("TOOL: get_weather(北京)", [("get_weather", {"city": "北京"})]),
        ('TOOL: get_weather(city="上海", days=2)', [("get_weather", {"city": "上海", "days": 2})]),
        (
            'TOOL: get_weather({"city": "Paris"})\nTOOL: get_time()',
            [("get_weather", {"city": "Paris"}), ("get_time", {})],
        ),
        ('{"tool": "get_time", "arguments": {}}', [("get_time", {})]),
        (
            '```json\n[{"tool": "get_time", "arguments": {}}, '
            '{"tool": "get_weather", "args": {"city": "Oslo"}}]\n```',
            [("get_time", {}), ("get_weather", {"city": "Oslo"})],
        ),
        ('```json\n{"tool": "rm_rf", "arguments": {}}\n```', []),
        ('Here is data: ```json\n{"name": "Bob"}\n```', []),
    ],
)
def test_parse_tool_call_forms(text: str, expected: list[tuple[str, dict[str, object]]]) -> None:
    clean, calls = parse_tool_calls(text, TOOLS)
    assert [(c.name, c.arguments) for c in calls] == expected
    assert len({c.id for c in calls}) == len(calls)
    if calls:
        assert "get_" not in clean
    else:
        assert clean == text


def _chat_reply(text: str) -> dict[str, object]:
    return {
        "id": "chatcmpl-local",
        "object": "chat.completion",
        "created": 1741570283,
        "model": "qwen2.5-0.5b-instruct-q4_k_m.gguf",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 200, "completion_tokens": 20, "total_tokens": 220},
    }


async def test_prompted_round_trip_over_loopback(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.json(_chat_reply("Let me look.\nTOOL: get_weather(北京)\nTOOL: get_time()"))
    replay.json(_chat_reply("北京晴。"))
    model = OpenAIChatModel(
        "local", base_url=replay.url, tool_mode="prompted", require_api_key=False, client=client
    )
    first = await model.complete(ModelRequest(opening(), tools=TOOLS, tool_choice="required"))
    assert first.finish_reason == "tool_calls"
    assert first.message.text == "Let me look."
    assert [(c.name, c.arguments) for c in first.message.tool_calls] == [
        ("get_weather", {"city": "北京"}),
        ("get_time", {}),
    ]
    body = replay.requests[0].body
    check_openai_chat(body)
    assert "tools" not in body
    system = body["messages"][0]["content"]
    assert system.startswith("You are a weather bot.") and "get_weather" in system
    assert "must call at least one tool" in system
    final = await model.complete(ModelRequest(with_results(first), tools=TOOLS))
    assert final.message.text == "北京晴。" and final.finish_reason == "stop"
    second = replay.requests[1].body
    check_openai_chat(second)
    roles = [m["role"] for m in second["messages"]]
    assert roles == ["system", "user", "assistant", "user", "user"]
    assert '"tool": "get_weather"' in second["messages"][2]["content"]
    results = second["messages"][3]["content"]
    texts = [p["text"] for p in results if p["type"] == "text"]
    ids = [c.id for c in first.message.tool_calls]
    assert f"Result of tool get_weather (call {ids[0]})" in texts[0]
    assert any(f"Error from tool get_time (call {ids[1]})" in t for t in texts)
    assert any(p["type"] == "image_url" for p in results)


def _sse_text(pieces: list[str]) -> bytes:
    chunks = [
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}],
        }
        for p in pieces
    ]
    chunks.append(
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        }
    )
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks).encode() + b"data: [DONE]\n\n"


async def test_prompted_stream_hides_call_text(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    pieces = [
        "Sure",
        ", checking",
        " now.\n``",
        '`json\n{"tool": "get_',
        'weather", "arguments":',
        ' {"city": "Oslo"}}\n```',
    ]
    replay.sse(_sse_text(pieces))
    model = OpenAIChatModel(
        "local", base_url=replay.url, tool_mode="prompted", require_api_key=False, client=client
    )
    events, response = await collect(model.stream(ModelRequest(opening(), tools=[WEATHER, CLOCK])))
    assert streamed_text(events) == "Sure, checking now."
    ready = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert [(c.name, c.arguments) for c in ready] == [("get_weather", {"city": "Oslo"})]
    assert response.message.tool_calls == ready


async def test_wrapper_works_for_any_model() -> None:
    inner = ScriptedModel([Message.assistant('<tool_call>{"name": "get_time"}</tool_call>')])
    model = PromptedToolsModel(inner)
    response = await model.complete(ModelRequest(opening(), tools=TOOLS))
    assert [c.name for c in response.message.tool_calls] == ["get_time"]
    assert inner.requests[0].tools == []
    assert "get_time" in inner.requests[0].messages[0].text
    assert model.model_name == "scripted"
