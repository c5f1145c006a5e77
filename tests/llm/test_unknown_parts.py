"""Streams never lose an answer to a part they do not know; the three failure classes of issue 33.

Each adapter gets a stream (and a whole answer) with an unknown block, chunk, item, part or event
in the middle: the rest of the answer arrives and the skip is logged at debug. Then the classes
the recordings found: Anthropic provider-run tool blocks mid-stream, OpenAI-compatible list-shaped
`content`, and several text parts of one message glued together on OpenAI Chat and Responses.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.llm.cases import collect, streamed_text
from tests.llm.mock import WEB_SEARCH_RESULT, Answers, anthropic_stream
from toolweave.agent import Agent
from toolweave.governance import Governance, Hooks
from toolweave.llm import (
    AnthropicModel,
    GeminiModel,
    Message,
    ModelError,
    ModelRequest,
    OpenAIChatModel,
    OpenAIResponsesModel,
    ProviderToolPart,
    ProviderToolUpdate,
    TextPart,
    ThinkingDelta,
    ThinkingPart,
)


@pytest.fixture
async def answers() -> AsyncIterator[Answers]:
    served = Answers()
    yield served


def _ask(text: str = "hi") -> ModelRequest:
    return ModelRequest([Message.user(text)])


SERVER_TOOL_BLOCKS = [
    {
        "type": "content_block_start",
        "index": 0,
        "content_block": {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "web_search",
            "input": {},
        },
    },
    {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "input_json_delta", "partial_json": '{"query": "weath'},
    },
    {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "input_json_delta", "partial_json": 'er Oslo"}'},
    },
    {"type": "content_block_stop", "index": 0},
    {
        "type": "content_block_start",
        "index": 1,
        "content_block": WEB_SEARCH_RESULT,
    },
    {"type": "content_block_stop", "index": 1},
    {
        "type": "content_block_start",
        "index": 2,
        "content_block": {
            "type": "mcp_tool_use",
            "id": "mcptoolu_1",
            "name": "echo",
            "server_name": "docs",
            "input": {},
        },
    },
    {
        "type": "content_block_delta",
        "index": 2,
        "delta": {"type": "input_json_delta", "partial_json": '{"q": 1}'},
    },
    {"type": "content_block_stop", "index": 2},
]


async def test_anthropic_stream_with_provider_run_tools_keeps_the_text(answers: Answers) -> None:
    answers.sse(anthropic_stream(SERVER_TOOL_BLOCKS))
    model = AnthropicModel("claude-x", api_key="k", client=answers.client())
    events, response = await collect(model.stream(_ask()))
    assert response.message.text == "Sunny." and streamed_text(events) == "Sunny."
    calls = response.message.provider_tools
    assert [(p.tool, p.phase, p.id) for p in calls] == [
        ("web_search", "call", "srvtoolu_1"),
        ("web_search", "result", "srvtoolu_1"),
        ("mcp", "call", "mcptoolu_1"),
    ]
    assert calls[0].data == {
        "type": "server_tool_use",
        "id": "srvtoolu_1",
        "name": "web_search",
        "input": {"query": "weather Oslo"},
    }
    assert [e.part for e in events if isinstance(e, ProviderToolUpdate)] == calls
    assert response.message.tool_calls == [], "the provider ran them: nothing for the agent to run"


UNKNOWN_ANTHROPIC = [
    {"type": "content_block_start", "index": 0, "content_block": {"type": "hologram", "data": 1}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "hologram_delta", "x": 1}},
    {"type": "content_block_stop", "index": 0},
    {"type": "brand_new_event", "payload": {}},
]


async def test_anthropic_unknown_block_is_skipped_with_a_debug_log(
    answers: Answers, caplog: pytest.LogCaptureFixture
) -> None:
    answers.sse(anthropic_stream(UNKNOWN_ANTHROPIC))
    answers.json(
        {
            "type": "message",
            "role": "assistant",
            "stop_reason": "end_turn",
            "content": [{"type": "hologram"}, {"type": "text", "text": "Sunny."}],
            "usage": {},
        }
    )
    model = AnthropicModel("claude-x", api_key="k", client=answers.client())
    with caplog.at_level(logging.DEBUG, logger="toolweave.llm"):
        _, streamed = await collect(model.stream(_ask()))
        whole = await model.complete(_ask())
    assert streamed.message.text == whole.message.text == "Sunny."
    assert "hologram" in caplog.text and "brand_new_event" in caplog.text


def _chat_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


async def test_chat_list_content_streamed_and_whole(
    answers: Answers, caplog: pytest.LogCaptureFixture
) -> None:
    thinking = [{"type": "thinking", "thinking": [{"type": "text", "text": "Let me think."}]}]
    answers.sse(
        [
            _chat_chunk({"role": "assistant", "content": thinking}),
            _chat_chunk({"content": [{"type": "reference", "reference_ids": [1]}]}),
            _chat_chunk({"content": [{"type": "text", "text": "Sun"}]}),
            _chat_chunk({"content": "ny."}),
            _chat_chunk({}, "stop"),
            "[DONE]",
        ]
    )
    answers.json(
        {
            "id": "c",
            "object": "chat.completion",
            "created": 1,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {
                        "role": "assistant",
                        "content": [*thinking, {"type": "text", "text": "Sunny."}],
                    },
                }
            ],
        }
    )
    model = OpenAIChatModel(
        "magistral", api_key="k", base_url="https://api.mistral.ai/v1", client=answers.client()
    )
    with caplog.at_level(logging.DEBUG, logger="toolweave.llm"):
        events, streamed = await collect(model.stream(_ask()))
    whole = await model.complete(_ask())
    for response in (streamed, whole):
        assert response.message.text == "Sunny."
        thought = response.message.parts[0]
        assert isinstance(thought, ThinkingPart) and thought.text == "Let me think."
    assert [e.text for e in events if isinstance(e, ThinkingDelta)] == ["Let me think."]
    assert "reference" in caplog.text


TWO_PARTS = Message(
    "user", [TextPart("What does this YAML describe?"), TextPart("name: ci\non: push")]
)


async def test_chat_joins_text_parts_with_a_blank_line(answers: Answers) -> None:
    answers.json(
        {
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "CI."},
                }
            ]
        }
    )
    model = OpenAIChatModel("gpt-x", api_key="k", client=answers.client())
    system = Message("system", [TextPart("Be brief."), TextPart("Answer in English.")])
    assistant = Message("assistant", [TextPart("One."), TextPart("Two.")])
    await model.complete(ModelRequest([system, TWO_PARTS, assistant, Message.user("go")]))
    sent = answers.bodies()[0]["messages"]
    assert sent[0]["content"] == "Be brief.\n\nAnswer in English."
    assert sent[1]["content"] == "What does this YAML describe?\n\nname: ci\non: push"
    assert sent[2]["content"] == "One.\n\nTwo."


async def test_responses_sends_text_parts_as_separate_items(answers: Answers) -> None:
    answers.json(
        {
            "status": "completed",
            "output": [
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "CI."}],
                }
            ],
        }
    )
    model = OpenAIResponsesModel("gpt-x", api_key="k", client=answers.client())
    assistant = Message("assistant", [TextPart("One."), TextPart("Two.")])
    await model.complete(ModelRequest([TWO_PARTS, assistant]))
    sent = answers.bodies()[0]["input"]
    assert sent[0]["content"] == [
        {"type": "input_text", "text": "What does this YAML describe?"},
        {"type": "input_text", "text": "name: ci\non: push"},
    ]
    assert sent[1] == {"role": "assistant", "content": "One.\n\nTwo."}


async def test_responses_unknown_event_and_item_are_skipped(
    answers: Answers, caplog: pytest.LogCaptureFixture
) -> None:
    done = {
        "type": "response.completed",
        "response": {
            "status": "completed",
            "output": [
                {"type": "hologram_call", "id": "h1"},
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "Sunny."}],
                },
            ],
        },
    }
    answers.sse(
        [
            {"type": "response.created", "response": {}},
            {"type": "response.output_item.added", "item": {"type": "hologram_call", "id": "h1"}},
            {"type": "hologram.progress", "x": 1},
            {"type": "response.output_text.delta", "delta": "Sunny."},
            done,
        ]
    )
    model = OpenAIResponsesModel("gpt-x", api_key="k", client=answers.client())
    with caplog.at_level(logging.DEBUG, logger="toolweave.llm"):
        events, response = await collect(model.stream(_ask()))
    assert response.message.text == "Sunny." and streamed_text(events) == "Sunny."
    assert "hologram_call" in caplog.text and "hologram.progress" in caplog.text


async def test_gemini_unknown_part_is_skipped(
    answers: Answers, caplog: pytest.LogCaptureFixture
) -> None:
    def chunk(parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}}
        if finish:
            candidate["finishReason"] = finish
        return {"candidates": [candidate]}

    answers.sse(
        [
            chunk([{"text": "Sun"}]),
            chunk([{"hologram": {"x": 1}}]),
            chunk([{"text": "ny."}], "STOP"),
        ]
    )
    model = GeminiModel("gemini-3-pro", api_key="k", client=answers.client())
    with caplog.at_level(logging.DEBUG, logger="toolweave.llm"):
        events, response = await collect(model.stream(_ask()))
    assert streamed_text(events) == "Sunny." and "hologram" in caplog.text
    assert response.message.text == "Sunny."


def test_provider_tool_part_round_trips_through_to_dict() -> None:
    part = ProviderToolPart("anthropic", "web_search", "call", "srv", {"type": "server_tool_use"})
    message = Message("assistant", [part, TextPart("ok")])
    assert Message.from_dict(message.to_dict()) == message


async def test_mid_stream_errors_are_retryable_only_when_transient(answers: Answers) -> None:
    refused = {"message": "Tool call validation failed", "type": "invalid_request_error"}
    answers.sse([_chat_chunk({"content": "x"}), {"error": {**refused, "code": "tool_use_failed"}}])
    limited = {"message": "Slow down", "type": "rate_limit_exceeded"}
    answers.sse([_chat_chunk({"content": "x"}), {"error": limited}])
    model = OpenAIChatModel("llama", api_key="k", max_retries=0, client=answers.client())
    with pytest.raises(ModelError, match="tool_use_failed: Tool call validation") as caught:
        await collect(model.stream(_ask()))
    assert not caught.value.retryable and caught.value.code == "tool_use_failed"
    with pytest.raises(ModelError, match="Slow down") as caught:
        await collect(model.stream(_ask()))
    assert caught.value.retryable


async def test_a_quota_429_is_not_retried(answers: Answers) -> None:
    quota = {"message": "You exceeded your current quota", "type": "insufficient_quota"}
    answers.json({"error": {**quota, "code": "insufficient_quota"}}, status=429)
    model = OpenAIChatModel("gpt", api_key="k", max_retries=3, client=answers.client())
    with pytest.raises(ModelError, match="insufficient_quota: You exceeded") as caught:
        await model.complete(_ask())
    assert not caught.value.retryable and len(answers.requests) == 1


async def test_hook_context_reaches_the_model_as_its_own_paragraph(answers: Answers) -> None:
    """The agent adds a hook's context as a second text part of the user's message."""
    hooks = Hooks()

    @hooks.on("UserPromptSubmit")
    async def context(payload: dict[str, Any]) -> dict[str, Any]:
        return {"hookSpecificOutput": {"additionalContext": "Project context: Oslo office"}}

    reply = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}
    answers.json({"choices": [reply]})
    model = OpenAIChatModel("gpt-4o", api_key="k", client=answers.client())
    await Agent(model, governance=Governance(hooks=hooks)).run("What is the weather?")
    sent = answers.bodies()[0]["messages"][-1]
    assert sent == {
        "role": "user",
        "content": "What is the weather?\n\nProject context: Oslo office",
    }
