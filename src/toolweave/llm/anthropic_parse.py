"""Reading Anthropic Messages answers, whole or streamed, into neutral parts.

Blocks read: `text` (with its `citations`, kept for the round trip), `thinking`,
`redacted_thinking`, `tool_use`, and the provider-run tools' blocks (`server_tool_use`,
`mcp_tool_use` and every `*_tool_result`), kept verbatim as `ProviderToolPart`s. Any other
block, delta or event is skipped with a debug log, so a block type newer than this adapter
never costs the rest of the answer. Streaming joins `input_json_delta` fragments of every
block that has an input and parses them at `content_block_stop` (an empty string means `{}`);
usage combines `message_start` with the cumulative `message_delta`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolweave.llm._http import stream_error
from toolweave.llm._wire import skipped, tool_call
from toolweave.llm.errors import ModelError
from toolweave.llm.messages import Message, Part, ProviderToolPart, TextPart, ThinkingPart
from toolweave.llm.types import (
    FinishReason,
    ModelResponse,
    ProviderToolUpdate,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallReady,
    Usage,
)

PROVIDER = "anthropic"
_FINISH: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
_CALL_BLOCKS = frozenset({"server_tool_use", "mcp_tool_use"})
_INPUT_BLOCKS = frozenset({"tool_use", *_CALL_BLOCKS})
_RESULT_SUFFIX = "_tool_result"
_NEUTRAL_NAMES = {
    "web_search": "web_search",
    "web_fetch": "web_fetch",
    "tool_search_tool_bm25": "tool_search",
    "tool_search_tool_regex": "tool_search",
}
_STREAM_KEYS = ("emit", "slot")
"""Keys the stream parser adds to a block for itself; never part of the block sent back."""


def provider_tool_part(block: Mapping[str, Any]) -> ProviderToolPart | None:
    """A provider-run tool's block as a typed part, or None when it is not one."""
    kind = str(block.get("type", ""))
    data = {k: v for k, v in block.items() if k not in _STREAM_KEYS}
    if kind in _CALL_BLOCKS:
        name = "mcp" if kind == "mcp_tool_use" else str(block.get("name", ""))
        tool = _NEUTRAL_NAMES.get(name, "code_execution" if "code_execution" in name else name)
        return ProviderToolPart(PROVIDER, tool, "call", str(block.get("id", "")), data)
    if kind.endswith(_RESULT_SUFFIX) and kind != "tool_result":
        name = kind.removesuffix(_RESULT_SUFFIX)
        tool = "code_execution" if "code_execution" in name else name
        return ProviderToolPart(PROVIDER, tool, "result", str(block.get("tool_use_id", "")), data)
    return None


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
        if not block.get("text"):
            return None
        citations = block.get("citations")
        return TextPart(block["text"], {"citations": citations} if citations else {})
    if kind == "thinking":
        return ThinkingPart(block.get("thinking", ""), block.get("signature"))
    if kind == "redacted_thinking":
        return ThinkingPart("", provider_data={"redacted": block.get("data", "")})
    if kind == "tool_use":
        if output_name is not None and block.get("name") == output_name:
            return TextPart(json.dumps(block.get("input") or {}, ensure_ascii=False))
        return tool_call(block.get("id"), block.get("name", ""), block.get("input") or {})
    part = provider_tool_part(block)
    if part is None:
        skipped(PROVIDER, "content block", kind)
    return part


def parse_message(data: Mapping[str, Any], output_name: str | None = None) -> ModelResponse:
    if data.get("type") == "error":
        raise stream_error(data)
    parts = [p for b in data.get("content") or () if (p := _block_part(b, output_name))]
    finish = _FINISH.get(data.get("stop_reason") or "end_turn", "stop")
    if finish == "tool_calls" and not any(p.kind == "tool_call" for p in parts):
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
            return self._delta(event["index"], event.get("delta") or {})
        if kind == "content_block_start":
            return self._start(event["index"], dict(event["content_block"]))
        if kind == "content_block_stop":
            return self._stop(event["index"])
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
            raise stream_error(event)
        elif kind not in ("ping", "message_stop"):
            skipped(PROVIDER, "stream event", kind)
        return []

    def _start(self, index: int, block: dict[str, Any]) -> list[StreamEvent]:
        self.blocks[index] = block
        kind = block.get("type")
        if kind in _INPUT_BLOCKS:
            self.json_parts[index] = []
        if kind == "tool_use":
            if block.get("name") == self.output_name:
                block["emit"] = False
                return []
            block["slot"] = self.calls
            self.calls += 1
            return [ToolCallDelta(block["slot"], block.get("id"), block.get("name"), "")]
        if kind == "text" and block.get("text"):
            return [TextDelta(block["text"])]
        return []

    def _delta(self, index: int, delta: Mapping[str, Any]) -> list[StreamEvent]:
        block = self.blocks.get(index)
        dtype = delta.get("type")
        if block is None:
            skipped(PROVIDER, "delta for an unopened block", dtype)
            return []
        if dtype == "text_delta":
            block["text"] = block.get("text", "") + delta["text"]
            return [TextDelta(delta["text"])] if block.get("emit", True) else []
        if dtype == "input_json_delta" and index in self.json_parts:
            self.json_parts[index].append(delta["partial_json"])
            if block.get("type") == "tool_use" and block.get("emit", True):
                return [ToolCallDelta(block["slot"], None, None, delta["partial_json"])]
            return []
        if dtype == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + delta["thinking"]
            return [ThinkingDelta(delta["thinking"])]
        if dtype == "signature_delta":
            block["signature"] = block.get("signature", "") + delta["signature"]
        elif dtype == "citations_delta":
            block["citations"] = [*(block.get("citations") or ()), delta["citation"]]
        else:
            skipped(PROVIDER, "delta", dtype)
        return []

    def _stop(self, index: int) -> list[StreamEvent]:
        block = self.blocks.get(index)
        if block is None:
            skipped(PROVIDER, "stop for an unopened block", index)
            return []
        self.message["content"].append(block)
        call = None
        if index in self.json_parts:
            raw = "".join(self.json_parts.pop(index))
            if raw or "input" not in block:  # a block may open with its whole input
                call = tool_call(block.get("id"), block.get("name", ""), raw)
                block["input"] = call.arguments
        if block.get("type") == "tool_use":
            call = call or tool_call(block.get("id"), block.get("name", ""), block["input"])
            if block.get("emit", True):
                return [ToolCallReady(call)]
            return [TextDelta(json.dumps(call.arguments, ensure_ascii=False))]
        part = provider_tool_part(block)
        return [ProviderToolUpdate(part)] if part is not None else []

    def finish_response(self) -> ModelResponse:
        # message_start carries `"stop_reason": null`; only message_delta sets it.
        if self.message.get("stop_reason") is None:
            raise ModelError(None, "stream ended before message_delta", retryable=True)
        self.message["usage"] = self.usage
        return parse_message(self.message, self.output_name)
