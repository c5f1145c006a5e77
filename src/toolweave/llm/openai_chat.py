"""OpenAI Chat Completions (`/chat/completions`) and every server that copies it.

The same wire format is spoken by OpenAI, DeepSeek, Qwen (DashScope compatible mode), Ollama,
vLLM and llama.cpp server, each with quirks tolerated here and in `openai_chat_parse` (which
reads answers): `reasoning_content` (DeepSeek, vLLM reasoning parsers) is echoed back on the
same assistant turn, and servers without native tool calling get `tool_mode="prompted"`. Text
parts of one message go out as one string with a blank line between them (servers differ in
whether they take a list for every role). Provider-run tools are refused: Chat Completions has none
that a request can ask for by name. `cache_key` goes out as `prompt_cache_key` when
`send_cache_key` is on (by default only for api.openai.com: other servers may refuse it).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Literal

import httpx

from toolweave.llm import prompted
from toolweave.llm._http import DEFAULT_TIMEOUT, HTTPModel
from toolweave.llm._wire import (
    OPENAI_URL,
    TEXT_SEPARATOR,
    arguments_json,
    foreign_note,
    image_url,
    joined_text,
    result_images,
)
from toolweave.llm.errors import ModelConfigError
from toolweave.llm.messages import ImagePart, Message, TextPart, ThinkingPart
from toolweave.llm.openai_chat_parse import ChatStreamParser, parse_chat_completion
from toolweave.llm.schema_dialects import to_openai_strict
from toolweave.llm.types import (
    Finished,
    ModelRequest,
    ModelResponse,
    StreamEvent,
)

OutputMode = Literal["json_schema", "vllm", "none"]


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
        elif request.json_mode:
            body["response_format"] = {"type": "json_object"}
        if request.stop:
            body["stop"] = list(request.stop)
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
