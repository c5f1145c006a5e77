"""Google Gemini API (`/v1beta/models/{model}:generateContent`, `:streamGenerateContent?alt=sse`).

Wire rules honoured here: tool results are `functionResponse` parts under role `user`, with
an object `response` (`{"output": ...}` or `{"error": ...}`), one user turn answering all the
calls of a model turn; `functionCall.id` is often missing, so ids are generated locally and
never sent back as if they were Gemini's; a `thoughtSignature` goes back byte-identical on the
same part it came with; the finish reason is STOP even with calls (the message decides);
`parameters` take an OpenAPI subset (see `schema_dialects`), or full JSON Schema through
`parametersJsonSchema` with `schema_mode="json_schema"`. Parts of tools Google runs itself
(`executableCode`, `codeExecutionResult`, Gemini 3's `toolCall` / `toolResponse`) are kept
verbatim, signature included, as `ProviderToolPart`s and go back as received; grounding and URL
context metadata become citation parts (kept in the history, never sent: the API has no place
for them); any other part is skipped with a debug log.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from typing import Any, Literal

import httpx

from toolweave.llm._http import DEFAULT_TIMEOUT, HTTPModel, stream_error
from toolweave.llm._wire import foreign_note, new_call_id, skipped, system_text, tool_result_value
from toolweave.llm.errors import ModelConfigError, ModelError
from toolweave.llm.messages import (
    ImagePart,
    Message,
    Part,
    ProviderToolPart,
    ProviderToolPhase,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from toolweave.llm.schema_dialects import strip_for_gemini_json_schema, to_gemini_schema
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

SchemaMode = Literal["parameters", "json_schema"]
_SIG = "thought_signature"
_FILTERED = {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"}
_ERRORS = {"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"}
PROVIDER = "gemini"
_TOOL_PARTS: dict[str, tuple[str | None, ProviderToolPhase]] = {
    "executableCode": ("code_execution", "call"),
    "codeExecutionResult": ("code_execution", "result"),
    "toolCall": (None, "call"),
    "toolResponse": (None, "result"),
}
"""Part keys of tools Google runs -> (neutral tool, or None to read `toolType`; phase)."""
_CITATIONS = {"groundingMetadata": "web_search", "urlContextMetadata": "web_fetch"}
_SERVER_TOOLS: dict[str, dict[str, dict[str, Any]]] = {
    "web_search": {"googleSearch": {}},
    "code_execution": {"codeExecution": {}},
    "web_fetch": {"urlContext": {}},
}
"""Neutral provider tools -> Gemini tool entries (options merge into the inner object)."""
_TOOL_TYPES = {
    "GOOGLE_SEARCH_WEB": "web_search",
    "GOOGLE_SEARCH": "web_search",
    "URL_CONTEXT": "web_fetch",
    "CODE_EXECUTION": "code_execution",
    "FILE_SEARCH": "file_search",
}


def provider_tool_entries(tools: tuple[ProviderTool, ...]) -> list[dict[str, Any]]:
    """Neutral provider tools -> `tools` entries; the MCP connector is refused."""
    entries = []
    for tool in tools:
        if tool.name not in _SERVER_TOOLS:
            raise ModelConfigError(
                f"GeminiModel has no provider-run {tool.name}; remove it from "
                "ModelSettings.provider_tools (web_search, code_execution and web_fetch are "
                "offered)",
                setting="provider_tools",
            )
        ((key, inner),) = _SERVER_TOOLS[tool.name].items()
        entries.append({key: {**inner, **tool.options}})
    return entries


def _provider_part(part: Mapping[str, Any]) -> ProviderToolPart | None:
    for key, (tool, phase) in _TOOL_PARTS.items():
        if key in part:
            inner = part[key] if isinstance(part[key], dict) else {}
            kind = str(inner.get("toolType") or inner.get("tool_type") or "")
            name = tool or _TOOL_TYPES.get(kind, kind.lower() or "unknown")
            return ProviderToolPart(PROVIDER, name, phase, str(inner.get("id", "")), dict(part))
    return None


def _media(image: ImagePart) -> dict[str, Any]:
    if image.url:
        return {"fileData": {"mimeType": image.mime_type, "fileUri": image.url}}
    return {"inlineData": {"mimeType": image.mime_type, "data": image.data or ""}}


def _model_parts(message: Message) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, ThinkingPart) and part.provider_data.get("gemini"):
            thought: dict[str, Any] = {"text": part.text, "thought": True}
            if part.signature:
                thought["thoughtSignature"] = part.signature
            parts.append(thought)
        elif isinstance(part, TextPart) and (part.text or _SIG in part.provider_data):
            text: dict[str, Any] = {"text": part.text}
            if _SIG in part.provider_data:
                text["thoughtSignature"] = part.provider_data[_SIG]
            parts.append(text)
        elif isinstance(part, ToolCallPart):
            call: dict[str, Any] = {"name": part.name, "args": part.arguments}
            if part.provider_data.get("gemini_id"):
                call["id"] = part.id
            entry: dict[str, Any] = {"functionCall": call}
            if _SIG in part.provider_data:
                entry["thoughtSignature"] = part.provider_data[_SIG]
            parts.append(entry)
        elif (
            isinstance(part, ProviderToolPart)
            and part.provider == PROVIDER
            and part.phase != "citations"
        ):
            parts.append(dict(part.data))
    note = foreign_note(message, PROVIDER)
    if note:
        parts.append({"text": note})
    return parts


def gemini_contents(messages: list[Message]) -> list[dict[str, Any]]:
    """Neutral history -> `contents`; one user turn carries all results of a model turn."""
    contents: list[dict[str, Any]] = []
    wire_ids: set[str] = set()
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "assistant":
            wire_ids.update(c.id for c in message.tool_calls if c.provider_data.get("gemini_id"))
            parts = _model_parts(message)
            if parts:
                contents.append({"role": "model", "parts": parts})
            continue
        if message.role == "tool":
            parts = []
            for result in message.tool_results:
                key = "error" if result.is_error else "output"
                response: dict[str, Any] = {
                    "name": result.name,
                    "response": {key: tool_result_value(result)},
                }
                if result.call_id in wire_ids:
                    response["id"] = result.call_id
                if not isinstance(result.content, str):
                    media = [_media(p) for p in result.content if isinstance(p, ImagePart)]
                    if media:
                        response["parts"] = media
                parts.append({"functionResponse": response})
        else:
            parts = [
                {"text": p.text} if isinstance(p, TextPart) else _media(p)
                for p in message.parts
                if isinstance(p, ImagePart) or (isinstance(p, TextPart) and p.text)
            ]
        if not parts:
            continue
        if contents and contents[-1]["role"] == "user":
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": "user", "parts": parts})
    return contents


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
        data[_SIG] = signature
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
            and not any(_SIG in c.provider_data for c in calls)
        ):
            first = items.index(calls[0])
            data = {**calls[0].provider_data, _SIG: tail.signature}
            items[first] = replace(calls[0], provider_data=data)
            items.pop()
        parts: list[Part] = []
        for item in items:
            if isinstance(item, ToolCallPart | ProviderToolPart):
                parts.append(item)
            elif item.thought:
                parts.append(ThinkingPart("".join(item.texts), item.signature, {"gemini": True}))
            else:
                data = {_SIG: item.signature} if item.signature else {}
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


class GeminiModel(HTTPModel):
    """Gemini over httpx. Keys from `GEMINI_API_KEY` or `GOOGLE_API_KEY`."""

    provider = "gemini"

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
        schema_mode: SchemaMode = "parameters",
        api_version: str = "v1beta",
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        if schema_mode not in ("parameters", "json_schema"):
            raise ModelConfigError(
                f"schema_mode must be 'parameters' or 'json_schema', got {schema_mode!r}"
            )
        super().__init__(
            model.removeprefix("models/"),
            base_url=base_url
            or os.environ.get("GEMINI_BASE_URL")
            or "https://generativelanguage.googleapis.com",
            max_retries=max_retries,
            timeout=timeout,
            headers=headers,
            client=client,
        )
        self.api_key = self._use_key(api_key, ("GEMINI_API_KEY", "GOOGLE_API_KEY"))
        self.schema_mode: SchemaMode = schema_mode
        self.api_version = api_version
        self.extra_body = dict(extra_body or {})

    @property
    def supports_native_output(self) -> bool:
        """Whether `output_schema` may be combined with tools in one request.

        Gemini 1.x and 2.x answer 400 ("Function calling with a response mime type:
        'application/json' is unsupported"), so an agent with tools must fall back to a forced
        final tool there; later models combine structured output with function calling.
        """
        return not self._model.startswith(("gemini-1", "gemini-2"))

    def _headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self.api_key or ""}

    def _url(self, method: str) -> str:
        return f"{self.base_url}/{self.api_version}/models/{self._model}:{method}"

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"contents": gemini_contents(request.messages)}
        system = system_text(request.messages)
        if system:
            body["systemInstruction"] = {"parts": [{"text": system}]}
        if request.tools:
            declarations = []
            for tool in request.tools:
                declaration: dict[str, Any] = {"name": tool.name, "description": tool.description}
                if self.schema_mode == "json_schema":
                    declaration["parametersJsonSchema"] = strip_for_gemini_json_schema(
                        tool.parameters
                    )
                elif tool.parameters.get("properties"):
                    declaration["parameters"] = to_gemini_schema(tool.parameters)
                declarations.append(declaration)
            body["tools"] = [{"functionDeclarations": declarations}]
            choice = request.tool_choice
            config: dict[str, Any] = {
                "mode": {"auto": "AUTO", "none": "NONE", "required": "ANY"}.get(str(choice), "ANY")
            }
            if isinstance(choice, dict):
                config["allowedFunctionNames"] = [choice["name"]]
            body["toolConfig"] = {"functionCallingConfig": config}
        if request.provider_tools:
            body.setdefault("tools", []).extend(provider_tool_entries(request.provider_tools))
            if self.supports_native_output:  # Gemini 3 returns its tools' calls as parts
                body.setdefault("toolConfig", {})["includeServerSideToolInvocations"] = True
        generation: dict[str, Any] = {}
        if request.output_schema is not None:
            generation["responseMimeType"] = "application/json"
            if self.schema_mode == "json_schema":
                generation["responseJsonSchema"] = strip_for_gemini_json_schema(
                    request.output_schema
                )
            else:
                generation["responseSchema"] = to_gemini_schema(request.output_schema)
        if request.max_tokens is not None:
            generation["maxOutputTokens"] = request.max_tokens
        if request.temperature is not None:
            generation["temperature"] = request.temperature
        if generation:
            body["generationConfig"] = generation
        body.update(self.extra_body)
        return body

    async def complete(self, request: ModelRequest) -> ModelResponse:
        data = await self._post_json(self._url("generateContent"), self.build_body(request))
        return parse_generate_content(data)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        parser = GeminiStreamParser()
        url = self._url("streamGenerateContent") + "?alt=sse"
        body = self.build_body(request)
        async for event in self._stream_events(url, body, parser.feed, parse_generate_content):
            yield event
            if isinstance(event, Finished):
                return  # the server answered with one JSON body
        if parser.finish is None and not parser.blocked:
            # Gemini puts finishReason on the last chunk; without it the stream was cut.
            raise ModelError(None, "stream ended before a finishReason", retryable=True)
        yield Finished(parser.finish_response())
