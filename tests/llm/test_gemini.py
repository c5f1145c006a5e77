"""GeminiModel against the loopback replay server, with google-genai types as oracle."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.llm.cases import TOOLS, collect, opening, ready_calls, streamed_text, with_results
from tests.llm.oracles import check_fixture_events, check_gemini
from tests.llm.replay_server import FIXTURES, ReplayServer, fixture_json
from toolweave.llm import GeminiModel, ModelError, ModelRequest, ThinkingPart

SIG = fixture_json("gemini_tools.json")["candidates"][0]["content"]["parts"][0]["thoughtSignature"]


def _model(replay: ReplayServer, client: httpx.AsyncClient, **options: object) -> GeminiModel:
    return GeminiModel(
        "gemini-2.5-flash", base_url=replay.url, api_key="g-key", client=client, **options
    )  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["gemini_text.sse", "gemini_tools.sse"])
def test_fixtures_are_valid_responses(name: str) -> None:
    blocks = (FIXTURES / name).read_text().split("\n\n")
    check_fixture_events("gemini", [json.loads(b[6:]) for b in blocks if b.startswith("data: ")])
    check_fixture_events("gemini", [fixture_json("gemini_tools.json")])


async def test_complete_text_and_sanitised_schema(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.json("gemini_text.json")
    response = await _model(replay, client).complete(
        ModelRequest(opening(), tools=TOOLS, temperature=0.2)
    )
    assert response.message.text == "北京今天晴，15℃。"
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.reasoning_tokens) == (120, 125, 100)
    sent = replay.requests[0]
    assert sent.path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert sent.headers["x-goog-api-key"] == "g-key"
    body = sent.body
    check_gemini(body)
    assert body["systemInstruction"] == {"parts": [{"text": "You are a weather bot."}]}
    parameters = body["tools"][0]["functionDeclarations"][0]["parameters"]
    text = json.dumps(parameters)
    for banned in ("$ref", "$defs", "additionalProperties", "default", "$schema"):
        assert banned not in text
    assert parameters["properties"]["unit"] == {"type": "STRING", "enum": ["c", "f"]}
    assert "parameters" not in body["tools"][0]["functionDeclarations"][1]
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}


async def test_calls_without_ids_get_generated_ids_and_signatures_survive(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.json("gemini_tools.json")
    replay.json("gemini_text.json")
    model = _model(replay, client)
    first = await model.complete(ModelRequest(opening(), tools=TOOLS))
    calls = first.message.tool_calls
    assert first.finish_reason == "tool_calls"  # Gemini said STOP
    assert len({c.id for c in calls}) == 2 and all(c.id for c in calls)
    assert [c.name for c in calls] == ["get_weather", "get_weather"]
    await model.complete(ModelRequest(with_results(first), tools=TOOLS))
    body = replay.requests[1].body
    check_gemini(body)
    model_turn, answer = body["contents"][1], body["contents"][2]
    assert model_turn["role"] == "model"
    assert model_turn["parts"][0]["thoughtSignature"] == SIG, "echoed byte-identical"
    assert "thoughtSignature" not in model_turn["parts"][1]
    assert "id" not in model_turn["parts"][0]["functionCall"], "generated ids stay local"
    assert answer["role"] == "user"
    responses = [p["functionResponse"] for p in answer["parts"] if "functionResponse" in p]
    assert [r["name"] for r in responses] == ["get_weather", "get_weather"]
    assert responses[0]["response"] == {"output": {"temp": 15, "sky": "晴"}}
    assert responses[0]["parts"][0]["inlineData"]["mimeType"] == "image/png"
    assert responses[1]["response"] == {"error": "city not found"}
    assert answer["parts"][-1] == {"text": "Thanks. Summarise, please."}


async def test_stream_text_keeps_trailing_signature(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.sse("gemini_text.sse")
    events, response = await collect(_model(replay, client).stream(ModelRequest(opening())))
    assert streamed_text(events) == response.message.text == "Beijing is sunny today, 15°C."
    assert replay.requests[0].path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    assert replay.requests[0].query == "alt=sse"
    assert response.message.parts[0].provider_data["thought_signature"] == SIG  # type: ignore[union-attr]
    assert response.usage.cache_read_tokens == 64


async def test_stream_round_trip_with_server_ids_and_thoughts(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.sse("gemini_tools.sse")
    replay.json("gemini_text.json")
    model = _model(replay, client, schema_mode="json_schema")
    schema = {"type": "object", "properties": {"summary": {"type": "string"}}}
    request = ModelRequest(opening(), tools=TOOLS, tool_choice={"name": "get_weather"})
    events, first = await collect(model.stream(request))
    assert [c.id for c in ready_calls(events)] == ["gc1p5d0x", "gc2q6e1y"]
    assert isinstance(first.message.parts[0], ThinkingPart)
    await model.complete(ModelRequest(with_results(first), tools=TOOLS, output_schema=schema))
    for sent in replay.requests:
        check_gemini(sent.body)
    first_body, body = replay.requests[0].body, replay.requests[1].body
    assert first_body["toolConfig"]["functionCallingConfig"] == {
        "mode": "ANY",
        "allowedFunctionNames": ["get_weather"],
    }
    declaration = first_body["tools"][0]["functionDeclarations"][0]
    assert "$schema" not in declaration["parametersJsonSchema"]
    assert "$defs" in declaration["parametersJsonSchema"]
    model_turn = body["contents"][1]
    assert model_turn["parts"][0]["thought"] is True
    ids = [p["functionCall"]["id"] for p in model_turn["parts"] if "functionCall" in p]
    answered = [p["functionResponse"]["id"] for p in body["contents"][2]["parts"][:2]]
    assert ids == answered == ["gc1p5d0x", "gc2q6e1y"]
    assert body["generationConfig"] == {
        "responseMimeType": "application/json",
        "responseJsonSchema": schema,
    }


async def test_blocked_prompt_and_stream_errors(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.json({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, **_VERSION})
    replay.sse(
        b'data: {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}\n\n'
    )
    model = _model(replay, client)
    blocked = await model.complete(ModelRequest(opening()))
    assert blocked.finish_reason == "content_filter" and blocked.message.parts == []
    with pytest.raises(ModelError, match="UNAVAILABLE") as caught:
        await collect(model.stream(ModelRequest(opening())))
    assert caught.value.status == 503 and caught.value.retryable
    user = replay.requests[0].body["contents"][0]["parts"]
    assert user[1]["inlineData"]["mimeType"] == "image/png"


_VERSION = {"modelVersion": "gemini-2.5-flash", "responseId": "x1"}


async def test_late_streamed_signature_moves_onto_the_first_call(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    check_fixture_events(
        "gemini",
        [
            json.loads(b[6:])
            for b in (FIXTURES / "gemini_tools_late_signature.sse").read_text().split("\n\n")
            if b.startswith("data: ")
        ],
    )
    replay.sse("gemini_tools_late_signature.sse")
    replay.json("gemini_text.json")
    model = _model(replay, client)
    _, first = await collect(model.stream(ModelRequest(opening(), tools=TOOLS)))
    assert [type(p).__name__ for p in first.message.parts] == ["ToolCallPart", "ToolCallPart"]
    await model.complete(ModelRequest(with_results(first), tools=TOOLS))
    body = replay.requests[1].body
    check_gemini(body)
    parts = body["contents"][1]["parts"]
    assert parts[0]["thoughtSignature"] == SIG and "thoughtSignature" not in parts[1]


def test_native_output_only_where_gemini_allows_it_next_to_tools() -> None:
    assert not GeminiModel("gemini-2.5-flash", api_key="k").supports_native_output
    assert not GeminiModel("models/gemini-1.5-pro", api_key="k").supports_native_output
    assert GeminiModel("gemini-3-pro-preview", api_key="k").supports_native_output
