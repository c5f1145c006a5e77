"""Chat Completions answers, whole or streamed (`chat.completion.chunk`), read as neutral parts.

Tolerated here: streamed tool calls without `index` or reusing an index for a new call, missing
call ids, `reasoning_content` / `reasoning` (DeepSeek, vLLM reasoning parsers), `content` sent
as a list of chunks (Mistral's `text` and `thinking` chunks; other chunk types are skipped with
a debug log), errors inside a 200 body or a stream, and cached-token counts in OpenAI's and
DeepSeek's shapes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolweave.llm._http import stream_error
from toolweave.llm._wire import new_call_id, skipped, tool_call
from toolweave.llm.errors import ModelError
from toolweave.llm.messages import Message, Part, TextPart, ThinkingPart, ToolCallPart
from toolweave.llm.types import (
    FinishReason,
    ModelResponse,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallReady,
    Usage,
)

_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
    "insufficient_system_resource": "error",
}


def parse_usage(data: Mapping[str, Any] | None) -> Usage:
    if not data:
        return Usage()
    prompt = data.get("prompt_tokens_details") or {}
    completion = data.get("completion_tokens_details") or {}
    cached = prompt.get("cached_tokens") or data.get("prompt_cache_hit_tokens") or 0
    return Usage(
        input_tokens=data.get("prompt_tokens") or 0,
        output_tokens=data.get("completion_tokens") or 0,
        cache_read_tokens=cached,
        reasoning_tokens=completion.get("reasoning_tokens") or 0,
    )


def content_texts(content: Any) -> tuple[str, str]:
    """(text, thinking) of a `content` that is a string or a list of chunks; chunks of other
    types (references, images) are skipped with a debug log."""
    if content is None:
        return "", ""
    if isinstance(content, str):
        return content, ""
    texts: list[str] = []
    thoughts: list[str] = []
    for chunk in content if isinstance(content, list) else ():
        kind = chunk.get("type") if isinstance(chunk, dict) else None
        if kind == "text" and isinstance(chunk.get("text"), str):
            texts.append(chunk["text"])
        elif kind == "thinking":
            thought = chunk.get("thinking")
            if isinstance(thought, list):
                thoughts.append(content_texts(thought)[0])
            elif isinstance(thought, str):
                thoughts.append(thought)
        else:
            skipped("openai", "content chunk", kind)
    return "".join(texts), "".join(thoughts)


def _reasoning(data: Mapping[str, Any]) -> tuple[str, str] | None:
    for field in ("reasoning_content", "reasoning"):
        value = data.get(field)
        if isinstance(value, str) and value:
            return field, value
    return None


def parse_chat_completion(data: Mapping[str, Any]) -> ModelResponse:
    if data.get("error"):
        raise stream_error(data)
    choices = data.get("choices") or []
    if not choices:
        raise ModelError(None, f"response has no choices: {json.dumps(data)[:300]}")
    choice = choices[0]
    wire = choice.get("message") or {}
    parts: list[Part] = []
    reasoning = _reasoning(wire)
    if reasoning:
        parts.append(ThinkingPart(reasoning[1], provider_data={"field": reasoning[0]}))
    text, thinking = content_texts(wire.get("content"))
    if thinking:
        parts.append(ThinkingPart(thinking, provider_data={"chunks": True}))
    text = text or wire.get("refusal") or ""
    if text:
        parts.append(TextPart(text))
    for call in wire.get("tool_calls") or []:
        function = call.get("function") or {}
        parts.append(tool_call(call.get("id"), function.get("name", ""), function.get("arguments")))
    finish = _FINISH.get(choice.get("finish_reason") or "stop", "stop")
    if wire.get("refusal") and not wire.get("content"):
        finish = "content_filter"
    return ModelResponse(Message("assistant", parts), finish, parse_usage(data.get("usage")), data)


class _Slot:
    __slots__ = ("chunks", "id", "name")

    def __init__(self, call_id: str | None, name: str) -> None:
        self.id = call_id
        self.name = name
        self.chunks: list[str] = []


class ChatStreamParser:
    """Turns `chat.completion.chunk` payloads into neutral stream events."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.reasoning_field = "reasoning_content"
        self.chunk_thoughts: list[str] = []
        self.slots: list[_Slot] = []
        self.by_index: dict[int, int] = {}
        self.finish: str | None = None
        self.usage = Usage()
        self.ready = False
        self.done = False
        self.calls: list[ToolCallPart] = []

    def feed(self, data: str) -> list[StreamEvent]:
        if data == "[DONE]":
            self.done = True
            return []
        chunk = json.loads(data)
        if chunk.get("error"):
            raise stream_error(chunk)
        if chunk.get("usage"):
            self.usage = parse_usage(chunk["usage"])
        events: list[StreamEvent] = []
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            content, thought = content_texts(delta.get("content"))
            if thought:
                self.chunk_thoughts.append(thought)
                events.append(ThinkingDelta(thought))
            if content:
                self.text.append(content)
                events.append(TextDelta(content))
            reasoning = _reasoning(delta)
            if reasoning:
                self.reasoning_field = reasoning[0]
                self.reasoning.append(reasoning[1])
                events.append(ThinkingDelta(reasoning[1]))
            for call in delta.get("tool_calls") or ():
                events.append(self._call_delta(call))
            if choice.get("finish_reason"):
                self.finish = choice["finish_reason"]
                events.extend(self._ready())
        return events

    def _call_delta(self, call: Mapping[str, Any]) -> ToolCallDelta:
        function = call.get("function") or {}
        call_id = call.get("id") or None
        index = call.get("index")
        position: int | None
        if index is not None:
            position = self.by_index.get(index)
        elif call_id:  # no index: the id says which call this continues, if any
            position = next((i for i, s in enumerate(self.slots) if s.id == call_id), None)
        else:  # neither: a fragment of the latest call
            position = len(self.slots) - 1 if self.slots else None
        if position is not None and call_id and self.slots[position].id not in (None, call_id):
            position = None  # the index was reused for a new call
        if position is None:
            self.slots.append(_Slot(call_id, function.get("name") or ""))
            position = len(self.slots) - 1
            if index is not None:
                self.by_index[index] = position
        slot = self.slots[position]
        if call_id and slot.id is None:
            slot.id = call_id
        if function.get("name") and not slot.name:
            slot.name = function["name"]
        fragment = function.get("arguments") or ""
        if fragment:
            slot.chunks.append(fragment)
        return ToolCallDelta(position, call_id, function.get("name"), fragment)

    def _ready(self) -> list[StreamEvent]:
        if self.ready:
            return []
        self.ready = True
        self.calls = [
            tool_call(slot.id or new_call_id(), slot.name, "".join(slot.chunks))
            for slot in self.slots
        ]
        return [ToolCallReady(call) for call in self.calls]

    def finish_response(self) -> tuple[list[StreamEvent], ModelResponse]:
        if self.finish is None and not self.done:
            # Neither a finish_reason nor [DONE]: the connection was cut mid-answer.
            raise ModelError(None, "stream ended before finish_reason or [DONE]", retryable=True)
        events = self._ready()
        parts: list[Part] = []
        if self.reasoning:
            parts.append(
                ThinkingPart("".join(self.reasoning), provider_data={"field": self.reasoning_field})
            )
        if self.chunk_thoughts:
            parts.append(ThinkingPart("".join(self.chunk_thoughts), provider_data={"chunks": True}))
        if self.text:
            parts.append(TextPart("".join(self.text)))
        parts.extend(self.calls)
        finish = _FINISH.get(self.finish or "stop", "stop")
        return events, ModelResponse(Message("assistant", parts), finish, self.usage)
