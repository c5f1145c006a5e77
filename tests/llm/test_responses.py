"""OpenAIResponsesModel against the loopback replay server, with the openai SDK as oracle."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.llm.cases import TOOLS, collect, opening, ready_calls, streamed_text, with_results
from tests.llm.oracles import check_fixture_events, check_openai_responses
from tests.llm.replay_server import FIXTURES, ReplayServer, fixture_json
from toolweave.llm import (
    Message,
    ModelError,
    ModelRequest,
    OpenAIResponsesModel,
    ThinkingDelta,
    ThinkingPart,
    ToolCallDelta,
    ToolCallPart,
)
from toolweave.llm.openai_responses import ResponsesStreamParser


def _model(
    replay: ReplayServer, client: httpx.AsyncClient, **options: object
) -> OpenAIResponsesModel:
    return OpenAIResponsesModel(
        "gpt-4.1", base_url=f"{replay.url}/v1", api_key="sk-test", client=client, **options
    )  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["responses_text.sse", "responses_tools.sse"])
def test_fixtures_are_valid_stream_events(name: str) -> None:
    blocks = (FIXTURES / name).read_text().split("\n\n")
    events = [json.loads(b.split("data: ", 1)[1]) for b in blocks if "data: " in b]
    check_fixture_events("responses", events)


async def test_complete_text_and_flat_tools(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.json("responses_text.json")
    response = await _model(replay, client).complete(
        ModelRequest(opening(), tools=TOOLS, max_tokens=64)
    )
    assert response.message.text == "Beijing is sunny today, 15°C."
    assert response.usage.input_tokens == 328 and response.usage.output_tokens == 41
    sent = replay.requests[0]
    assert sent.path == "/v1/responses"
    body = sent.body
    check_openai_responses(body)
    assert body["tools"][0]["name"] == "get_weather" and "function" not in body["tools"][0]
    assert body["store"] is False and body["max_output_tokens"] == 64


async def test_stream_text(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.sse("responses_text.sse")
    events, response = await collect(_model(replay, client).stream(ModelRequest(opening())))
    assert streamed_text(events) == response.message.text == "Beijing is sunny today, 15°C."
    check_openai_responses(replay.requests[0].body)


async def test_stream_parallel_calls(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.sse("responses_tools.sse")
    events, response = await collect(
        _model(replay, client).stream(ModelRequest(opening(), tools=TOOLS))
    )
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert deltas[0].id == "call_unLAR8MvFNptuiZK6K6HCy5k"
    second = "".join(d.arguments_delta for d in deltas if d.index == 1)
    assert json.loads(second) == {"city": "上海", "days": 2}
    assert [c.id for c in ready_calls(events)] == [c.id for c in response.message.tool_calls]
    assert response.finish_reason == "tool_calls"


async def test_round_trip_uses_call_id_not_item_id(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.json("responses_tools.json")
    replay.json("responses_text.json")
    model = _model(replay, client)
    first = await model.complete(ModelRequest(opening(), tools=TOOLS))
    assert first.message.tool_calls[0].provider_data["item_id"].startswith("fc_")
    await model.complete(
        ModelRequest(
            with_results(first),
            tools=TOOLS,
            output_schema={"type": "object", "properties": {"summary": {"type": "string"}}},
        )
    )
    body = replay.requests[1].body
    check_openai_responses(body)
    calls = [i for i in body["input"] if i.get("type") == "function_call"]
    outputs = [i for i in body["input"] if i.get("type") == "function_call_output"]
    assert [c["call_id"] for c in calls] == [o["call_id"] for o in outputs]
    assert all(o["call_id"].startswith("call_") for o in outputs)
    assert all("id" not in c for c in calls), "item ids travel only with reasoning items"
    assert outputs[0]["output"][1]["type"] == "input_image"
    assert body["text"]["format"]["type"] == "json_schema"
    assert body["text"]["format"]["schema"]["additionalProperties"] is False


async def test_reasoning_items_are_echoed_with_their_call_items(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.json("responses_text.json")
    reasoning = {
        "id": "rs_6820f383d7c08191846711c5df8233bc0ac5ba57aafcbac7",
        "type": "reasoning",
        "summary": [],
        "encrypted_content": "gAAAAABoIPOE5kH1wt7hnmaCHunW",
    }
    call = ToolCallPart("call_1", "get_time", {}, {"item_id": "fc_1"})
    thinking = ThinkingPart("", provider_data={"item": reasoning})
    history = [
        *opening(),
        Message("assistant", [thinking, call]),
        Message.tool_result("call_1", "get_time", "12:00"),
    ]
    await _model(replay, client, reasoning_effort="low").complete(
        ModelRequest(history, tools=TOOLS)
    )
    body = replay.requests[0].body
    check_openai_responses(body)
    assert body["input"][2] == reasoning
    assert body["input"][3]["id"] == "fc_1"
    assert body["include"] == ["reasoning.encrypted_content"]


async def test_failed_stream_raises(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.sse(
        b'event: error\ndata: {"type":"error","code":"server_error","message":"boom",'
        b'"param":null,"sequence_number":1}\n\n'
    )
    with pytest.raises(ModelError, match="boom"):
        await collect(_model(replay, client).stream(ModelRequest(opening())))


def test_reasoning_summary_stream_and_incomplete_status() -> None:
    parser = ResponsesStreamParser()
    summary = {
        "type": "response.reasoning_summary_text.delta",
        "item_id": "rs_1",
        "output_index": 0,
        "summary_index": 0,
        "delta": "Thinking",
        "sequence_number": 3,
    }
    assert parser.feed(json.dumps(summary)) == [ThinkingDelta("Thinking")]
    final = fixture_json("responses_text.json")
    final.update(status="incomplete", incomplete_details={"reason": "max_output_tokens"})
    parser.feed(
        json.dumps({"type": "response.incomplete", "response": final, "sequence_number": 9})
    )
    assert parser.finish_response().finish_reason == "length"
