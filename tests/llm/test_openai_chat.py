"""OpenAIChatModel against the loopback replay server, with the openai SDK types as oracle."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.llm.cases import TOOLS, collect, opening, ready_calls, streamed_text, with_results
from tests.llm.oracles import check_fixture_events, check_openai_chat
from tests.llm.replay_server import FIXTURES, ReplayServer
from toolweave.llm import (
    ModelRequest,
    OpenAIChatModel,
    ThinkingPart,
    ToolCallDelta,
    model_from_string,
)


def _model(replay: ReplayServer, client: httpx.AsyncClient, **options: object) -> OpenAIChatModel:
    return OpenAIChatModel(
        "gpt-4o", base_url=f"{replay.url}/v1", api_key="sk-test", client=client, **options
    )  # type: ignore[arg-type]


def _events(name: str) -> list[dict[str, object]]:
    lines = (FIXTURES / name).read_text().split("\n\n")
    return [json.loads(x[6:]) for x in lines if x.startswith("data: {")]


@pytest.mark.parametrize(
    "name",
    [
        "openai_chat_text.sse",
        "openai_chat_tools.sse",
        "openai_chat_deepseek.sse",
    ],
)
def test_fixtures_are_valid_chunks(name: str) -> None:
    check_fixture_events("openai_chat", _events(name))


async def test_complete_text(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.json("openai_chat_text.json")
    response = await _model(replay, client).complete(ModelRequest(opening(), tools=TOOLS))
    assert response.message.text == "北京今天晴，15℃。"
    assert response.finish_reason == "stop"
    assert (response.usage.input_tokens, response.usage.cache_read_tokens) == (1117, 1024)
    sent = replay.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-test"
    assert sent.body["messages"][0] == {"role": "system", "content": "You are a weather bot."}
    assert sent.body["tool_choice"] == "auto"
    check_openai_chat(sent.body)


async def test_complete_parallel_tool_calls(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.json("openai_chat_tools.json")
    response = await _model(replay, client).complete(ModelRequest(opening(), tools=TOOLS))
    calls = response.message.tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("call_DdmO9pD3xa9XTPNJ32zg2hcA", "get_weather", {"city": "北京"}),
        ("call_ABz0N5YQyjBPN0pQxJwXeE2s", "get_weather", {"city": "上海", "days": 2}),
    ]
    assert response.finish_reason == "tool_calls"


async def test_stream_text_requests_usage(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.sse("openai_chat_text.sse")
    events, response = await collect(_model(replay, client).stream(ModelRequest(opening())))
    assert streamed_text(events) == "Beijing is sunny today, 15°C."
    assert response.message.text == "Beijing is sunny today, 15°C."
    assert response.usage.output_tokens == 46
    body = replay.requests[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    check_openai_chat(body)


async def test_stream_parallel_tool_calls(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.sse("openai_chat_tools.sse")
    events, response = await collect(
        _model(replay, client).stream(ModelRequest(opening(), tools=TOOLS))
    )
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert {d.index for d in deltas} == {0, 1}
    joined = "".join(d.arguments_delta for d in deltas if d.index == 1)
    assert json.loads(joined) == {"city": "上海", "days": 2}
    assert [c.arguments for c in ready_calls(events)] == [
        {"city": "北京"},
        {"city": "上海", "days": 2},
    ]
    assert response.message.tool_calls == ready_calls(events)
    assert response.finish_reason == "tool_calls"


async def test_stream_tolerates_missing_and_reused_index(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.sse("openai_chat_noindex.sse")
    _, response = await collect(_model(replay, client).stream(ModelRequest(opening(), tools=TOOLS)))
    calls = [(c.id, c.name, c.arguments) for c in response.message.tool_calls]
    assert calls == [("call_1", "get_weather", {"city": "Paris"}), ("call_2", "get_time", {})]


async def test_round_trip_pairs_every_id(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.json("openai_chat_tools.json")
    replay.json("openai_chat_text.json")
    model = _model(replay, client)
    first = await model.complete(ModelRequest(opening(), tools=TOOLS))
    await model.complete(ModelRequest(with_results(first), tools=TOOLS))
    body = replay.requests[1].body
    check_openai_chat(body)
    messages = body["messages"]
    assistant = next(m for m in messages if m.get("tool_calls"))
    start = messages.index(assistant)
    ids = [c["id"] for c in assistant["tool_calls"]]
    answers = [m["tool_call_id"] for m in messages[start + 1 : start + 1 + len(ids)]]
    assert answers == ids, "every call is answered by a tool message right after it"
    assert json.loads(assistant["tool_calls"][1]["function"]["arguments"]) == {
        "city": "上海",
        "days": 2,
    }
    images = messages[start + 1 + len(ids)]
    assert images["role"] == "user"
    assert images["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")


async def test_strict_tools_and_native_output(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.json("openai_chat_text.json")
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    request = ModelRequest(
        opening(), tools=TOOLS, strict_tools=True, output_schema=schema, max_tokens=50
    )
    request.tool_choice = {"name": "get_weather"}
    await _model(replay, client).complete(request)
    body = replay.requests[0].body
    check_openai_chat(body)
    function = body["tools"][0]["function"]
    assert function["strict"] is True
    assert function["parameters"]["additionalProperties"] is False
    assert sorted(function["parameters"]["required"]) == ["city", "days", "unit"]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert body["response_format"]["json_schema"]["name"] == "final_output"
    assert body["max_completion_tokens"] == 50


async def test_deepseek_reasoning_goes_back_on_its_turn(
    replay: ReplayServer, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek")
    replay.sse("openai_chat_deepseek.sse")
    replay.json("openai_chat_text.json")
    model = model_from_string(
        "deepseek:deepseek-reasoner", base_url=f"{replay.url}/v1", client=client
    )
    _, first = await collect(model.stream(ModelRequest(opening(), tools=TOOLS, max_tokens=99)))
    thinking = [p for p in first.message.parts if isinstance(p, ThinkingPart)]
    assert thinking[0].text == "The user wants the weather in Beijing; call get_weather."
    assert first.usage.cache_read_tokens == 256 and first.usage.reasoning_tokens == 31
    await model.complete(ModelRequest(with_results(first), tools=TOOLS))
    assert replay.requests[0].headers["authorization"] == "Bearer sk-deepseek"
    assert replay.requests[0].body["max_tokens"] == 99
    body = replay.requests[1].body
    assistant = next(m for m in body["messages"] if m["role"] == "assistant")
    assert assistant["reasoning_content"] == thinking[0].text
    assistant.pop("reasoning_content")  # DeepSeek's extension; the rest must be OpenAI-valid
    check_openai_chat(body)


async def test_vllm_preset_uses_structured_outputs(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.json("openai_chat_text.json")
    model = model_from_string("vllm:Qwen/Qwen3-8B", base_url=f"{replay.url}/v1", client=client)
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    await model.complete(ModelRequest(opening(), output_schema=schema))
    body = replay.requests[0].body
    assert body["structured_outputs"] == {"json": schema}
    assert "response_format" not in body
    assert "authorization" not in replay.requests[0].headers


async def test_length_finish_and_user_images(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    body = json.loads((FIXTURES / "openai_chat_text.json").read_text())
    body["choices"][0]["finish_reason"] = "length"
    replay.json(body)
    response = await _model(replay, client).complete(ModelRequest(opening()))
    assert response.finish_reason == "length"
    user = replay.requests[0].body["messages"][1]["content"]
    assert user[0] == {"type": "text", "text": "北京和上海天气？"}
    assert user[1]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")
