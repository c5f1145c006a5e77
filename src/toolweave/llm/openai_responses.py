"""OpenAI Responses API (`/responses`), stateless: the full history goes in `input` each turn.

Differences from Chat Completions that matter on the wire: tools are flat (`name` at the top,
no `function` wrapper); a tool call is a `function_call` item with two ids, the item id
(`fc_...`) and the `call_id` (`call_...`) that `function_call_output` must quote; calls are
echoed back as items; reasoning items survive a stateless round trip only as
`encrypted_content`, so they are requested when `reasoning_effort` is set and echoed back.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import httpx

from toolweave.llm._http import DEFAULT_TIMEOUT, HTTPModel
from toolweave.llm._wire import arguments_json, image_url, tool_call
from toolweave.llm.errors import ModelError
from toolweave.llm.messages import ImagePart, Message, Part, TextPart, ThinkingPart
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


def _user_content(message: Message) -> str | list[dict[str, Any]]:
    if all(isinstance(p, TextPart) for p in message.parts):
        return message.text
    content: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart) and part.text:
            content.append({"type": "input_text", "text": part.text})
        elif isinstance(part, ImagePart):
            content.append({"type": "input_image", "image_url": image_url(part), "detail": "auto"})
    return content


def input_items(messages: Sequence[Message]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for message in messages:
        if message.role in ("system", "user"):
            items.append({"role": message.role, "content": _user_content(message)})
        elif message.role == "assistant":
            reasoning = False
            for part in message.parts:
                if isinstance(part, ThinkingPart) and "item" in part.provider_data:
                    items.append(part.provider_data["item"])
                    reasoning = True
                elif isinstance(part, TextPart) and part.text:
                    items.append({"role": "assistant", "content": part.text})
            for call in message.tool_calls:
                item = {
                    "type": "function_call",
                    "call_id": call.id,
                    "name": call.name,
                    "arguments": arguments_json(call),
                }
                # An item id must travel with its reasoning item, or the API rejects it.
                if reasoning and call.provider_data.get("item_id"):
                    item["id"] = call.provider_data["item_id"]
                items.append(item)
        else:
            for result in message.tool_results:
                output: str | list[dict[str, Any]] = result.text
                if not isinstance(result.content, str) and any(
                    isinstance(p, ImagePart) for p in result.content
                ):
                    output = [
                        {"type": "input_text", "text": p.text}
                        if isinstance(p, TextPart)
                        else {"type": "input_image", "image_url": image_url(p), "detail": "auto"}
                        for p in result.content
                    ]
                items.append(
                    {"type": "function_call_output", "call_id": result.call_id, "output": output}
                )
    return items


def parse_usage(data: Mapping[str, Any] | None) -> Usage:
    if not data:
        return Usage()
    details = data.get("input_tokens_details") or {}
    return Usage(
        input_tokens=data.get("input_tokens") or 0,
        output_tokens=data.get("output_tokens") or 0,
        cache_read_tokens=details.get("cached_tokens") or 0,
        cache_write_tokens=details.get("cache_write_tokens") or 0,
        reasoning_tokens=(data.get("output_tokens_details") or {}).get("reasoning_tokens") or 0,
    )


def _finish(data: Mapping[str, Any]) -> FinishReason:
    status = data.get("status")
    if status == "failed":
        return "error"
    if status == "incomplete":
        reason = (data.get("incomplete_details") or {}).get("reason")
        return "content_filter" if reason == "content_filter" else "length"
    return "stop"


def parse_response(data: Mapping[str, Any]) -> ModelResponse:
    if data.get("status") == "failed" or data.get("error"):
        error = data.get("error") or {}
        raise ModelError(None, f"{error.get('code', 'failed')}: {error.get('message', '')}")
    parts: list[Part] = []
    refused = False
    for item in data.get("output") or ():
        kind = item.get("type")
        if kind == "message":
            for block in item.get("content") or ():
                text = block.get("text") or block.get("refusal") or ""
                refused = refused or block.get("type") == "refusal"
                if text:
                    parts.append(TextPart(text))
        elif kind == "function_call":
            parts.append(
                tool_call(
                    item.get("call_id"),
                    item.get("name", ""),
                    item.get("arguments"),
                    {"item_id": item["id"]} if item.get("id") else None,
                )
            )
        elif kind == "reasoning":
            summary = "".join(s.get("text", "") for s in item.get("summary") or ())
            keep = {"item": item} if item.get("encrypted_content") else {}
            parts.append(ThinkingPart(summary, provider_data=keep))
    finish = "content_filter" if refused else _finish(data)
    return ModelResponse(Message("assistant", parts), finish, parse_usage(data.get("usage")), data)


class ResponsesStreamParser:
    """Turns Responses API stream events into neutral events; the final event is authoritative."""

    def __init__(self) -> None:
        self.slots: dict[str, int] = {}
        self.response: ModelResponse | None = None

    def feed(self, data: str) -> list[StreamEvent]:
        event = json.loads(data)
        kind = event.get("type", "")
        if kind == "response.output_text.delta" or kind == "response.refusal.delta":
            return [TextDelta(event["delta"])]
        if kind == "response.function_call_arguments.delta":
            index = self.slots.get(event.get("item_id", ""), event.get("output_index", 0))
            return [ToolCallDelta(index, None, None, event["delta"])]
        if kind == "response.reasoning_summary_text.delta":
            return [ThinkingDelta(event["delta"])]
        if kind == "response.output_item.added":
            item = event["item"]
            if item.get("type") == "function_call":
                index = len(self.slots)
                self.slots[item.get("id", "")] = index
                return [ToolCallDelta(index, item.get("call_id"), item.get("name"), "")]
        elif kind == "response.output_item.done":
            item = event["item"]
            if item.get("type") == "function_call":
                call = tool_call(
                    item.get("call_id"),
                    item.get("name", ""),
                    item.get("arguments"),
                    {"item_id": item["id"]} if item.get("id") else None,
                )
                return [ToolCallReady(call)]
        elif kind in ("response.completed", "response.incomplete"):
            self.response = parse_response(event["response"])
        elif kind == "response.failed":
            parse_response(event["response"])
        elif kind == "error":
            message = event.get("message") or json.dumps(event)
            raise ModelError(None, f"{event.get('code') or 'error'}: {message}", retryable=True)
        return []

    def finish_response(self) -> ModelResponse:
        if self.response is None:
            raise ModelError(None, "stream ended without response.completed", retryable=True)
        return self.response


class OpenAIResponsesModel(HTTPModel):
    """`/responses` over httpx, `store=false`. Keys from `OPENAI_API_KEY`."""

    provider = "openai-responses"
    supports_native_output = True

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
        reasoning_effort: str | None = None,
        api_key_env: Sequence[str] = ("OPENAI_API_KEY",),
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(
            model,
            base_url=base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1",
            max_retries=max_retries,
            timeout=timeout,
            headers=headers,
            client=client,
        )
        self.api_key = self._use_key(api_key, tuple(api_key_env))
        self.reasoning_effort = reasoning_effort
        self.extra_body = dict(extra_body or {})

    def _headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.api_key}"}

    def build_body(self, request: ModelRequest, *, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self._model,
            "input": input_items(request.messages),
            "store": False,
        }
        if request.tools:
            strict = request.strict_tools
            body["tools"] = [
                {
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": to_openai_strict(t.parameters) if strict else t.parameters,
                    "strict": strict,
                }
                for t in request.tools
            ]
            choice = request.tool_choice
            body["tool_choice"] = (
                {"type": "function", "name": choice["name"]} if isinstance(choice, dict) else choice
            )
        if request.output_schema is not None:
            body["text"] = {
                "format": {
                    "type": "json_schema",
                    "name": request.output_name,
                    "schema": to_openai_strict(request.output_schema),
                    "strict": True,
                }
            }
        if self.reasoning_effort:
            body["reasoning"] = {"effort": self.reasoning_effort, "summary": "auto"}
            body["include"] = ["reasoning.encrypted_content"]
        if request.max_tokens is not None:
            body["max_output_tokens"] = request.max_tokens
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if stream:
            body["stream"] = True
        body.update(self.extra_body)
        return body

    async def complete(self, request: ModelRequest) -> ModelResponse:
        body = self.build_body(request, stream=False)
        return parse_response(await self._post_json(f"{self.base_url}/responses", body))

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        parser = ResponsesStreamParser()
        body = self.build_body(request, stream=True)
        url = f"{self.base_url}/responses"
        async for event in self._stream_events(url, body, parser.feed, parse_response):
            yield event
            if isinstance(event, Finished):
                return  # the server answered with one JSON body
        yield Finished(parser.finish_response())
