"""Neutral messages, ModelResponse normalisation, ScriptedModel and FunctionModel."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.llm.cases import collect, opening, streamed_text
from toolweave.llm import (
    FunctionModel,
    ImagePart,
    Message,
    Model,
    ModelError,
    ModelRequest,
    ModelResponse,
    ScriptedModel,
    TextDelta,
    TextPart,
    ThinkingDelta,
    ThinkingPart,
    ToolCallDelta,
    ToolCallPart,
    ToolCallReady,
    ToolResultPart,
    Usage,
)

CALL = ToolCallPart("call_1", "get_time", {"tz": "UTC"}, {"item_id": "fc_1"})


def test_message_constructors_and_properties() -> None:
    assert Message.system("be brief").parts == [TextPart("be brief")]
    photo = ImagePart(url="https://example.com/a.png")
    user = Message.user("look", [photo])
    assert user.role == "user" and user.parts == [TextPart("look"), photo]
    empty = Message.assistant(tool_calls=[CALL])
    assert empty.parts == [CALL], "no empty text part next to calls"
    mixed = Message("assistant", [TextPart("a"), CALL, TextPart("b")])
    assert mixed.text == "ab" and mixed.tool_calls == [CALL]
    result = Message.tool_result("call_1", "get_time", [TextPart("12:00"), photo], is_error=True)
    assert result.role == "tool"
    assert result.tool_results == [
        ToolResultPart("call_1", "get_time", [TextPart("12:00"), photo], True)
    ]
    assert result.tool_results[0].text == "12:00"


def test_message_dict_round_trip_is_exact() -> None:
    messages = [
        Message.user("看", [ImagePart(data="iVBOR", mime_type="image/jpeg")]),
        Message("assistant", [ThinkingPart("hmm", "sig", {"gemini": True}), TextPart("x"), CALL]),
        Message.tool_result("call_1", "get_time", [TextPart("ok"), ImagePart(url="u")], True),
        Message.tool_result("call_2", "get_time", "plain"),
    ]
    for message in messages:
        data = message.to_dict()
        assert Message.from_dict(json.loads(json.dumps(data))) == message


def test_finish_reason_follows_the_message() -> None:
    with_calls = ModelResponse(Message.assistant("x", [CALL]), "stop")
    assert with_calls.finish_reason == "tool_calls"
    assert ModelResponse(Message.assistant("x"), "length").finish_reason == "length"
    total = Usage(10, 2, cache_read_tokens=4) + Usage(5, 1, reasoning_tokens=1)
    assert total == Usage(15, 3, 4, 0, 1) and total.total_tokens == 18
    error = ModelError(429, "slow down", retryable=True)
    assert str(error) == "429: slow down" and error.retryable


async def test_scripted_steps_of_every_kind() -> None:
    async def later(request: ModelRequest) -> Message:
        return Message.assistant(f"async saw {len(request.messages)} messages")

    canned = ModelResponse(Message.assistant("canned"), "length", Usage(1, 1))
    model = ScriptedModel(
        [
            Message.assistant("hello"),
            canned,
            lambda request: Message.assistant(request.messages[-1].text.upper()),
            later,
            TimeoutError("boom"),
            ConnectionError,
        ],
        usage=Usage(7, 3),
    )
    assert isinstance(model, Model) and model.remaining == 6
    request = ModelRequest([Message.user("hi")])
    first = await model.complete(request)
    assert first.message.text == "hello" and first.usage == Usage(7, 3)
    assert await model.complete(request) is canned
    assert (await model.complete(request)).message.text == "HI"
    assert (await model.complete(request)).message.text == "async saw 1 messages"
    with pytest.raises(TimeoutError, match="boom"):
        await model.complete(request)
    with pytest.raises(ConnectionError):
        await model.complete(request)
    assert model.requests == [request] * 6 and model.remaining == 0
    with pytest.raises(RuntimeError, match="ran out of steps: call 7 but only 6"):
        await model.complete(request)


async def test_scripted_rejects_a_bad_step() -> None:
    model = ScriptedModel([lambda request: "just text"])  # type: ignore[list-item, return-value]
    with pytest.raises(TypeError, match="must be a Message, ModelResponse"):
        await model.complete(ModelRequest(opening()))


async def test_scripted_stream_splits_text_and_emits_calls() -> None:
    reply = Message(
        "assistant",
        [ThinkingPart("plan first"), TextPart("Checking the clock now."), CALL],
    )
    model = ScriptedModel([reply], usage=Usage(3, 4))
    events, response = await collect(model.stream(ModelRequest(opening())))
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(texts) == 4 and streamed_text(events) == "Checking the clock now."
    assert [e for e in events if isinstance(e, ThinkingDelta)] == [ThinkingDelta("plan first")]
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert deltas == [ToolCallDelta(0, "call_1", "get_time", '{"tz": "UTC"}')]
    assert [e.call for e in events if isinstance(e, ToolCallReady)] == [CALL]
    assert response.message is reply and response.finish_reason == "tool_calls"
    assert response.usage == Usage(3, 4)
    assert len(model.requests) == 1


async def test_function_model_answers_every_call() -> None:
    model = FunctionModel(lambda request: Message.assistant(f"#{len(request.messages)}"), "echo")
    assert model.model_name == "echo"
    one = await model.complete(ModelRequest([Message.user("a")]))
    _, two = await collect(model.stream(ModelRequest([Message.user("a"), Message.user("b")])))
    assert (one.message.text, two.message.text) == ("#1", "#2")
    assert len(model.requests) == 2


def test_neutral_types_load_without_httpx() -> None:
    code = (
        "import sys, toolweave.llm as llm\n"
        "assert 'httpx' not in sys.modules, 'neutral types pulled in httpx'\n"
        "llm.OpenAIChatModel\n"
        "assert 'httpx' in sys.modules\n"
        "assert set(llm.__all__) <= set(dir(llm))\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
