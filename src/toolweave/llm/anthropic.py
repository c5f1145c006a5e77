"""Anthropic Messages API (`/v1/messages`).

The wire rules honoured here: the system prompt is a top-level field; every `tool_result` of
one turn goes into the single user message that follows the assistant's `tool_use` blocks
(results first, then any user text); errors carry `is_error`; empty or whitespace-only
text blocks are rejected by the API, so none are sent; thinking blocks are echoed with their
signatures (only Anthropic's own: other providers' reasoning would be refused).
Streaming joins `input_json_delta` fragments and parses them at `content_block_stop` (an
empty string means `{}`); usage combines `message_start` with the cumulative `message_delta`.
There is no native structured output: `output_schema` is emulated with a forced tool whose
input becomes the reply text, and `supports_native_output` is False so an agent can choose.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from toolweave.llm._http import DEFAULT_TIMEOUT, HTTPModel
from toolweave.llm._wire import system_text, tool_call
from toolweave.llm.errors import ModelError
from toolweave.llm.messages import (
    ImagePart,
    Message,
    Part,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
)
from toolweave.llm.types import (
    Finished,
    FinishReason,
    ModelRequest,
    ModelResponse,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallReady,
    Usage,
)

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192
"""Anthropic requires `max_tokens`; used when the request leaves it unset (on top of the
thinking budget when thinking is on, since the budget must stay below `max_tokens`)."""
_FINISH: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}


def _image(image: ImagePart) -> dict[str, Any]:
    if image.url:
        return {"type": "image", "source": {"type": "url", "url": image.url}}
    source = {"type": "base64", "media_type": image.mime_type, "data": image.data or ""}
    return {"type": "image", "source": source}


def _result_block(result: ToolResultPart) -> dict[str, Any]:
    content: str | list[dict[str, Any]]
    if isinstance(result.content, str):
        content = result.content
    else:
        content = [
            {"type": "text", "text": p.text} if isinstance(p, TextPart) else _image(p)
            for p in result.content
            if not (isinstance(p, TextPart) and not p.text.strip())
        ]
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": result.call_id}
    if content:
        block["content"] = content
    if result.is_error:
        block["is_error"] = True
    return block


def _assistant_blocks(message: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, ThinkingPart):
            # Other providers' reasoning (Gemini signatures, DeepSeek text) carries
            # provider_data and would be rejected here: only Anthropic's own goes back.
            if "redacted" in part.provider_data:
                blocks.append({"type": "redacted_thinking", "data": part.provider_data["redacted"]})
            elif part.signature and not part.provider_data:
                blocks.append(
                    {"type": "thinking", "thinking": part.text, "signature": part.signature}
                )
        elif isinstance(part, TextPart) and part.text.strip():
            blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ToolCallPart):
            blocks.append(
                {"type": "tool_use", "id": part.id, "name": part.name, "input": part.arguments}
            )
    return blocks


def anthropic_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Neutral history -> `messages`, merging each turn's tool results into one user message."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "assistant":
            blocks = _assistant_blocks(message)
            if blocks:
                out.append({"role": "assistant", "content": blocks})
            continue
        if message.role == "tool":
            blocks = [_result_block(r) for r in message.tool_results]
        else:
            blocks = [
                {"type": "text", "text": p.text} if isinstance(p, TextPart) else _image(p)
                for p in message.parts
                if isinstance(p, ImagePart) or (isinstance(p, TextPart) and p.text.strip())
            ]
        if not blocks:
            continue
        previous = out[-1] if out else None
        if previous is not None and previous["role"] == "user":
            merged = previous["content"] + blocks
            # tool_result blocks must lead the user turn that answers tool_use blocks.
            merged.sort(key=lambda b: b["type"] != "tool_result")
            previous["content"] = merged
        else:
            out.append({"role": "user", "content": blocks})
    return out


def parse_usage(data: Mapping[str, Any] | None) -> Usage:
    if not data:
        return Usage()
    read = data.get("cache_read_input_tokens") or 0
    write = data.get("cache_creation_input_tokens") or 0
    return Usage(
        input_tokens=(data.get("input_tokens") or 0) + read + write,
        output_tokens=data.get("output_tokens") or 0,
        cache_read_tokens=read,
        cache_write_tokens=write,
    )


def _block_part(block: Mapping[str, Any], output_name: str | None) -> Part | None:
    kind = block.get("type")
    if kind == "text":
        return TextPart(block["text"]) if block.get("text") else None
    if kind == "thinking":
        return ThinkingPart(block.get("thinking", ""), block.get("signature"))
    if kind == "redacted_thinking":
        return ThinkingPart("", provider_data={"redacted": block.get("data", "")})
    if kind == "tool_use":
        if output_name is not None and block.get("name") == output_name:
            return TextPart(json.dumps(block.get("input") or {}, ensure_ascii=False))
        return tool_call(block.get("id"), block.get("name", ""), block.get("input") or {})
    return None


def parse_message(data: Mapping[str, Any], output_name: str | None = None) -> ModelResponse:
    if data.get("type") == "error":
        error = data.get("error") or {}
        raise ModelError(None, f"{error.get('type')}: {error.get('message')}")
    parts = [p for b in data.get("content") or () if (p := _block_part(b, output_name))]
    finish = _FINISH.get(data.get("stop_reason") or "end_turn", "stop")
    if finish == "tool_calls" and not any(isinstance(p, ToolCallPart) for p in parts):
        finish = "stop"  # only the structured-output tool was called
    return ModelResponse(Message("assistant", parts), finish, parse_usage(data.get("usage")), data)


class AnthropicStreamParser:
    """Builds the message from `message_start` ... `message_stop` events."""

    def __init__(self, output_name: str | None = None) -> None:
        self.output_name = output_name
        self.message: dict[str, Any] = {"content": []}
        self.blocks: dict[int, dict[str, Any]] = {}
        self.json_parts: dict[int, list[str]] = {}
        self.usage: dict[str, Any] = {}
        self.calls = 0

    def feed(self, data: str) -> list[StreamEvent]:
        event = json.loads(data)
        kind = event.get("type")
        if kind == "content_block_delta":
            index, delta = event["index"], event["delta"]
            block = self.blocks[index]
            dtype = delta.get("type")
            if dtype == "text_delta":
                block["text"] += delta["text"]
                return [TextDelta(delta["text"])] if block.get("emit", True) else []
            if dtype == "input_json_delta":
                self.json_parts[index].append(delta["partial_json"])
                if block.get("emit", True):
                    return [ToolCallDelta(block["slot"], None, None, delta["partial_json"])]
                return []
            if dtype == "thinking_delta":
                block["thinking"] += delta["thinking"]
                return [ThinkingDelta(delta["thinking"])]
            if dtype == "signature_delta":
                block["signature"] = block.get("signature", "") + delta["signature"]
            return []
        if kind == "content_block_start":
            block = dict(event["content_block"])
            index = event["index"]
            self.blocks[index] = block
            if block.get("type") == "tool_use":
                self.json_parts[index] = []
                if block.get("name") == self.output_name:
                    block["emit"] = False
                    return []
                block["slot"] = self.calls
                self.calls += 1
                return [ToolCallDelta(block["slot"], block.get("id"), block.get("name"), "")]
            if block.get("type") == "text" and block.get("text"):
                return [TextDelta(block["text"])]
            return []
        if kind == "content_block_stop":
            index = event["index"]
            block = self.blocks[index]
            self.message["content"].append(block)
            if block.get("type") == "tool_use":
                raw = "".join(self.json_parts.pop(index))
                call = tool_call(block.get("id"), block.get("name", ""), raw)
                block["input"] = call.arguments
                if block.get("emit", True):
                    return [ToolCallReady(call)]
                return [TextDelta(json.dumps(call.arguments, ensure_ascii=False))]
            return []
        if kind == "message_start":
            start = event["message"]
            self.message.update({k: v for k, v in start.items() if k != "content"})
            self.usage.update(start.get("usage") or {})
        elif kind == "message_delta":
            self.message.update(event.get("delta") or {})
            # message_delta usage is cumulative: it replaces, never adds.
            self.usage.update(
                {k: v for k, v in (event.get("usage") or {}).items() if v is not None}
            )
        elif kind == "error":
            error = event.get("error") or {}
            retryable = error.get("type") in ("overloaded_error", "api_error", "rate_limit_error")
            raise ModelError(None, f"{error.get('type')}: {error.get('message')}", retryable)
        return []

    def finish_response(self) -> ModelResponse:
        # message_start carries `"stop_reason": null`; only message_delta sets it.
        if self.message.get("stop_reason") is None:
            raise ModelError(None, "stream ended before message_delta", retryable=True)
        self.message["usage"] = self.usage
        return parse_message(self.message, self.output_name)


class AnthropicModel(HTTPModel):
    """`/v1/messages` over httpx. Keys from `ANTHROPIC_API_KEY`."""

    provider = "anthropic"
    supports_native_output = False

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_retries: int = 2,
        timeout: float = DEFAULT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
        client: httpx.AsyncClient | None = None,
        thinking_budget: int | None = None,
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(
            model,
            base_url=base_url
            or os.environ.get("ANTHROPIC_BASE_URL")
            or "https://api.anthropic.com",
            max_retries=max_retries,
            timeout=timeout,
            headers=headers,
            client=client,
        )
        self.api_key = self._use_key(api_key, ("ANTHROPIC_API_KEY",))
        self.thinking_budget = thinking_budget
        self.extra_body = dict(extra_body or {})

    def _headers(self) -> dict[str, str]:
        return {"x-api-key": self.api_key or "", "anthropic-version": API_VERSION}

    def build_body(self, request: ModelRequest, *, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self._model,
            "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS + (self.thinking_budget or 0),
            "messages": anthropic_messages(request.messages),
        }
        system = system_text(request.messages)
        if system:
            body["system"] = system
        tools = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in request.tools
        ]
        choice = request.tool_choice
        if request.output_schema is not None:
            tools.append(
                {
                    "name": request.output_name,
                    "description": "Give the final answer by calling this tool.",
                    "input_schema": request.output_schema,
                }
            )
            if self.thinking_budget:
                choice = "auto"  # the API refuses forced tool use while thinking
            elif not request.tools or choice == "none":
                choice = {"name": request.output_name}
            elif not isinstance(choice, dict):
                choice = "required"  # a real tool or the answer, never bare text
        if tools:
            body["tools"] = tools
            if isinstance(choice, dict):
                body["tool_choice"] = {"type": "tool", "name": choice["name"]}
            else:
                body["tool_choice"] = {"type": {"required": "any"}.get(choice, choice)}
        if self.thinking_budget:
            body["thinking"] = {"type": "enabled", "budget_tokens": self.thinking_budget}
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if stream:
            body["stream"] = True
        body.update(self.extra_body)
        return body

    async def complete(self, request: ModelRequest) -> ModelResponse:
        body = self.build_body(request, stream=False)
        data = await self._post_json(f"{self.base_url}/v1/messages", body)
        return parse_message(data, request.output_name if request.output_schema else None)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        parser = AnthropicStreamParser(request.output_name if request.output_schema else None)
        body = self.build_body(request, stream=True)
        whole = functools.partial(parse_message, output_name=parser.output_name)
        url = f"{self.base_url}/v1/messages"
        async for event in self._stream_events(url, body, parser.feed, whole):
            yield event
            if isinstance(event, Finished):
                return  # the server answered with one JSON body
        yield Finished(parser.finish_response())
