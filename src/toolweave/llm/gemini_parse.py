"""Reading Gemini answers, whole or streamed (`GenerateContentResponse` chunks), into neutral parts.

Parts read: text and thought text (runs closed by a `thoughtSignature`, which stays on its
part), `functionCall`, and the parts of tools Google runs itself (`executableCode`,
`codeExecutionResult`, Gemini 3's `toolCall` / `toolResponse`), kept verbatim with their
signatures as `ProviderToolPart`s; the candidate's `groundingMetadata` and `urlContextMetadata`
become citation parts. Any other part is skipped with a debug log.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from toolweave.llm._http import stream_error
from toolweave.llm._wire import new_call_id, skipped
from toolweave.llm.messages import (
    Message,
    Part,
    ProviderToolPart,
    ProviderToolPhase,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
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

PROVIDER = "gemini"
SIG = "thought_signature"
"""Where a part's `thoughtSignature` is kept in `provider_data`."""
_FILTERED = {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"}
_ERRORS = {"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"}
_TOOL_PARTS: dict[str, tuple[str | None, ProviderToolPhase]] = {
    "executableCode": ("code_execution", "call"),
    "codeExecutionResult": ("code_execution", "result"),
    "toolCall": (None, "call"),
    "toolResponse": (None, "result"),
}
"""Part keys of tools Google runs -> (neutral tool, or None to read `toolType`; phase)."""
_CITATIONS = {"groundingMetadata": "web_search", "urlContextMetadata": "web_fetch"}
_TOOL_TYPES = {
    "GOOGLE_SEARCH_WEB": "web_search",
    "GOOGLE_SEARCH": "web_search",
    "URL_CONTEXT": "web_fetch",
    "CODE_EXECUTION": "code_execution",
    "FILE_SEARCH": "file_search",
}


def _provider_part(part: Mapping[str, Any]) -> ProviderToolPart | None:
    for key, (tool, phase) in _TOOL_PARTS.items():
        if key in part:
            inner = part[key] if isinstance(part[key], dict) else {}
            kind = str(inner.get("toolType") or inner.get("tool_type") or "")
            name = tool or _TOOL_TYPES.get(kind, kind.lower() or "unknown")
            return ProviderToolPart(PROVIDER, name, phase, str(inner.get("id", "")), dict(part))
    return None


def parse_usage(data: Mapping[str, Any] | None) -> Usage:
    if not data:
        return Usage()
    thoughts = data.get("thoughtsTokenCount") or 0
    return Usage(
        input_tokens=(data.get("promptTokenCount") or 0)
        + (data.get("toolUsePromptTokenCount") or 0),
        output_tokens=(data.get("candidatesTokenCount") or 0) + thoughts,
        cache_read_tokens=data.get("cachedContentTokenCount") or 0,
        reasoning_tokens=thoughts,
    )


def _finish(reason: str | None, blocked: bool) -> FinishReason:
    if blocked or reason in _FILTERED:
        return "content_filter"
    if reason == "MAX_TOKENS":
        return "length"
    if reason in _ERRORS:
        return "error"
    return "stop"


def _call(wire: Mapping[str, Any], signature: str | None) -> ToolCallPart:
    data: dict[str, Any] = {}
    if signature is not None:
        data[SIG] = signature
    call_id = wire.get("id")
    if call_id:
        data["gemini_id"] = True
    args = wire.get("args") or {}
    return ToolCallPart(call_id or new_call_id(), wire.get("name", ""), args, data)


class _Run:
    """Consecutive text (or thought) fragments; a signature closes the run."""

    __slots__ = ("signature", "texts", "thought")

    def __init__(self, thought: bool) -> None:
        self.thought = thought
        self.texts: list[str] = []
        self.signature: str | None = None


class GeminiStreamParser:
    """Accumulates `GenerateContentResponse` chunks (a whole response is one chunk).

    Parts keep their arrival order, so every signature goes back where it came from. A
    signature streamed on a trailing empty text part after calls that carry none belongs to
    the first call (Gemini validates it there), so it is moved onto it.
    """

    def __init__(self) -> None:
        self.items: list[_Run | ToolCallPart | ProviderToolPart] = []
        self.citations: dict[str, ProviderToolPart] = {}
        self.calls = 0
        self.finish: str | None = None
        self.blocked = False
        self.usage = Usage()

    def feed(self, data: str) -> list[StreamEvent]:
        return self.feed_chunk(json.loads(data))

    def feed_chunk(self, chunk: Mapping[str, Any]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if isinstance(chunk.get("error"), dict):
            raise stream_error(chunk)
        if chunk.get("usageMetadata"):
            self.usage = parse_usage(chunk["usageMetadata"])
        if (chunk.get("promptFeedback") or {}).get("blockReason"):
            self.blocked = True
        candidates = chunk.get("candidates") or ()
        if not candidates:
            return events
        candidate = candidates[0]
        if candidate.get("finishReason"):
            self.finish = candidate["finishReason"]
        for key, tool in _CITATIONS.items():
            if candidate.get(key):
                cited = ProviderToolPart(PROVIDER, tool, "citations", "", {key: candidate[key]})
                self.citations[key] = cited  # the latest chunk's is the whole
        for part in (candidate.get("content") or {}).get("parts") or ():
            signature = part.get("thoughtSignature")
            if "functionCall" in part:
                call = _call(part["functionCall"], signature)
                arguments = json.dumps(call.arguments, ensure_ascii=False)
                events.append(ToolCallDelta(self.calls, call.id, call.name, arguments))
                events.append(ToolCallReady(call))
                self.items.append(call)
                self.calls += 1
            elif "text" in part:
                thought = bool(part.get("thought"))
                last = self.items[-1] if self.items else None
                if not (isinstance(last, _Run) and last.thought == thought and not last.signature):
                    last = _Run(thought)
                    self.items.append(last)
                text = part["text"]
                if text:
                    last.texts.append(text)
                    events.append(ThinkingDelta(text) if thought else TextDelta(text))
                last.signature = signature
            elif (provided := _provider_part(part)) is not None:
                self.items.append(provided)
                events.append(ProviderToolUpdate(provided))
            else:
                skipped(PROVIDER, "part", sorted(part))
        return events

    def _parts(self) -> list[Part]:
        items = list(self.items)
        calls = [i for i in items if isinstance(i, ToolCallPart)]
        tail = items[-1] if items else None
        if (
            calls
            and isinstance(tail, _Run)
            and tail.signature
            and not tail.texts
            and not any(SIG in c.provider_data for c in calls)
        ):
            first = items.index(calls[0])
            data = {**calls[0].provider_data, SIG: tail.signature}
            items[first] = replace(calls[0], provider_data=data)
            items.pop()
        parts: list[Part] = []
        for item in items:
            if isinstance(item, ToolCallPart | ProviderToolPart):
                parts.append(item)
            elif item.thought:
                parts.append(ThinkingPart("".join(item.texts), item.signature, {"gemini": True}))
            else:
                data = {SIG: item.signature} if item.signature else {}
                parts.append(TextPart("".join(item.texts), data))
        parts.extend(self.citations.values())
        return parts

    def finish_response(self, raw: Any = None) -> ModelResponse:
        finish = _finish(self.finish, self.blocked)
        return ModelResponse(Message("assistant", self._parts()), finish, self.usage, raw)


def parse_generate_content(data: Mapping[str, Any]) -> ModelResponse:
    parser = GeminiStreamParser()
    parser.feed_chunk(data)
    return parser.finish_response(data)
