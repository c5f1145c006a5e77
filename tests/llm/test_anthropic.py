"""AnthropicModel against the loopback replay server, with the anthropic SDK as oracle."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.llm.cases import TOOLS, collect, opening, ready_calls, streamed_text, with_results
from tests.llm.oracles import check_anthropic, check_fixture_events
from tests.llm.replay_server import FIXTURES, ReplayServer
from toolweave.llm import (
    AnthropicModel,
    Message,
    ModelError,
    ModelRequest,
    ThinkingDelta,
    ThinkingPart,
    ToolCallDelta,
)


def _model(replay: ReplayServer, client: httpx.AsyncClient, **options: object) -> AnthropicModel:
    return AnthropicModel(
        "claude-sonnet-4-5", base_url=replay.url, api_key="sk-ant", client=client, **options
    )  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["anthropic_text.sse", "anthropic_tools.sse"])
def test_fixtures_are_valid_stream_events(name: str) -> None:
    blocks = (FIXTURES / name).read_text().split("\n\n")
    events = [json.loads(b.split("data: ", 1)[1]) for b in blocks if "data: " in b]
    check_fixture_events("anthropic", events)


async def test_complete_text_system_on_top_and_usage(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.json("anthropic_text.json")
    response = await _model(replay, client).complete(ModelRequest(opening(), tools=TOOLS))
    assert response.message.text == "北京今天晴，15℃。"
    usage = response.usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (
        2160,
        2048,
        100,
    )
    sent = replay.requests[0]
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == "sk-ant"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.body["system"] == [
        {"type": "text", "text": "You are a weather bot.", "cache_control": {"type": "ephemeral"}}
    ]
    assert all(m["role"] != "system" for m in sent.body["messages"])
    check_anthropic(sent.body)


async def test_complete_parallel_tools(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.json("anthropic_tools.json")
    response = await _model(replay, client).complete(ModelRequest(opening(), tools=TOOLS))
    assert response.message.text == "I'll check both cities."
    assert [c.id for c in response.message.tool_calls] == [
        "toolu_01A09q90qw90lq917835lq9",
        "toolu_01B19r91rw91mr918946mr0",
    ]
    assert response.finish_reason == "tool_calls"


async def test_stream_text(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.sse("anthropic_text.sse")
    events, response = await collect(_model(replay, client).stream(ModelRequest(opening())))
    assert streamed_text(events) == response.message.text == "Beijing is sunny today, 15°C."
    assert response.usage.output_tokens == 15  # cumulative message_delta replaces message_start
    assert response.usage.input_tokens == 2160
    check_anthropic(replay.requests[0].body)


async def test_stream_thinking_and_tool_json(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.sse("anthropic_tools.sse")
    events, response = await collect(
        _model(replay, client).stream(ModelRequest(opening(), tools=TOOLS))
    )
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)).endswith("two cities.")
    thinking = response.message.parts[0]
    assert isinstance(thinking, ThinkingPart) and thinking.signature.startswith("EqQB")  # type: ignore[union-attr]
    calls = ready_calls(events)
    assert [(c.name, c.arguments) for c in calls] == [
        ("get_weather", {"city": "北京"}),
        ("get_time", {}),
    ]
    assert [d.index for d in events if isinstance(d, ToolCallDelta) and d.id] == [0, 1]
    assert response.message.tool_calls == calls and response.finish_reason == "tool_calls"


async def test_round_trip_merges_results_into_one_user_message(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.sse("anthropic_tools.sse")
    replay.json("anthropic_text.json")
    model = _model(replay, client)
    _, first = await collect(model.stream(ModelRequest(opening(), tools=TOOLS)))
    await model.complete(ModelRequest(with_results(first), tools=TOOLS))
    body = replay.requests[1].body
    check_anthropic(body)
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user"]
    assistant, answer = body["messages"][1], body["messages"][2]
    assert assistant["content"][0]["type"] == "thinking"
    assert assistant["content"][0]["signature"].startswith("EqQB")
    uses = [b["id"] for b in assistant["content"] if b["type"] == "tool_use"]
    results = [b for b in answer["content"] if b["type"] == "tool_result"]
    assert [r["tool_use_id"] for r in results] == uses
    assert answer["content"][: len(results)] == results, "tool results lead the user turn"
    assert answer["content"][-1] == {
        "type": "text",
        "text": "Thanks. Summarise, please.",
        "cache_control": {"type": "ephemeral"},
    }
    assert results[0]["content"][1]["type"] == "image"
    assert results[1]["is_error"] is True and "is_error" not in results[0]


async def test_no_empty_text_blocks_and_tool_choice(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.json("anthropic_text.json")
    history = [Message.user("hi"), Message.assistant(" \n"), Message.user(""), Message.user(" ")]
    request = ModelRequest(
        [*history, Message.user("go")], tools=TOOLS, tool_choice="required", prompt_caching=False
    )
    await _model(replay, client).complete(request)
    body = replay.requests[0].body
    check_anthropic(body)
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "go"}],
        }
    ]
    assert body["tool_choice"] == {"type": "any"}


async def test_output_schema_uses_a_forced_tool(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.json(
        {
            **json.loads((FIXTURES / "anthropic_tools.json").read_text()),
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_x",
                    "name": "final_output",
                    "input": {"answer": "sunny"},
                }
            ],
            "stop_reason": "tool_use",
        }
    )
    model = _model(replay, client)
    assert model.supports_native_output is False
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    response = await model.complete(ModelRequest(opening(), output_schema=schema))
    assert json.loads(response.message.text) == {"answer": "sunny"}
    assert response.message.tool_calls == [] and response.finish_reason == "stop"
    body = replay.requests[0].body
    check_anthropic(body)
    assert body["tool_choice"] == {"type": "tool", "name": "final_output"}


async def test_stream_error_event_is_retryable(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.sse("anthropic_overloaded.sse")
    with pytest.raises(ModelError, match="overloaded_error") as caught:
        await collect(_model(replay, client).stream(ModelRequest(opening())))
    assert caught.value.retryable


async def test_output_tool_with_other_tools_and_thinking(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.json("anthropic_tools.json")
    replay.json("anthropic_tools.json")
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    request = ModelRequest(opening(), tools=TOOLS, output_schema=schema)
    response = await _model(replay, client).complete(request)
    assert response.finish_reason == "tool_calls" and len(response.message.tool_calls) == 2
    await _model(replay, client, thinking_budget=2048).complete(request)
    plain, thinking = (r.body for r in replay.requests)
    for body in (plain, thinking):
        check_anthropic(body)
        assert [t["name"] for t in body["tools"]][-1] == "final_output"
    assert plain["tool_choice"] == {"type": "any"}
    assert thinking["tool_choice"] == {"type": "auto"}
    assert thinking["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert thinking["max_tokens"] > 2048, "the thinking budget must stay below max_tokens"
    assert plain["max_tokens"] == 8192
