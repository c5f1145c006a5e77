"""Tool calling for servers that have none: tools described in the prompt, calls parsed back.

llama.cpp without a chat template and small local models cannot emit native tool calls, but
they can follow instructions. The request is rewritten (tools into the system prompt, past
calls and results into plain text) and the reply is scanned for calls in the forms models
actually produce: fenced JSON blocks, Hermes/Qwen `<tool_call>` tags, a bare JSON object, and
a `TOOL: name(args)` line. The result is the same `ToolCallPart`s native mode gives.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from typing import Any

from toolweave.llm._wire import arguments_json, joined_text, new_call_id, system_text, tool_call
from toolweave.llm.messages import ImagePart, Message, Part, TextPart, ToolCallPart, ToolResultPart
from toolweave.llm.model import Model
from toolweave.llm.types import (
    Finished,
    ModelRequest,
    ModelResponse,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallReady,
)
from toolweave.tools import ToolDef

_FENCED = re.compile(r"```(?:json|tool_call|tool)?[ \t]*\n(.*?)\n?```", re.DOTALL)
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_TOOL_LINE = re.compile(r"^[ \t]*TOOL:[ \t]*([A-Za-z_][\w.-]*)\((.*)\)[ \t]*$", re.MULTILINE)
_MARKERS = ("```", "<tool_call>", "TOOL:")


def _instructions(request: ModelRequest) -> str:
    if request.tool_choice == "none":
        return "Do not call any tool now; answer directly."
    lines = [
        "You can call tools. To call a tool, reply with a fenced JSON block exactly like:",
        '```json\n{"tool": "<tool name>", "arguments": {<arguments object>}}\n```',
        "Write one block per call; several blocks call several tools at once. After your "
        "calls, stop: the results arrive in the next message. Without a needed tool, answer "
        "normally.",
    ]
    if request.tool_choice == "required":
        lines.append("You must call at least one tool in this reply.")
    elif isinstance(request.tool_choice, dict):
        lines.append(f"You must call the tool {request.tool_choice['name']!r} in this reply.")
    lines.append("\nTools:")
    for tool in request.tools:
        schema = json.dumps(tool.parameters, ensure_ascii=False, sort_keys=True)
        lines.append(f"- {tool.name}: {tool.description}\n  arguments schema: {schema}")
    return "\n".join(lines)


def _call_block(call: ToolCallPart) -> str:
    arguments = arguments_json(call)
    return f'```json\n{{"tool": {json.dumps(call.name)}, "arguments": {arguments}}}\n```'


def _result_text(result: ToolResultPart) -> str:
    label = "Error from" if result.is_error else "Result of"
    return f"{label} tool {result.name} (call {result.call_id}):\n{result.text}"


def rewrite(request: ModelRequest) -> ModelRequest:
    """The same conversation with tools in the system prompt and no native tool fields."""
    if not request.tools:
        return request
    system = system_text(request.messages)
    messages: list[Message] = [Message.system(f"{system}\n\n{_instructions(request)}".strip())]
    merged_results: Message | None = None
    for message in request.messages:
        if message.role == "system":
            continue
        if message.role == "assistant" and message.tool_calls:
            text = joined_text(message)
            blocks = [text] if text else []
            blocks.extend(_call_block(c) for c in message.tool_calls)
            messages.append(Message.assistant("\n".join(blocks)))
        elif message.role == "tool":
            parts: list[Part] = []
            for result in message.tool_results:
                parts.append(TextPart(_result_text(result)))
                if not isinstance(result.content, str):
                    parts.extend(p for p in result.content if isinstance(p, ImagePart))
            if merged_results is not None and messages[-1] is merged_results:
                merged_results.parts.extend(parts)  # adapters keep parts a blank line apart
            else:
                merged_results = Message("user", parts)
                messages.append(merged_results)
        else:
            messages.append(message)
    return replace(request, messages=messages, tools=[], tool_choice="auto")


def _as_call(value: Any, tools: dict[str, ToolDef]) -> ToolCallPart | None:
    if not isinstance(value, dict):
        return None
    name = value.get("tool") or value.get("name") or value.get("function")
    if not isinstance(name, str) or name not in tools:
        return None
    arguments = value.get("arguments", value.get("args", value.get("parameters", {})))
    return tool_call(new_call_id(), name, arguments)


def _json_calls(text: str, tools: dict[str, ToolDef]) -> list[ToolCallPart] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    items = value if isinstance(value, list) else [value]
    calls = [_as_call(item, tools) for item in items]
    if not calls or any(c is None for c in calls):
        return None
    return [c for c in calls if c is not None]


def _scalar(text: str) -> Any:
    text = text.strip()
    try:
        return json.loads(text)
    except ValueError:
        return text.strip("'\"")


def _line_arguments(raw: str, tool: ToolDef) -> dict[str, Any] | str:
    raw = raw.strip()
    if not raw:
        return {}
    if raw.startswith("{"):
        return raw
    pieces = [p for p in re.split(r",(?=(?:[^\"']*[\"'][^\"']*[\"'])*[^\"']*$)", raw) if p.strip()]
    if all(re.match(r"^\s*[A-Za-z_]\w*\s*[=:]", p) for p in pieces):
        pairs = (re.split(r"[=:]", p, maxsplit=1) for p in pieces)
        return {k.strip(): _scalar(v) for k, v in pairs}
    properties = list((tool.parameters.get("properties") or {}).keys())
    required = [n for n in tool.parameters.get("required", []) if n in properties]
    order = required + [n for n in properties if n not in required]
    return {name: _scalar(value) for name, value in zip(order, pieces, strict=False)}


def parse_tool_calls(text: str, tools: Sequence[ToolDef]) -> tuple[str, list[ToolCallPart]]:
    """Find tool calls in model text; returns the text without them, and the calls."""
    by_name = {t.name: t for t in tools}
    calls: list[ToolCallPart] = []
    spans: list[tuple[int, int]] = []
    for pattern in (_FENCED, _TAGGED):
        for match in pattern.finditer(text):
            found = _json_calls(match.group(1), by_name)
            if found:
                calls.extend(found)
                spans.append(match.span())
    for match in _TOOL_LINE.finditer(text):
        tool = by_name.get(match.group(1))
        if tool is not None:
            calls.append(tool_call(new_call_id(), tool.name, _line_arguments(match.group(2), tool)))
            spans.append(match.span())
    if not calls:
        whole = _json_calls(text.strip(), by_name)
        return ("", whole) if whole else (text, [])
    spans.sort()
    kept, position = [], 0
    for start, end in spans:
        kept.append(text[position:start])
        position = max(position, end)
    kept.append(text[position:])
    return re.sub(r"\n{3,}", "\n\n", "".join(kept)).strip(), calls


def parse_response(response: ModelResponse, request: ModelRequest) -> ModelResponse:
    if not request.tools:
        return response
    clean, calls = parse_tool_calls(response.message.text, request.tools)
    if not calls:
        return response
    parts: list[Part] = [p for p in response.message.parts if not isinstance(p, TextPart)]
    if clean:
        parts.insert(0, TextPart(clean))
    message = Message("assistant", [*parts, *calls])
    return ModelResponse(message, "tool_calls", response.usage, response.raw)


_BARE_JSON = re.compile(r"\s*[\[{]")
_LONGEST_MARKER = max(len(m) for m in _MARKERS)


def _safe_length(text: str, start: int) -> tuple[int, bool]:
    """How much of `text` can be shown, and whether a call marker was found.

    Only `text[start:]` is searched, so a long stream costs linear time.
    """
    if _BARE_JSON.match(text):
        return 0, False  # a bare JSON reply may be a call
    cut, found = len(text), False
    for marker in _MARKERS:
        position = text.find(marker, start)
        if position != -1 and position < cut:
            cut, found = position, True
    if not found:
        for marker in _MARKERS:
            for size in range(min(len(marker) - 1, len(text)), 0, -1):
                if text.endswith(marker[:size]):
                    cut = min(cut, len(text) - size)
                    break
    return len(text[:cut].rstrip()), found  # trailing blanks wait: the final text is stripped


async def stream(
    inner: AsyncIterator[StreamEvent], request: ModelRequest
) -> AsyncIterator[StreamEvent]:
    """Stream text as it comes, holding back everything from the first call marker on."""
    if not request.tools:
        async for event in inner:
            yield event
        return
    text, shown, held = "", 0, False
    async for event in inner:
        if isinstance(event, TextDelta):
            if held:
                continue  # the rest is parsed from the final response
            text += event.text
            safe, held = _safe_length(text, max(0, shown - _LONGEST_MARKER))
            if safe > shown:
                yield TextDelta(text[shown:safe])
                shown = safe
        elif isinstance(event, Finished):
            response = parse_response(event.response, request)
            final = response.message.text
            if final.startswith(text[:shown]) and len(final) > shown:
                yield TextDelta(final[shown:])
            for index, call in enumerate(response.message.tool_calls):
                yield ToolCallDelta(index, call.id, call.name, json.dumps(call.arguments))
                yield ToolCallReady(call)
            yield Finished(response)
        else:
            yield event


class PromptedToolsModel:
    """Wraps any `Model` so tools are described in the prompt and parsed from its text."""

    supports_native_output = False

    def __init__(self, model: Model) -> None:
        self.inner = model

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return parse_response(await self.inner.complete(rewrite(request)), request)

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        return stream(self.inner.stream(rewrite(request)), request)
