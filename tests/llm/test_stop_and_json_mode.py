"""`ModelSettings(stop=..., json_mode=...)` (the seed's OpenAI JSON mode and stop sequences) in
each provider's request shape, checked against the official SDKs' request types; refused with
the fix where a provider has no such thing."""

from __future__ import annotations

import pytest

from tests.llm.oracles import (
    check_anthropic,
    check_gemini,
    check_openai_chat,
    check_openai_responses,
)
from toolweave.agent import Agent
from toolweave.errors import ConfigError
from toolweave.llm import (
    AnthropicModel,
    FunctionModel,
    GeminiModel,
    Message,
    ModelConfigError,
    ModelRequest,
    ModelSettings,
    OpenAIChatModel,
    OpenAIResponsesModel,
)

REQUEST = ModelRequest(
    [Message.user("列出三种水果，用 JSON")], stop=("Observation:",), json_mode=True
)


def test_openai_chat_sends_stop_and_json_object() -> None:
    body = OpenAIChatModel("gpt-4o", api_key="k").build_body(REQUEST, stream=False)
    assert body["stop"] == ["Observation:"]
    assert body["response_format"] == {"type": "json_object"}
    check_openai_chat(body)
    schema = {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}
    structured = ModelRequest(REQUEST.messages, output_schema=schema, json_mode=True)
    typed = OpenAIChatModel("gpt-4o", api_key="k").build_body(structured, stream=False)
    assert typed["response_format"]["type"] == "json_schema"  # an output type wins


def test_responses_json_object_and_no_stop() -> None:
    model = OpenAIResponsesModel("gpt-4.1", api_key="k")
    body = model.build_body(ModelRequest(REQUEST.messages, json_mode=True), stream=False)
    assert body["text"] == {"format": {"type": "json_object"}}
    check_openai_responses(body)
    with pytest.raises(ModelConfigError, match="Responses API has no stop sequences"):
        model.build_body(REQUEST, stream=False)


def test_anthropic_stop_sequences_and_no_json_mode() -> None:
    model = AnthropicModel("claude-sonnet-4-5", api_key="k")
    body = model.build_body(ModelRequest(REQUEST.messages, stop=("Observation:",)), stream=False)
    assert body["stop_sequences"] == ["Observation:"]
    check_anthropic(body)
    with pytest.raises(ModelConfigError, match="Anthropic has no JSON mode"):
        model.build_body(REQUEST, stream=False)


def test_gemini_stop_sequences_and_json_mime_type() -> None:
    body = GeminiModel("gemini-2.5-flash", api_key="k").build_body(REQUEST)
    assert body["generationConfig"]["stopSequences"] == ["Observation:"]
    assert body["generationConfig"]["responseMimeType"] == "application/json"
    check_gemini(body)


def test_the_agent_sends_its_settings_and_bad_ones_are_refused() -> None:
    seen: list[ModelRequest] = []

    def answer(request: ModelRequest) -> Message:
        seen.append(request)
        return Message.assistant('{"fruits": ["苹果"]}')

    settings = ModelSettings(stop=("Observation:",), json_mode=True)
    Agent(FunctionModel(answer), model_settings=settings).run_sync("水果")
    assert seen[0].stop == ("Observation:",) and seen[0].json_mode is True
    with pytest.raises(ConfigError, match="at most 4 non-empty strings"):
        ModelSettings(stop=("a", "b", "c", "d", "e"))
    with pytest.raises(ConfigError, match="stop=\\('Observation:',\\)"):
        ModelSettings(stop=["x"])  # type: ignore[arg-type]
