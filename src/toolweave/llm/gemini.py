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

import os
from collections.abc import AsyncIterator, Mapping
from typing import Any, Literal

import httpx

from toolweave.llm._http import DEFAULT_TIMEOUT, HTTPModel
from toolweave.llm._wire import foreign_note, system_text, tool_result_value
from toolweave.llm.errors import ModelConfigError, ModelError
from toolweave.llm.gemini_parse import PROVIDER, SIG, GeminiStreamParser, parse_generate_content
from toolweave.llm.messages import (
    ImagePart,
    Message,
    ProviderToolPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from toolweave.llm.schema_dialects import strip_for_gemini_json_schema, to_gemini_schema
from toolweave.llm.settings import ProviderTool
from toolweave.llm.types import (
    Finished,
    ModelRequest,
    ModelResponse,
    StreamEvent,
)

SchemaMode = Literal["parameters", "json_schema"]

_SERVER_TOOLS: dict[str, dict[str, dict[str, Any]]] = {
    "web_search": {"googleSearch": {}},
    "code_execution": {"codeExecution": {}},
    "web_fetch": {"urlContext": {}},
}
"""Neutral provider tools -> Gemini tool entries (options merge into the inner object)."""


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
        elif isinstance(part, TextPart) and (part.text or SIG in part.provider_data):
            text: dict[str, Any] = {"text": part.text}
            if SIG in part.provider_data:
                text["thoughtSignature"] = part.provider_data[SIG]
            parts.append(text)
        elif isinstance(part, ToolCallPart):
            call: dict[str, Any] = {"name": part.name, "args": part.arguments}
            if part.provider_data.get("gemini_id"):
                call["id"] = part.id
            entry: dict[str, Any] = {"functionCall": call}
            if SIG in part.provider_data:
                entry["thoughtSignature"] = part.provider_data[SIG]
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
        elif request.json_mode:
            generation["responseMimeType"] = "application/json"
        if request.stop:
            generation["stopSequences"] = list(request.stop)
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
