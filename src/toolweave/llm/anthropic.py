"""Anthropic Messages API (`/v1/messages`): requests; answers are read in `anthropic_parse`.

The wire rules honoured here: the system prompt is a top-level field; every `tool_result` of
one turn goes into the single user message that follows the assistant's `tool_use` blocks
(results first, then any user text); errors carry `is_error`; empty or whitespace-only
text blocks are rejected by the API, so none are sent; thinking blocks are echoed with their
signatures (only Anthropic's own: other providers' reasoning would be refused); provider-run
tool blocks and cited text go back verbatim, other providers' are left out with a note.
Prompt caching (on unless the request turns it off) marks up to four breakpoints, the
placements Anthropic documents: the end of the tool definitions, of the system prompt, of
the latest message and of the user turn before it.
There is no native structured output: `output_schema` is emulated with a forced tool whose
input becomes the reply text, and `supports_native_output` is False so an agent can choose.
"""

from __future__ import annotations

import functools
import os
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from toolweave.llm._http import DEFAULT_TIMEOUT, HTTPModel
from toolweave.llm._wire import foreign_note, system_text
from toolweave.llm.anthropic_parse import PROVIDER, AnthropicStreamParser, parse_message
from toolweave.llm.errors import ModelConfigError
from toolweave.llm.messages import (
    ImagePart,
    Message,
    ProviderToolPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
)
from toolweave.llm.settings import ProviderTool
from toolweave.llm.types import Finished, ModelRequest, ModelResponse, StreamEvent

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192
"""Anthropic requires `max_tokens`; used when the request leaves it unset (on top of the
thinking budget when thinking is on, since the budget must stay below `max_tokens`)."""
CACHE_BREAKPOINTS_MAX = 4
"""Anthropic accepts at most four `cache_control` breakpoints per request."""
_EPHEMERAL = {"type": "ephemeral"}
_CACHEABLE = frozenset({"text", "image", "tool_result", "tool_use", "document"})
_PROVIDER_TOOLS: dict[str, tuple[dict[str, Any], str | None]] = {
    "web_search": ({"type": "web_search_20250305", "name": "web_search"}, None),
    "web_fetch": ({"type": "web_fetch_20250910", "name": "web_fetch"}, "web-fetch-2025-09-10"),
    "code_execution": (
        {"type": "code_execution_20250825", "name": "code_execution"},
        "code-execution-2025-08-25",
    ),
    "tool_search": (
        {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
        "advanced-tool-use-2025-11-20",
    ),
}
"""Neutral provider tool -> (the tool entry, the `anthropic-beta` flag it needs)."""
MCP_BETA = "mcp-client-2025-04-04"


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
            block: dict[str, Any] = {"type": "text", "text": part.text}
            if isinstance(part.provider_data.get("citations"), list):
                block["citations"] = part.provider_data["citations"]
            blocks.append(block)
        elif isinstance(part, ToolCallPart):
            blocks.append(
                {"type": "tool_use", "id": part.id, "name": part.name, "input": part.arguments}
            )
        elif isinstance(part, ProviderToolPart) and part.provider == PROVIDER:
            blocks.append(dict(part.data))
    note = foreign_note(message, PROVIDER)
    if note:
        blocks.append({"type": "text", "text": note})
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


def mark_cache_breakpoints(body: dict[str, Any]) -> None:
    """Cache the tool definitions, the system prompt, the latest message and the user turn
    before it (Anthropic reads the longest cached prefix, so each turn reuses the last)."""
    marks: list[dict[str, Any]] = []
    if body.get("tools"):
        marks.append(body["tools"][-1])
    system = body.get("system")
    if isinstance(system, str):
        body["system"] = [{"type": "text", "text": system}]
    if body.get("system"):
        marks.append(body["system"][-1])
    users = [m for m in body["messages"] if m["role"] == "user"]
    for message in [body["messages"][-1], *users[-2:-1]] if body["messages"] else ():
        blocks = [b for b in message["content"] if b.get("type") in _CACHEABLE]
        if blocks:
            marks.append(blocks[-1])
    for block in marks[:CACHE_BREAKPOINTS_MAX]:
        block["cache_control"] = dict(_EPHEMERAL)


def provider_tools(
    tools: tuple[ProviderTool, ...],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """Neutral provider tools -> (tool entries, `mcp_servers`, beta flags)."""
    entries: list[dict[str, Any]] = []
    servers: list[dict[str, Any]] = []
    betas: list[str] = []
    for tool in tools:
        if tool.name == "mcp":
            servers.append({"type": "url", "url": tool.url, "name": tool.label, **tool.options})
            betas.append(MCP_BETA)
            continue
        entry, beta = _PROVIDER_TOOLS[tool.name]
        entries.append({**entry, **tool.options})
        if beta:
            betas.append(beta)
    return entries, servers, sorted(set(betas))


class AnthropicModel(HTTPModel):
    """`/v1/messages` over httpx. Keys from `ANTHROPIC_API_KEY`."""

    provider = "anthropic"
    supports_native_output = False
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
        deferred = request.deferred_tools
        tools = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            | ({"defer_loading": True} if t.name in deferred else {})
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
        entries, servers, _ = provider_tools(request.provider_tools)
        tools.extend(entries)
        if tools:
            body["tools"] = tools
            if isinstance(choice, dict):
                body["tool_choice"] = {"type": "tool", "name": choice["name"]}
            else:
                body["tool_choice"] = {"type": {"required": "any"}.get(choice, choice)}
        if servers:
            body["mcp_servers"] = servers
        if self.thinking_budget:
            body["thinking"] = {"type": "enabled", "budget_tokens": self.thinking_budget}
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.stop:
            body["stop_sequences"] = list(request.stop)
        if request.json_mode and request.output_schema is None:
            raise ModelConfigError(
                "Anthropic has no JSON mode: drop ModelSettings(json_mode=True) and give the "
                "agent an output_type (a pydantic model) for structured answers",
                setting="json_mode",
            )
        if stream:
            body["stream"] = True
        if request.prompt_caching:
            mark_cache_breakpoints(body)
        body.update(self.extra_body)
        return body

    @staticmethod
    def request_headers(request: ModelRequest) -> dict[str, str]:
        """The `anthropic-beta` flags the requested provider tools need."""
        betas = provider_tools(request.provider_tools)[2]
        return {"anthropic-beta": ",".join(betas)} if betas else {}

    async def complete(self, request: ModelRequest) -> ModelResponse:
        body = self.build_body(request, stream=False)
        url = f"{self.base_url}/v1/messages"
        data = await self._post_json(url, body, self.request_headers(request))
        return parse_message(data, request.output_name if request.output_schema else None)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        parser = AnthropicStreamParser(request.output_name if request.output_schema else None)
        body = self.build_body(request, stream=True)
        whole = functools.partial(parse_message, output_name=parser.output_name)
        url = f"{self.base_url}/v1/messages"
        headers = self.request_headers(request)
        async for event in self._stream_events(url, body, parser.feed, whole, headers):
            yield event
            if isinstance(event, Finished):
                return  # the server answered with one JSON body
        yield Finished(parser.finish_response())
