"""Stream edge cases every adapter must survive: odd tool-call indexing, cut and garbled streams."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.llm.cases import TOOLS, adapter, collect, opening
from tests.llm.oracles import check_anthropic
from tests.llm.replay_server import ReplayServer, fixture_bytes
from toolweave.llm import (
    AnthropicModel,
    Message,
    ModelError,
    ModelRequest,
    OpenAIChatModel,
    TextPart,
    ThinkingPart,
    ToolCallDelta,
    ToolCallPart,
)
from toolweave.llm.openai_chat_parse import ChatStreamParser


def _chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    return json.dumps(
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
    )


def _calls(parser: ChatStreamParser) -> list[tuple[str, str, dict[str, Any]]]:
    _, response = parser.finish_response()
    return [(c.id, c.name, c.arguments) for c in response.message.tool_calls]


def test_chat_index_reused_with_a_new_id_starts_a_new_call() -> None:
    parser = ChatStreamParser()
    for call in (
        {"index": 0, "id": "call_a", "function": {"name": "get_weather", "arguments": '{"ci'}},
        {"index": 0, "function": {"arguments": 'ty": "Oslo"}'}},
        {"index": 0, "id": "call_b", "function": {"name": "get_time", "arguments": ""}},
        {"index": 0, "function": {"arguments": "{}"}},
    ):
        parser.feed(_chunk({"tool_calls": [call]}))
    parser.feed(_chunk({}, "tool_calls"))
    assert _calls(parser) == [
        ("call_a", "get_weather", {"city": "Oslo"}),
        ("call_b", "get_time", {}),
    ]


def test_chat_without_index_follows_repeated_ids() -> None:
    parser = ChatStreamParser()
    events = []
    for call in (
        {"id": "call_a", "function": {"name": "get_weather", "arguments": '{"city":'}},
        {"id": "call_a", "function": {"arguments": ' "Oslo"}'}},
        {"id": "call_b", "function": {"name": "get_time", "arguments": "{"}},
        {"function": {"arguments": "}"}},
    ):
        events.extend(parser.feed(_chunk({"tool_calls": [call]})))
    parser.feed("[DONE]")
    assert [e.index for e in events if isinstance(e, ToolCallDelta)] == [0, 0, 1, 1]
    assert _calls(parser) == [
        ("call_a", "get_weather", {"city": "Oslo"}),
        ("call_b", "get_time", {}),
    ]


def _cut(name: str, keep: int) -> bytes:
    """The first `keep` events of a recorded stream, as if the connection dropped there."""
    blocks = [b for b in fixture_bytes(name).split(b"\n\n") if b.strip()]
    return b"\n\n".join(blocks[:keep]) + b"\n\n"


@pytest.mark.parametrize(
    ("kind", "keep", "reason"),
    [
        ("openai_chat", 3, "finish_reason"),
        ("responses", 4, "response.completed"),
        ("anthropic", 6, "message_delta"),
        ("gemini", 1, "finishReason"),
    ],
)
async def test_a_cut_stream_is_a_retryable_error_not_an_answer(
    replay: ReplayServer, client: httpx.AsyncClient, kind: str, keep: int, reason: str
) -> None:
    fixture = f"{kind}_text.sse"
    replay.sse(_cut(fixture, keep))
    with pytest.raises(ModelError, match=reason) as caught:
        await collect(adapter(kind, replay.url, client).stream(ModelRequest(opening())))
    assert caught.value.retryable


async def test_a_garbled_event_is_a_model_error(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.sse(_cut("openai_chat_text.sse", 2) + b'data: {"choices": [\n\n')
    model = OpenAIChatModel("m", base_url=replay.url, api_key="k", client=client)
    with pytest.raises(ModelError, match="unreadable stream event") as caught:
        await collect(model.stream(ModelRequest(opening())))
    assert '{"choices": [' in caught.value.message


async def test_anthropic_drops_other_providers_reasoning(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.json("anthropic_text.json")
    call = ToolCallPart("call_1", "get_time", {}, {"thought_signature": "gem-sig"})
    foreign = Message(
        "assistant",
        [
            ThinkingPart("gemini thought", "gem-sig", {"gemini": True}),
            ThinkingPart("deepseek thought", provider_data={"field": "reasoning_content"}),
            ThinkingPart("claude thought", "claude-sig"),
            TextPart("Let me check."),
            call,
        ],
    )
    history = [*opening(), foreign, Message.tool_result("call_1", "get_time", "12:00")]
    model = AnthropicModel("claude", base_url=replay.url, api_key="k", client=client)
    await model.complete(ModelRequest(history, tools=TOOLS))
    body = replay.requests[0].body
    check_anthropic(body)
    blocks = body["messages"][1]["content"]
    assert [b["type"] for b in blocks] == ["thinking", "text", "tool_use"]
    assert blocks[0] == {
        "type": "thinking",
        "thinking": "claude thought",
        "signature": "claude-sig",
    }
