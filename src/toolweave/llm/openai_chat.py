"""OpenAI Chat Completions (`/chat/completions`) and every server that copies it.

The same wire format is spoken by OpenAI, DeepSeek, Qwen (DashScope compatible mode), Ollama,
vLLM and llama.cpp server, each with quirks this adapter tolerates: streamed tool calls
without `index` or reusing an index for a new call, missing call ids, `reasoning_content`
(DeepSeek, vLLM reasoning parsers) that must be echoed back on the same assistant turn, and
servers without native tool calling (`tool_mode="prompted"`), and `content` sent as a list of
chunks (Mistral: `text` and `thinking` chunks), read as its text and thinking. Text parts of
one message go out as one string with a blank line between them (servers differ in whether
they take a list for every role). Provider-run tools are refused: Chat Completions has none
that a request can ask for by name. `cache_key` goes out as `prompt_cache_key` when
`send_cache_key` is on (by default only for api.openai.com: other servers may refuse it).
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Literal

import httpx

from toolweave.llm import prompted
from toolweave.llm._http import DEFAULT_TIMEOUT, HTTPModel, stream_error
from toolweave.llm._wire import (
    OPENAI_URL,
    TEXT_SEPARATOR,
    arguments_json,
    foreign_note,
    image_url,
    joined_text,
    new_call_id,
    result_images,
    skipped,
    tool_call,
)
from toolweave.llm.errors import ModelConfigError, ModelError
from toolweave.llm.messages import ImagePart, Message, Part, TextPart, ThinkingPart, ToolCallPart
from toolweave.llm.schema_dialects import to_openai_strict
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

OutputMode = Literal["json_schema", "vllm", "none"]
_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
    "insufficient_system_resource": "error",
}


def _content(message: Message) -> str | list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart) and part.text:
            parts.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            parts.append({"type": "image_url", "image_url": {"url": image_url(part)}})
    if all(p["type"] == "text" for p in parts):
        return TEXT_SEPARATOR.join(p["text"] for p in parts)
    return parts


def chat_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Neutral history -> `messages`; tool images follow the tool run as a user message."""
    out: list[dict[str, Any]] = []
    pending_images: list[dict[str, Any]] = []
    for message in messages:
        if message.role != "tool" and pending_images:
            out.append({"role": "user", "content": pending_images})
            pending_images = []
        if message.role in ("system", "user"):
            out.append({"role": message.role, "content": _content(message)})
        elif message.role == "assistant":
            calls = message.tool_calls
            # `content` may be null only next to tool calls.
            text = TEXT_SEPARATOR.join(
                t for t in (joined_text(message), foreign_note(message, "openai")) if t
            )
            content = text or (None if calls else "")
            entry: dict[str, Any] = {"role": "assistant", "content": content}
            if calls:
                entry["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": arguments_json(c)},
                    }
                    for c in calls
                ]
            for part in message.parts:
                # Reasoning goes back in the field it came in (DeepSeek: reasoning_content).
                if isinstance(part, ThinkingPart) and "field" in part.provider_data:
                    entry[str(part.provider_data["field"])] = part.text
            out.append(entry)
        else:
            for result in message.tool_results:
                out.append({"role": "tool", "tool_call_id": result.call_id, "content": result.text})
                images = result_images(result)
                if images:
                    pending_images.append(
                        {
                            "type": "text",
                            "text": f"Images returned by {result.name} ({result.call_id}):",
                        }
                    )
                    pending_images.extend(
                        {"type": "image_url", "image_url": {"url": image_url(i)}} for i in images
                    )
    if pending_images:
        out.append({"role": "user", "content": pending_images})
    return out


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


class OpenAIChatModel(HTTPModel):
    """`/chat/completions` over httpx. Keys come from `OPENAI_API_KEY` unless overridden.

    `tool_mode="prompted"` describes tools in the system prompt for servers without native
    tool calling; `output_mode` picks how `output_schema` is enforced (`json_schema`
    `response_format`, vLLM's `structured_outputs`, or `none` to leave it to the prompt).
    """

    provider = "openai"

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
        tool_mode: Literal["native", "prompted"] = "native",
        output_mode: OutputMode = "json_schema",
        max_tokens_field: str = "max_completion_tokens",
        api_key_env: Sequence[str] = ("OPENAI_API_KEY",),
        require_api_key: bool = True,
        extra_body: Mapping[str, Any] | None = None,
        send_cache_key: bool | None = None,
    ) -> None:
        if tool_mode not in ("native", "prompted"):
            raise ModelConfigError(f"tool_mode must be 'native' or 'prompted', got {tool_mode!r}")
        if output_mode not in ("json_schema", "vllm", "none"):
            raise ModelConfigError(
                f"output_mode must be 'json_schema', 'vllm' or 'none', got {output_mode!r}"
            )
        super().__init__(
            model,
            base_url=base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1",
            max_retries=max_retries,
            timeout=timeout,
            headers=headers,
            client=client,
        )
        self.api_key = self._use_key(api_key, tuple(api_key_env), required=require_api_key)
        self.tool_mode = tool_mode
        self.output_mode: OutputMode = output_mode
        self.max_tokens_field = max_tokens_field
        self.extra_body = dict(extra_body or {})
        self.send_cache_key = (
            self.base_url.startswith(OPENAI_URL) if send_cache_key is None else send_cache_key
        )

    @property
    def supports_native_output(self) -> bool:
        return self.output_mode != "none"

    def _headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def build_body(self, request: ModelRequest, *, stream: bool) -> dict[str, Any]:
        if request.provider_tools:
            names = ", ".join(t.name for t in request.provider_tools)
            raise ModelConfigError(
                f"{type(self).__name__} ({self.base_url}) cannot run provider tools ({names}): "
                "Chat Completions has none; use OpenAIResponsesModel ('openai-responses:...') "
                "or remove them from ModelSettings.provider_tools",
                setting="provider_tools",
            )
        body: dict[str, Any] = {"model": self._model, "messages": chat_messages(request.messages)}
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": to_openai_strict(t.parameters)
                        if request.strict_tools
                        else t.parameters,
                        **({"strict": True} if request.strict_tools else {}),
                    },
                }
                for t in request.tools
            ]
            choice = request.tool_choice
            body["tool_choice"] = (
                {"type": "function", "function": {"name": choice["name"]}}
                if isinstance(choice, dict)
                else choice
            )
        if request.output_schema is not None:
            if self.output_mode == "json_schema":
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {
                        "name": request.output_name,
                        "schema": to_openai_strict(request.output_schema),
                        "strict": True,
                    },
                }
            elif self.output_mode == "vllm":
                body["structured_outputs"] = {"json": request.output_schema}
        if request.max_tokens is not None:
            body[self.max_tokens_field] = request.max_tokens
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if self.send_cache_key and request.prompt_caching and request.cache_key:
            body["prompt_cache_key"] = request.cache_key
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        body.update(self.extra_body)
        return body

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if self.tool_mode == "prompted":
            return prompted.parse_response(await self._complete(prompted.rewrite(request)), request)
        return await self._complete(request)

    async def _complete(self, request: ModelRequest) -> ModelResponse:
        data = await self._post_json(
            f"{self.base_url}/chat/completions", self.build_body(request, stream=False)
        )
        return parse_chat_completion(data)

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if self.tool_mode == "prompted":
            return prompted.stream(self._stream(prompted.rewrite(request)), request)
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        parser = ChatStreamParser()
        url = f"{self.base_url}/chat/completions"
        body = self.build_body(request, stream=True)
        async for event in self._stream_events(url, body, parser.feed, parse_chat_completion):
            yield event
            if isinstance(event, Finished):
                return  # the server ignored "stream": true and sent one JSON body
        events, response = parser.finish_response()
        for event in events:
            yield event
        yield Finished(response)
