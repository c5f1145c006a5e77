"""Provider-run tools asked for in neutral terms: each provider's request shape (checked by the
official SDK's types), refusals where a provider has no such tool, and the round trip of their
parts: back unchanged to the provider that made them, left out with a note for any other."""

from __future__ import annotations

from typing import Any

import pytest

from tests.llm.mock import WEB_SEARCH_RESULT
from tests.llm.oracles import check_anthropic_beta, check_gemini, check_openai_responses
from toolweave.errors import ConfigError
from toolweave.llm import (
    AnthropicModel,
    GeminiModel,
    Message,
    ModelConfigError,
    ModelRequest,
    ModelSettings,
    OpenAIChatModel,
    OpenAIResponsesModel,
    ProviderTool,
    ProviderToolPart,
    TextPart,
)

SEARCH = ProviderTool("web_search", options={"max_uses": 3})
CODE = ProviderTool("code_execution")
FETCH = ProviderTool("web_fetch")
MCP = ProviderTool("mcp", url="https://mcp.example.com/sse", label="docs")


def _request(*tools: ProviderTool, history: list[Message] | None = None) -> ModelRequest:
    return ModelRequest(history or [Message.user("What is new in Oslo?")], provider_tools=tools)


def test_anthropic_request_shape_and_beta_flags() -> None:
    model = AnthropicModel("claude-sonnet-4-5", api_key="k")
    request = _request(SEARCH, CODE, FETCH, MCP)
    body = model.build_body(request, stream=False)
    check_anthropic_beta(body)
    tools = [{k: v for k, v in t.items() if k != "cache_control"} for t in body["tools"]]
    assert tools == [
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
        {"type": "code_execution_20250825", "name": "code_execution"},
        {"type": "web_fetch_20250910", "name": "web_fetch"},
    ]
    assert body["mcp_servers"] == [
        {"type": "url", "url": "https://mcp.example.com/sse", "name": "docs"}
    ]
    flags = model.request_headers(request)["anthropic-beta"].split(",")
    assert flags == ["code-execution-2025-08-25", "mcp-client-2025-04-04", "web-fetch-2025-09-10"]
    assert model.request_headers(_request(SEARCH)) == {}, "web search is not a beta"


def test_responses_request_shape_and_web_fetch_refused() -> None:
    model = OpenAIResponsesModel("gpt-5", api_key="k")
    body = model.build_body(_request(ProviderTool("web_search"), CODE, MCP), stream=True)
    check_openai_responses(body)
    assert body["tools"] == [
        {"type": "web_search"},
        {"type": "code_interpreter", "container": {"type": "auto"}},
        {
            "type": "mcp",
            "server_label": "docs",
            "server_url": "https://mcp.example.com/sse",
            "require_approval": "never",
        },
    ]
    with pytest.raises(ModelConfigError, match="no provider-run web_fetch") as caught:
        model.build_body(_request(FETCH), stream=False)
    assert caught.value.setting == "provider_tools"


def test_gemini_request_shape_and_mcp_refused() -> None:
    model = GeminiModel("gemini-3-pro-preview", api_key="k")
    body = model.build_body(_request(ProviderTool("web_search"), CODE, FETCH))
    check_gemini(body)
    assert body["tools"] == [{"googleSearch": {}}, {"codeExecution": {}}, {"urlContext": {}}]
    assert body["toolConfig"] == {"includeServerSideToolInvocations": True}
    older = GeminiModel("gemini-2.5-flash", api_key="k").build_body(_request(CODE))
    assert "toolConfig" not in older
    with pytest.raises(ModelConfigError, match="GeminiModel has no provider-run mcp"):
        model.build_body(_request(MCP))


def test_chat_completions_refuses_provider_tools() -> None:
    model = OpenAIChatModel("gpt-4o", api_key="k")
    with pytest.raises(ModelConfigError, match="cannot run provider tools \\(web_search\\)"):
        model.build_body(_request(ProviderTool("web_search")), stream=False)


def test_settings_name_the_bad_field() -> None:
    with pytest.raises(ConfigError, match="must be one of web_search"):
        ProviderTool("shell")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="needs url="):
        ProviderTool("mcp", label="docs")
    with pytest.raises(ConfigError, match="https://"):
        ProviderTool("mcp", url="http://inside", label="x")
    with pytest.raises(ConfigError, match="tuple of ProviderTool"):
        ModelSettings(provider_tools=[SEARCH])  # type: ignore[arg-type]


ANTHROPIC_CALL = {
    "type": "server_tool_use",
    "id": "srvtoolu_1",
    "name": "web_search",
    "input": {"query": "Oslo"},
}
ANTHROPIC_RESULT = WEB_SEARCH_RESULT
RESPONSES_ITEM = {
    "type": "web_search_call",
    "id": "ws_1",
    "status": "completed",
    "action": {"type": "search", "query": "Oslo"},
}
GEMINI_CALL = {
    "toolCall": {"id": "t1", "toolType": "GOOGLE_SEARCH_WEB", "args": {"q": "Oslo"}},
    "thoughtSignature": "c2lnbmVk",
}


def _turn(*parts: Any) -> list[Message]:
    return [Message.user("Oslo?"), Message("assistant", [*parts, TextPart("Sunny.")])]


def test_each_provider_gets_its_own_parts_back_unchanged() -> None:
    anthropic = [
        ProviderToolPart("anthropic", "web_search", "call", "srvtoolu_1", ANTHROPIC_CALL),
        ProviderToolPart("anthropic", "web_search", "result", "srvtoolu_1", ANTHROPIC_RESULT),
    ]
    body = AnthropicModel("c", api_key="k").build_body(
        ModelRequest(_turn(*anthropic), prompt_caching=False), stream=False
    )
    assert body["messages"][1]["content"] == [
        ANTHROPIC_CALL,
        ANTHROPIC_RESULT,
        {"type": "text", "text": "Sunny."},
    ]
    responses = ProviderToolPart("openai-responses", "web_search", "call", "ws_1", RESPONSES_ITEM)
    sent = OpenAIResponsesModel("g", api_key="k").build_body(
        ModelRequest(_turn(responses)), stream=False
    )
    check_openai_responses(sent)
    assert sent["input"][1:] == [RESPONSES_ITEM, {"role": "assistant", "content": "Sunny."}]
    gemini = ProviderToolPart("gemini", "web_search", "call", "t1", GEMINI_CALL)
    cited = ProviderToolPart("gemini", "web_search", "citations", "", {"groundingMetadata": {}})
    contents = GeminiModel("gemini-3-pro", api_key="k").build_body(
        ModelRequest(_turn(gemini, cited))
    )["contents"]
    assert contents[1]["parts"] == [GEMINI_CALL, {"text": "Sunny."}]


def test_other_providers_parts_are_left_out_with_a_note() -> None:
    history = _turn(
        ProviderToolPart("anthropic", "web_search", "call", "srvtoolu_1", ANTHROPIC_CALL),
        ProviderToolPart("gemini", "code_execution", "call", "", {"executableCode": {}}),
    )
    note = "anthropic web_search, gemini code_execution"
    chat = OpenAIChatModel("g", api_key="k").build_body(ModelRequest(history), stream=False)
    assert chat["messages"][1]["content"].startswith("Sunny.\n\n[Provider-run tools left out")
    assert note in chat["messages"][1]["content"]
    responses = OpenAIResponsesModel("g", api_key="k").build_body(
        ModelRequest(history), stream=False
    )
    assert note in responses["input"][1]["content"]
    assert "web_search_call" not in str(responses["input"])
    gemini = GeminiModel("gemini-3-pro", api_key="k").build_body(ModelRequest(history))
    assert "anthropic web_search" in gemini["contents"][1]["parts"][-1]["text"]
    assert "server_tool_use" not in str(gemini["contents"])
    anthropic = AnthropicModel("c", api_key="k").build_body(ModelRequest(history), stream=False)
    assert "gemini code_execution" in anthropic["messages"][1]["content"][-1]["text"]
    assert "executableCode" not in str(anthropic["messages"])


def test_provider_tool_parts_count_toward_the_history_budget() -> None:
    from toolweave.agent.session import message_tokens

    result = ProviderToolPart("anthropic", "web_search", "result", "srvtoolu_1", ANTHROPIC_RESULT)
    bare = Message("assistant", [TextPart("Sunny.")])
    searched = Message("assistant", [result, TextPart("Sunny.")])
    assert message_tokens(searched) > message_tokens(bare) + 20
