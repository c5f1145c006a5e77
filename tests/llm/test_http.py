"""Retries, provider error messages, API-key errors and the SSE decoder."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import httpx
import pytest

from tests.llm.cases import ADAPTERS, adapter, collect, opening
from tests.llm.replay_server import ReplayServer
from toolweave.llm import (
    AnthropicModel,
    GeminiModel,
    ModelConfigError,
    ModelError,
    ModelRequest,
    OpenAIChatModel,
    OpenAIResponsesModel,
    ToolCallReady,
    _http,
)


@pytest.fixture(autouse=True)
def _instant_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_http, "BACKOFF_BASE", 0.0)


def _chat(replay: ReplayServer, client: httpx.AsyncClient, retries: int = 2) -> OpenAIChatModel:
    return OpenAIChatModel(
        "gpt-4o", base_url=replay.url, api_key="k", max_retries=retries, client=client
    )


async def test_429_with_retry_after_then_success(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.json("openai_error_429.json", 429, retry_after="0")
    replay.json("openai_error_429.json", 503, retry_after_ms="1")
    replay.json("openai_chat_text.json")
    response = await _chat(replay, client).complete(ModelRequest(opening()))
    assert response.message.text == "北京今天晴，15℃。"
    assert len(replay.requests) == 3


async def test_retries_exhausted_keeps_provider_message(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    for _ in range(2):
        replay.json("openai_error_429.json", 429)
    with pytest.raises(ModelError) as caught:
        await _chat(replay, client, retries=1).complete(ModelRequest(opening()))
    assert caught.value.status == 429 and caught.value.retryable
    assert "Rate limit reached for gpt-4o" in caught.value.message
    assert len(replay.requests) == 2


@pytest.mark.parametrize(
    ("factory", "fixture"),
    [
        (lambda url, c: OpenAIChatModel("m", base_url=url, api_key="k", client=c), "openai"),
        (lambda url, c: OpenAIResponsesModel("m", base_url=url, api_key="k", client=c), "openai"),
        (lambda url, c: AnthropicModel("m", base_url=url, api_key="k", client=c), "anthropic"),
        (lambda url, c: GeminiModel("m", base_url=url, api_key="k", client=c), "gemini"),
    ],
)
async def test_4xx_fails_at_once_with_provider_message(
    replay: ReplayServer, client: httpx.AsyncClient, factory: object, fixture: str
) -> None:
    replay.json(f"{fixture}_error_400.json", 400)
    model = factory(replay.url, client)  # type: ignore[operator]
    with pytest.raises(ModelError) as caught:
        await model.complete(ModelRequest(opening()))
    assert caught.value.status == 400 and not caught.value.retryable
    assert len(replay.requests) == 1
    expected = {"openai": "Invalid schema", "anthropic": "tool_use_id", "gemini": "Cannot find"}
    assert expected[fixture] in caught.value.message


async def test_streams_retry_before_the_first_byte(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.json("anthropic_error_529.json", 529, retry_after="0")
    replay.json("gemini_error_429.json", 408)
    replay.sse("anthropic_text.sse")
    model = AnthropicModel("claude", base_url=replay.url, api_key="k", client=client)
    _, response = await collect(model.stream(ModelRequest(opening())))
    assert response.message.text == "Beijing is sunny today, 15°C."
    assert len(replay.requests) == 3


async def test_connection_refused_is_a_retryable_model_error(client: httpx.AsyncClient) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = OpenAIChatModel(
        "m", base_url=f"http://127.0.0.1:{port}", api_key="k", max_retries=1, client=client
    )
    with pytest.raises(ModelError) as caught:
        await model.complete(ModelRequest(opening()))
    assert caught.value.retryable and caught.value.status is None


def test_retry_after_forms() -> None:
    assert _http.backoff_delay(0, httpx.Headers({"retry-after-ms": "250"})) == 0.25
    assert _http.backoff_delay(0, httpx.Headers({"retry-after": "3"})) == 3.0
    date = httpx.Headers({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})
    assert _http.backoff_delay(0, date) == 0.0  # a date in the past: go now
    huge = httpx.Headers({"retry-after": "3600"})
    assert _http.backoff_delay(0, huge) <= _http.BACKOFF_MAX  # ignored past the cap


@pytest.mark.parametrize(
    ("factory", "variable"),
    [
        (lambda: OpenAIChatModel("gpt-4o"), "OPENAI_API_KEY"),
        (lambda: OpenAIResponsesModel("gpt-4.1"), "OPENAI_API_KEY"),
        (lambda: AnthropicModel("claude-sonnet-4-5"), "ANTHROPIC_API_KEY"),
        (lambda: GeminiModel("gemini-2.5-flash"), "GEMINI_API_KEY or GOOGLE_API_KEY"),
    ],
)
def test_missing_key_names_the_variable(factory: object, variable: str) -> None:
    with pytest.raises(ModelConfigError) as caught:
        factory()  # type: ignore[operator]
    message = str(caught.value)
    assert variable in message and "\n" not in message
    assert caught.value.setting == variable.split()[0]


def test_key_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "from-google")
    assert GeminiModel("gemini-2.5-flash").api_key == "from-google"


def test_one_model_survives_several_event_loops(replay: ReplayServer) -> None:
    replay.json("openai_chat_text.json")
    replay.json("openai_chat_text.json")
    model = OpenAIChatModel("gpt-4o", base_url=replay.url, api_key="k")

    async def once() -> str:
        text = (await model.complete(ModelRequest(opening()))).message.text
        await model.aclose()
        return text

    assert asyncio.run(once()) == asyncio.run(once()) == "北京今天晴，15℃。"


async def test_x_should_retry_overrides_the_status_rule(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.json("openai_error_429.json", 500, x_should_retry="false")
    with pytest.raises(ModelError) as caught:
        await _chat(replay, client).complete(ModelRequest(opening()))
    assert caught.value.status == 500 and not caught.value.retryable
    assert len(replay.requests) == 1
    replay.reset()
    replay.json("openai_error_400.json", 400, x_should_retry="true")
    replay.json("openai_chat_text.json")
    assert (await _chat(replay, client).complete(ModelRequest(opening()))).message.text
    assert len(replay.requests) == 2


@pytest.mark.parametrize("kind", sorted(ADAPTERS))
async def test_a_plain_json_answer_to_a_streaming_request_is_replayed_as_a_stream(
    replay: ReplayServer, client: httpx.AsyncClient, kind: str
) -> None:
    # Some OpenAI-compatible servers ignore "stream": true and send one JSON body.
    fixture, tool = f"{kind}_tools.json", "get_weather"
    replay.json(fixture)
    model = adapter(kind, replay.url, client)
    streamed_events, streamed = await collect(model.stream(ModelRequest(opening())))
    replay.json(fixture)
    whole = await model.complete(ModelRequest(opening()))

    def calls(message: Any) -> list[tuple[str, Any]]:  # Gemini mints call ids per parse
        return [(c.name, c.arguments) for c in message.tool_calls]

    assert calls(streamed.message) == calls(whole.message) and streamed.usage == whole.usage
    assert streamed.message.text == whole.message.text
    assert streamed.message.tool_calls and {c.name for c in streamed.message.tool_calls} == {tool}
    assert any(isinstance(e, ToolCallReady) for e in streamed_events)


async def test_a_refused_key_names_where_it_came_from(
    replay: ReplayServer, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_COMPAT_API_KEY", "wrong")
    replay.json("openai_error_400.json", 401)
    model = OpenAIChatModel(
        "m", base_url=replay.url, client=client, api_key_env=("OPENAI_COMPAT_API_KEY",)
    )
    with pytest.raises(ModelError) as caught:
        await model.complete(ModelRequest(opening()))
    assert caught.value.status == 401
    assert f"the API key from OPENAI_COMPAT_API_KEY was refused by {replay.url}" in str(
        caught.value
    )
    replay.json("openai_error_400.json", 401)
    explicit = OpenAIChatModel("m", base_url=replay.url, client=client, api_key="k")
    with pytest.raises(ModelError, match=r"the API key from api_key=\.\.\. was refused"):
        await explicit.complete(ModelRequest(opening()))


async def test_an_answer_over_max_answer_bytes_fails_naming_the_setting(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    """A JSON body, an error body and one stream event are each read no further than the
    model's `max_answer_bytes`; a stream of many events within it is read whole."""
    model = _chat(replay, client, retries=0)
    model.max_answer_bytes = 500  # the JSON answer is 758 bytes
    replay.json("openai_chat_text.json")
    with pytest.raises(ModelError, match=r"longer than max_answer_bytes \(500 bytes\)"):
        await model.complete(ModelRequest(opening()))
    replay.json({"error": {"message": "x" * 1_000}}, 400)
    with pytest.raises(ModelError, match="max_answer_bytes"):
        await model.complete(ModelRequest(opening()))
    replay.sse(b'data: {"choices": [{"delta": {"content": "' + b"y" * 5_000)  # never ends
    with pytest.raises(ModelError, match="max_answer_bytes"):
        await collect(model.stream(ModelRequest(opening())))
    replay.sse("openai_chat_text.sse")  # 3,508 bytes in events of at most 478
    _, streamed = await collect(model.stream(ModelRequest(opening())))
    assert streamed.message.text == "Beijing is sunny today, 15°C."
    model.max_answer_bytes = _http.MAX_ANSWER_BYTES
    replay.json("openai_chat_text.json")
    assert (await model.complete(ModelRequest(opening()))).message.text == "北京今天晴，15℃。"
