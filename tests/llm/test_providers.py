"""model_from_string, the presets and the one-line configuration errors."""

from __future__ import annotations

import httpx
import pytest

from tests.llm.cases import opening
from tests.llm.replay_server import ReplayServer
from toolweave.llm import (
    PRESETS,
    AnthropicModel,
    GeminiModel,
    Model,
    ModelConfigError,
    ModelRequest,
    OpenAIChatModel,
    OpenAIResponsesModel,
    model_config_problem,
    model_from_string,
)


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(name, "k")


@pytest.mark.parametrize(
    ("spec", "kind", "name"),
    [
        ("openai:gpt-4o", OpenAIChatModel, "gpt-4o"),
        ("openai-responses:gpt-4.1", OpenAIResponsesModel, "gpt-4.1"),
        ("anthropic:claude-sonnet-4-5", AnthropicModel, "claude-sonnet-4-5"),
        ("gemini:gemini-2.5-flash", GeminiModel, "gemini-2.5-flash"),
        ("google:models/gemini-2.5-pro", GeminiModel, "gemini-2.5-pro"),
        ("ollama:llama3.2:3b", OpenAIChatModel, "llama3.2:3b"),
        ("llamacpp:", OpenAIChatModel, "default"),
    ],
)
def test_model_strings(spec: str, kind: type, name: str) -> None:
    model = model_from_string(spec)
    assert isinstance(model, kind) and isinstance(model, Model)
    assert model.model_name == name


def test_presets_point_at_their_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DASHSCOPE_API_KEY", "dk")
    qwen = model_from_string("qwen:qwen-plus")
    assert isinstance(qwen, OpenAIChatModel)
    assert qwen.base_url == "https://dashscope.aliyuncs.com/compatible-mode/v1"
    assert qwen.api_key == "dk" and qwen.max_tokens_field == "max_tokens"
    ollama = model_from_string("ollama:qwen3")
    assert isinstance(ollama, OpenAIChatModel)
    assert ollama.base_url == "http://localhost:11434/v1" and ollama.api_key is None
    monkeypatch.setenv("VLLM_BASE_URL", "http://gpu-box:9000/v1")
    vllm = model_from_string("vllm:Qwen/Qwen3-8B")
    assert isinstance(vllm, OpenAIChatModel)
    assert vllm.base_url == "http://gpu-box:9000/v1" and vllm.output_mode == "vllm"
    assert set(PRESETS) == {"deepseek", "qwen", "ollama", "vllm", "llamacpp"}


async def test_openai_compat_string_reaches_the_server(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.json("openai_chat_text.json")
    model = model_from_string(f"openai-compat:{replay.url}/v1#Qwen/Qwen3-8B", client=client)
    response = await model.complete(ModelRequest(opening(), max_tokens=10))
    assert response.message.text == "北京今天晴，15℃。"
    sent = replay.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.body["model"] == "Qwen/Qwen3-8B" and sent.body["max_tokens"] == 10


async def test_openai_compat_never_sends_the_openai_key(
    replay: ReplayServer, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")
    monkeypatch.delenv("OPENAI_COMPAT_API_KEY", raising=False)
    spec = f"openai-compat:{replay.url}/v1#Qwen/Qwen3-8B"
    replay.json("openai_chat_text.json")
    await model_from_string(spec, client=client).complete(ModelRequest(opening(), max_tokens=10))
    monkeypatch.setenv("OPENAI_COMPAT_API_KEY", "compat-key")
    replay.json("openai_chat_text.json")
    await model_from_string(spec, client=client).complete(ModelRequest(opening(), max_tokens=10))
    replay.json("openai_chat_text.json")
    explicit = model_from_string(spec, client=client, api_key="explicit-key")
    await explicit.complete(ModelRequest(opening(), max_tokens=10))
    auth = [r.headers.get("authorization") for r in replay.requests]
    assert auth == [None, "Bearer compat-key", "Bearer explicit-key"]
    # A preset keeps its own variable.
    monkeypatch.setenv("DEEPSEEK_API_KEY", "ds-key")
    deepseek = model_from_string("deepseek:deepseek-chat")
    assert isinstance(deepseek, OpenAIChatModel) and deepseek.api_key == "ds-key"


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("gpt-4o", "must look like 'provider:model'"),
        ("openai-compat:http://localhost:8000/v1", "'openai-compat:<base_url>#<model>'"),
        ("mistral:large", "unknown model provider 'mistral'"),
        ("deepseek:deepseek-chat", "DEEPSEEK_API_KEY"),
        ("qwen:qwen-max", "DASHSCOPE_API_KEY"),
    ],
)
def test_configuration_errors_name_the_fix(spec: str, needle: str) -> None:
    with pytest.raises(ModelConfigError) as caught:
        model_from_string(spec)
    assert needle in str(caught.value) and "\n" not in str(caught.value)
    assert model_config_problem(spec) == str(caught.value)


def test_problem_helper_is_none_when_fine() -> None:
    assert model_config_problem("openai:gpt-4o") is None


def test_bad_options_are_config_errors() -> None:
    with pytest.raises(ModelConfigError, match="tool_mode"):
        OpenAIChatModel("m", api_key="k", tool_mode="json")  # type: ignore[arg-type]
    with pytest.raises(ModelConfigError, match="schema_mode"):
        GeminiModel("m", api_key="k", schema_mode="openapi")  # type: ignore[arg-type]


def test_base_url_without_scheme_is_a_config_error() -> None:
    with pytest.raises(ModelConfigError, match="http:// or https://") as caught:
        model_from_string("openai-compat:localhost:8000/v1#qwen")
    assert caught.value.setting == "base_url"
