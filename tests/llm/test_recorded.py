"""Real recorded provider answers (tests/llm/recorded, from pydantic-ai's cassettes) through the
adapters: every interaction holds, and the parts issue 33 is about are checked one by one."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.llm.oracles import check_anthropic_beta, check_gemini, check_openai_responses
from tests.llm.recordings import RECORDED, Interaction, interactions, read, replay
from toolweave.llm import (
    AnthropicModel,
    GeminiModel,
    Message,
    ModelError,
    ModelRequest,
    ModelResponse,
    OpenAIResponsesModel,
    ProviderToolPart,
)

FILES = sorted(RECORDED.glob("*.yaml"))


def _first(name: str, *, stream: bool | None = None, status: int | None = None) -> Interaction:
    for item in interactions(RECORDED / name):
        if (stream is None or item.stream == stream) and (status is None or item.status == status):
            return item
    raise LookupError(name)


async def _read(item: Interaction) -> ModelResponse:
    return (await read(item))[0]


def test_the_corpus_covers_every_adapter() -> None:
    providers = {i.provider for f in FILES for i in interactions(f)}
    assert providers == {"anthropic", "openai-chat", "openai-responses", "gemini", "compat"}
    assert len(FILES) >= 25


@pytest.mark.parametrize("path", FILES, ids=lambda p: Path(p).stem)
async def test_every_recorded_interaction_holds(path: Path) -> None:
    items = list(interactions(path))
    assert items, f"{path.name} has no interaction an adapter speaks"
    for item in items:
        outcome = await replay(item)
        assert outcome.held, f"{path.name} {item.uri}: {outcome.why}"


async def test_anthropic_stream_with_web_search_keeps_text_and_goes_back_unchanged() -> None:
    item = _first("test_anthropic__test_anthropic_model_web_search_tool_stream.yaml", stream=True)
    response = await _read(item)
    assert response.message.text.strip()
    tools = response.message.provider_tools
    assert {(p.tool, p.phase) for p in tools} == {("web_search", "call"), ("web_search", "result")}
    body = AnthropicModel("claude", api_key="k").build_body(
        ModelRequest([Message.user("weather?"), response.message, Message.user("thanks")]),
        stream=False,
    )
    sent = body["messages"][1]["content"]
    assert [b for b in sent if b["type"] in ("server_tool_use", "web_search_tool_result")] == [
        p.data for p in tools
    ]
    cited = [b for b in sent if b.get("citations")]
    assert cited, "cited text goes back with its citations"


async def test_mistral_list_content_read_as_text_and_thinking() -> None:
    for stream in (False, True):
        name = "test_mistral__test_mistral_model_thinking_part" + ("_iter" if stream else "")
        response = await _read(_first(name + ".yaml", stream=stream))
        assert isinstance(response.message.text, str) and response.message.text
        assert response.message.parts[0].kind == "thinking"


async def test_gemini_3_server_tool_parts_keep_their_signatures() -> None:
    name = "test_google__test_google_model_file_search_grounding_gemini_3[True].yaml"
    response = await _read(_first(name, stream=False))
    parts = [p for p in response.message.provider_tools if p.phase != "citations"]
    assert [(p.tool, p.phase) for p in parts] == [
        ("file_search", "call"),
        ("file_search", "result"),
    ]
    assert all(p.data.get("thoughtSignature") for p in parts)
    assert any(p.phase == "citations" for p in response.message.provider_tools)


async def test_openrouter_error_carries_the_upstream_words() -> None:
    item = _first("test_openrouter__test_openrouter_errors_raised.yaml", status=429)
    with pytest.raises(ModelError) as caught:
        await _read(item)
    assert "Provider returned error" in str(caught.value)
    assert "Google says" in str(caught.value) and "temporarily rate-limited" in str(caught.value)
    assert caught.value.retryable and caught.value.status == 429


async def test_validation_errors_are_not_retryable() -> None:
    item = _first("test_groq__test_tool_use_failed_error.yaml", status=400)
    with pytest.raises(ModelError) as caught:
        await _read(item)
    assert caught.value.code == "tool_use_failed" and not caught.value.retryable
    item = _first("test_model_name_suggestions__test_model_name_suggestion[anthropic].yaml")
    with pytest.raises(ModelError, match="not_found_error: model: claude-sonet-4-5") as caught:
        await _read(item)
    assert caught.value.code == "not_found_error" and not caught.value.retryable


async def test_provider_tool_parts_are_stripped_with_a_note_for_another_provider() -> None:
    item = _first("test_anthropic__test_anthropic_code_execution_tool_stream.yaml", stream=True)
    response = await _read(item)
    assert all(isinstance(p, ProviderToolPart) for p in response.message.provider_tools)
    from toolweave.llm.gemini import gemini_contents

    contents = gemini_contents([Message.user("q"), response.message])
    texts = [p.get("text", "") for p in contents[1]["parts"]]
    assert any("anthropic code_execution" in t for t in texts)
    assert not any("server_tool_use" in str(p) for p in contents[1]["parts"])


def _recorded_request(name: str, index: int) -> dict[str, Any]:
    data = yaml.load((RECORDED / name).read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    body: dict[str, Any] = data["interactions"][index]["request"]["parsed_body"]
    return body


async def test_anthropic_provider_blocks_go_back_as_the_api_accepted_them() -> None:
    """The next request of the recording (which Anthropic answered with 200) carries the same
    code execution blocks our adapter sends back."""
    name = "test_anthropic__test_anthropic_code_execution_tool_container_reuse.yaml"
    response = await _read(_first(name))
    history = [Message.user("q"), response.message, Message.user("again")]
    ours = AnthropicModel("c", api_key="k").build_body(ModelRequest(history), stream=False)
    check_anthropic_beta(ours)
    sent = [b for b in ours["messages"][1]["content"] if b["type"] not in ("text", "thinking")]
    accepted = [
        block
        for message in _recorded_request(name, 1)["messages"]
        if message["role"] == "assistant"
        for block in message["content"]
        if block["type"] not in ("text", "thinking")
    ]
    assert sent == accepted and {b["type"] for b in sent} == {
        "server_tool_use",
        "bash_code_execution_tool_result",
    }


async def test_responses_provider_items_go_back_whole_and_well_formed() -> None:
    """Responses items go back as received (the SDK's input types accept them); the recording's
    next request sent the same items, by id and type, trimmed."""
    name = "test_openai_responses__test_openai_responses_model_mcp_server_tool.yaml"
    response = await _read(_first(name))
    history = [Message.user("q"), response.message, Message.user("again")]
    ours = OpenAIResponsesModel("g", api_key="k").build_body(ModelRequest(history), stream=False)
    check_openai_responses(ours)
    kinds = ("mcp_list_tools", "mcp_call")
    sent = [(i["type"], i["id"]) for i in ours["input"] if i.get("type") in kinds]
    accepted = [
        (i["type"], i["id"]) for i in _recorded_request(name, 1)["input"] if i.get("type") in kinds
    ]
    assert sent == accepted and len(sent) == 2
    assert [p.data for p in response.message.provider_tools] == [
        i for i in ours["input"] if i.get("type") in kinds
    ]


def _signature(part: dict[str, Any]) -> bytes:
    text = str(part.get("thoughtSignature", ""))
    return base64.urlsafe_b64decode(text.replace("+", "-").replace("/", "_"))


async def test_gemini_3_signed_tool_parts_go_back_as_the_api_accepted_them() -> None:
    """The recording streamed a Gemini 3 answer with signed `toolCall` / `toolResponse` parts,
    then sent it back (accepted: 200). Our adapter sends back the same parts in the same order
    with the same signature bytes (the recording's SDK re-encoded them URL-safe)."""
    name = "test_google__test_google_model_file_search_grounding_gemini_3[True].yaml"
    response = await _read(_first(name, stream=True))
    question = _recorded_request(name, 4)["contents"]
    history = [Message.user("q"), response.message, Message.user("again")]
    body = GeminiModel("gemini-3-flash-preview", api_key="k").build_body(ModelRequest(history))
    check_gemini(body)
    ours, accepted = body["contents"][1]["parts"], question[1]["parts"]
    assert [sorted(p) for p in ours] == [sorted(p) for p in accepted]
    assert [_signature(p) for p in ours] == [_signature(p) for p in accepted]
    assert ours[0]["toolCall"]["id"] == accepted[0]["toolCall"]["id"]
