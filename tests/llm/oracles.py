"""The official SDKs' own types as referees for what we send and what we replay.

OpenAI and Anthropic publish request bodies as TypedDicts: validated through pydantic, any
unknown key is silently dropped, so a body is accepted only when validation returns it
unchanged (every key known, every value well-typed). Google's types forbid extra fields
outright and warn on type mismatches, so warnings are turned into errors.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

from pydantic import TypeAdapter


def _materialise(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _materialise(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_materialise(v) for v in value]
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return value
    if hasattr(value, "__iter__"):  # pydantic's lazy ValidatorIterator for Iterable[...]
        return [_materialise(v) for v in value]
    return value


def _same(expected: Any, actual: Any, path: str = "$") -> None:
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: not an object after validation"
        missing = sorted(set(expected) - set(actual))
        assert not missing, f"{path}: keys unknown to the SDK type: {missing}"
        for key, value in expected.items():
            _same(value, actual[key], f"{path}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), path
        for index, (a, b) in enumerate(zip(expected, actual, strict=True)):
            _same(a, b, f"{path}[{index}]")
    else:
        assert expected == actual, f"{path}: {expected!r} became {actual!r}"


_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def check_typed_dict(kind: Any, body: dict[str, Any]) -> None:
    # Keep the adapter alive: lazy iterators validate against its definitions later.
    adapter = _ADAPTERS.setdefault(kind, TypeAdapter(kind))
    validated = _materialise(adapter.validate_python(body))
    _same(body, validated)


def check_openai_chat(body: dict[str, Any]) -> None:
    from openai.types.chat import completion_create_params as p

    kind = (
        p.CompletionCreateParamsStreaming
        if body.get("stream")
        else p.CompletionCreateParamsNonStreaming
    )
    check_typed_dict(kind, body)


def check_openai_responses(body: dict[str, Any]) -> None:
    from openai.types.responses import response_create_params as p

    kind = (
        p.ResponseCreateParamsStreaming
        if body.get("stream")
        else p.ResponseCreateParamsNonStreaming
    )
    check_typed_dict(kind, body)


def check_anthropic(body: dict[str, Any]) -> None:
    from anthropic.types import message_create_params as p

    kind = (
        p.MessageCreateParamsStreaming if body.get("stream") else p.MessageCreateParamsNonStreaming
    )
    check_typed_dict(kind, body)


def check_gemini(body: dict[str, Any]) -> None:
    from google.genai import types

    allowed = {"contents", "systemInstruction", "tools", "toolConfig", "generationConfig"}
    assert set(body) <= allowed, f"unexpected top-level keys: {set(body) - allowed}"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for content in body["contents"]:
            types.Content.model_validate_json(json.dumps(content))
        if "systemInstruction" in body:
            types.Content.model_validate_json(json.dumps(body["systemInstruction"]))
        for tool in body.get("tools", []):
            types.Tool.model_validate_json(json.dumps(tool))
        if "toolConfig" in body:
            types.ToolConfig.model_validate_json(json.dumps(body["toolConfig"]))
        if "generationConfig" in body:
            types.GenerationConfig.model_validate_json(json.dumps(body["generationConfig"]))


def check_fixture_events(provider: str, events: list[Any]) -> None:
    """Recorded-format fixtures must parse as the SDK's own response types."""
    if provider == "openai_chat":
        from openai.types.chat import ChatCompletionChunk

        for event in events:
            ChatCompletionChunk.model_validate(event)
    elif provider == "responses":
        from openai.types.responses import ResponseStreamEvent

        adapter: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
        for event in events:
            adapter.validate_python(event, strict=False)
    elif provider == "anthropic":
        from anthropic.types import RawMessageStreamEvent

        adapter = TypeAdapter(RawMessageStreamEvent)
        for event in events:
            if event.get("type") not in ("ping", "error"):
                adapter.validate_python(event)
    elif provider == "gemini":
        from google.genai import types

        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for event in events:
                types.GenerateContentResponse.model_validate_json(json.dumps(event))


def check_anthropic_beta(body: dict[str, Any]) -> None:
    """Bodies that use beta features (MCP connector, web fetch, code execution)."""
    from anthropic.types.beta import message_create_params as p

    kind = (
        p.MessageCreateParamsStreaming if body.get("stream") else p.MessageCreateParamsNonStreaming
    )
    check_typed_dict(kind, body)
