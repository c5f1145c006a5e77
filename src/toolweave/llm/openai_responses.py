"""OpenAI Responses API (`/responses`), stateless: the full history goes in `input` each turn.

Differences from Chat Completions that matter on the wire: tools are flat (`name` at the top,
no `function` wrapper); a tool call is a `function_call` item with two ids, the item id
(`fc_...`) and the `call_id` (`call_...`) that `function_call_output` must quote; calls are
echoed back as items; reasoning items survive a stateless round trip only as
`encrypted_content`, so they are requested when `reasoning_effort` is set and echoed back.
Several text parts of one input message go as separate `input_text` items. Provider-run tool
items (`web_search_call`, `code_interpreter_call`, `mcp_call`, `file_search_call`, ...) are
kept verbatim as `ProviderToolPart`s and go back as received; other output items and stream
events are skipped with a debug log.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import httpx

from toolweave.llm._http import DEFAULT_TIMEOUT, HTTPModel, stream_error
from toolweave.llm._wire import (
    OPENAI_URL,
    arguments_json,
    foreign_note,
    image_url,
    joined_text,
    skipped,
    tool_call,
)
from toolweave.llm.errors import ModelConfigError, ModelError
from toolweave.llm.messages import (
    ImagePart,
    Message,
    Part,
    ProviderToolPart,
    TextPart,
    ThinkingPart,
)
from toolweave.llm.schema_dialects import to_openai_strict
from toolweave.llm.settings import ProviderTool
from toolweave.llm.types import (
    Finished,
    FinishReason,
    ModelRequest,
    ModelResponse,
    ProviderToolUpdate,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallReady,
    Usage,
)

PROVIDER = "openai-responses"
_TOOL_ITEMS = {
    "web_search_call": "web_search",
    "code_interpreter_call": "code_execution",
    "mcp_call": "mcp",
    "mcp_list_tools": "mcp",
    "file_search_call": "file_search",
    "image_generation_call": "image_generation",
    "tool_search_call": "tool_search",
    "tool_search_output": "tool_search",
}
"""Output items of tools OpenAI runs itself -> the neutral tool name."""
_REQUESTS: dict[str, dict[str, Any]] = {
    "web_search": {"type": "web_search"},
    "tool_search": {"type": "tool_search"},
    "code_execution": {"type": "code_interpreter", "container": {"type": "auto"}},
}


def provider_tool_entries(tools: tuple[ProviderTool, ...]) -> list[dict[str, Any]]:
    """Neutral provider tools -> Responses tool entries; web fetch is refused (none exists)."""
    entries: list[dict[str, Any]] = []
    for tool in tools:
        if tool.name == "mcp":
            entries.append(
                {
                    "type": "mcp",
                    "server_label": tool.label,
                    "server_url": tool.url,
                    "require_approval": "never",
                    **tool.options,
                }
            )
        elif tool.name in _REQUESTS:
            entries.append({**_REQUESTS[tool.name], **tool.options})
        else:
            raise ModelConfigError(
                f"OpenAIResponsesModel has no provider-run {tool.name}; remove it from "
                "ModelSettings.provider_tools (web_search, code_execution, mcp and tool_search "
                "are offered)",
                setting="provider_tools",
            )
    return entries


def _user_content(message: Message) -> str | list[dict[str, Any]]:
    texts = [p for p in message.parts if isinstance(p, TextPart) and p.text]
    if len(texts) == len(message.parts) and len(texts) <= 1:
        return joined_text(message)
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
                elif isinstance(part, ProviderToolPart) and part.provider == PROVIDER:
                    items.append(dict(part.data))
            text = joined_text(message)
            note = foreign_note(message, PROVIDER)
            if text or note:
                full = "\n\n".join(t for t in (text, note) if t)
                items.append({"role": "assistant", "content": full})
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


def provider_tool_part(item: Mapping[str, Any]) -> ProviderToolPart:
    kind = str(item.get("type"))
    return ProviderToolPart(
        PROVIDER, _TOOL_ITEMS[kind], "call", str(item.get("id", "")), dict(item)
    )


def parse_response(data: Mapping[str, Any]) -> ModelResponse:
    if data.get("status") == "failed" or data.get("error"):
        raise stream_error({"error": data.get("error") or {"code": "failed", "message": ""}})
    parts: list[Part] = []
    refused = False
    for item in data.get("output") or ():
        kind = item.get("type")
        if kind == "message":
            for block in item.get("content") or ():
                text = block.get("text") or block.get("refusal") or ""
                refused = refused or block.get("type") == "refusal"
                if text:
                    notes = block.get("annotations")
                    parts.append(TextPart(text, {"annotations": notes} if notes else {}))
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
        elif kind in _TOOL_ITEMS:
            parts.append(provider_tool_part(item))
        else:
            skipped(PROVIDER, "output item", kind)
    finish = "content_filter" if refused else _finish(data)
    return ModelResponse(Message("assistant", parts), finish, parse_usage(data.get("usage")), data)


class ResponsesStreamParser:
    """Turns Responses API stream events into neutral events; the final event is authoritative."""

    def __init__(self) -> None:
        self.slots: dict[str, int] = {}
        self.response: ModelResponse | None = None

    def feed(self, data: str) -> list[StreamEvent]:
        if data == "[DONE]":  # OpenRouter ends Responses streams the Chat way
            return []
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
            if item.get("type") in _TOOL_ITEMS:
                return [ProviderToolUpdate(provider_tool_part(item))]
        elif kind in ("response.completed", "response.incomplete"):
            self.response = parse_response(event["response"])
        elif kind == "response.failed":
            parse_response(event["response"])
        elif kind == "error":
            raise stream_error(event.get("error") or event)
        elif not kind.startswith("response."):
            skipped(PROVIDER, "stream event", kind)
        return []

    def finish_response(self) -> ModelResponse:
        if self.response is None:
            raise ModelError(None, "stream ended without response.completed", retryable=True)
        return self.response


class OpenAIResponsesModel(HTTPModel):
    """`/responses` over httpx, `store=false`. Keys from `OPENAI_API_KEY`."""

    provider = "openai-responses"
    supports_native_output = True
    supports_tool_search = True

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
        send_cache_key: bool | None = None,
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
        self.send_cache_key = (
            self.base_url.startswith(OPENAI_URL) if send_cache_key is None else send_cache_key
        )
        """Send `prompt_cache_key` (by default only to api.openai.com)."""

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
                | ({"defer_loading": True} if t.name in request.deferred_tools else {})
                for t in request.tools
            ]
            choice = request.tool_choice
            body["tool_choice"] = (
                {"type": "function", "name": choice["name"]} if isinstance(choice, dict) else choice
            )
        if request.provider_tools:
            body.setdefault("tools", []).extend(provider_tool_entries(request.provider_tools))
        if request.output_schema is not None:
            body["text"] = {
                "format": {
                    "type": "json_schema",
                    "name": request.output_name,
                    "schema": to_openai_strict(request.output_schema),
                    "strict": True,
                }
            }
        elif request.json_mode:
            body["text"] = {"format": {"type": "json_object"}}
        if request.stop:
            raise ModelConfigError(
                "the OpenAI Responses API has no stop sequences: drop ModelSettings(stop=...) or "
                "use OpenAIChatModel ('openai:...')",
                setting="stop",
            )
        if self.reasoning_effort:
            body["reasoning"] = {"effort": self.reasoning_effort, "summary": "auto"}
            body["include"] = ["reasoning.encrypted_content"]
        if request.max_tokens is not None:
            body["max_output_tokens"] = request.max_tokens
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if self.send_cache_key and request.prompt_caching and request.cache_key:
            body["prompt_cache_key"] = request.cache_key
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
