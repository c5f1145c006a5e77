"""`model_from_string` and the named presets for OpenAI-compatible servers.

One string picks a model everywhere (config files, `--model` on the command line):
`provider:model`. The presets only fill in what differs between compatible servers: base
URL, key variable, the `max_tokens` field name, how structured output is requested, and
whether a key is needed at all (local servers need none).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from toolweave.llm.anthropic import AnthropicModel
from toolweave.llm.errors import ModelConfigError
from toolweave.llm.gemini import GeminiModel
from toolweave.llm.model import Model
from toolweave.llm.openai_chat import OpenAIChatModel, OutputMode
from toolweave.llm.openai_responses import OpenAIResponsesModel


@dataclass(frozen=True, slots=True)
class Preset:
    """How to reach one OpenAI-compatible server with `OpenAIChatModel`."""

    base_url: str
    base_url_env: str
    api_key_env: tuple[str, ...]
    require_api_key: bool = True
    max_tokens_field: str = "max_tokens"
    output_mode: OutputMode = "json_schema"
    default_model: str | None = None

    def build(self, model: str, **options: Any) -> OpenAIChatModel:
        name = model or self.default_model
        if not name:
            raise ModelConfigError(
                "this preset needs a model name after the colon, e.g. 'vllm:Qwen/Qwen3-8B'",
                setting="model",
            )
        settings: dict[str, Any] = {
            "base_url": os.environ.get(self.base_url_env) or self.base_url,
            "api_key_env": self.api_key_env,
            "require_api_key": self.require_api_key,
            "max_tokens_field": self.max_tokens_field,
            "output_mode": self.output_mode,
        }
        settings.update(options)
        return OpenAIChatModel(name, **settings)


PRESETS: dict[str, Preset] = {
    "deepseek": Preset("https://api.deepseek.com/v1", "DEEPSEEK_BASE_URL", ("DEEPSEEK_API_KEY",)),
    "qwen": Preset(
        "https://dashscope.aliyuncs.com/compatible-mode/v1",
        "DASHSCOPE_BASE_URL",
        ("DASHSCOPE_API_KEY",),
    ),
    "ollama": Preset(
        "http://localhost:11434/v1", "OLLAMA_BASE_URL", ("OLLAMA_API_KEY",), require_api_key=False
    ),
    "vllm": Preset(
        "http://localhost:8000/v1",
        "VLLM_BASE_URL",
        ("VLLM_API_KEY",),
        require_api_key=False,
        output_mode="vllm",
    ),
    "llamacpp": Preset(
        "http://localhost:8080/v1",
        "LLAMACPP_BASE_URL",
        ("LLAMACPP_API_KEY",),
        require_api_key=False,
        default_model="default",
    ),
}
"""Named OpenAI-compatible servers; each base URL can be overridden by its `*_BASE_URL`."""

_NATIVE = ("openai", "openai-responses", "anthropic", "gemini", "google", "openai-compat")
_ALIASES = {"dashscope": "qwen", "llama.cpp": "llamacpp", "llama-cpp": "llamacpp"}
_FORMS = (
    "'openai:gpt-4o', 'openai-responses:gpt-4.1', 'anthropic:claude-sonnet-4-5', "
    "'gemini:gemini-2.5-flash', 'openai-compat:http://host:8000/v1#model', or a preset: "
    + ", ".join(f"'{name}:<model>'" for name in PRESETS)
)


def model_from_string(spec: str, **options: Any) -> Model:
    """Build a model from `provider:model`; `options` go to the adapter's constructor.

    Raises `ModelConfigError` with a one-line fix for a malformed string, an unknown
    provider or a missing API key.
    """
    provider, sep, name = spec.strip().partition(":")
    provider = _ALIASES.get(provider.lower(), provider.lower())
    if not sep or (not name and provider not in PRESETS):
        raise ModelConfigError(
            f"model string {spec!r} must look like 'provider:model', e.g. {_FORMS}",
            setting="model",
        )
    if provider == "openai":
        return OpenAIChatModel(name, **options)
    if provider == "openai-responses":
        return OpenAIResponsesModel(name, **options)
    if provider == "anthropic":
        return AnthropicModel(name, **options)
    if provider in ("gemini", "google"):
        return GeminiModel(name, **options)
    if provider == "openai-compat":
        base_url, hash_sign, model = name.rpartition("#")
        if not hash_sign or not base_url or not model:
            raise ModelConfigError(
                f"model string {spec!r}: write 'openai-compat:<base_url>#<model>', e.g. "
                "'openai-compat:http://localhost:8000/v1#Qwen/Qwen3-8B'",
                setting="model",
            )
        settings: dict[str, Any] = {
            "base_url": base_url,
            # Never OPENAI_API_KEY: a compat URL may be anyone's server (presets keep their own).
            "api_key_env": ("OPENAI_COMPAT_API_KEY",),
            "require_api_key": False,
            "max_tokens_field": "max_tokens",
        }
        return OpenAIChatModel(model, **{**settings, **options})
    preset = PRESETS.get(provider)
    if preset is None:
        known = ", ".join([*_NATIVE, *PRESETS])
        raise ModelConfigError(
            f"unknown model provider {provider!r} in {spec!r}; use one of: {known}",
            setting="model",
        )
    return preset.build(name, **options)


def known_provider(name: str) -> bool:
    """Whether `name` is a provider `model_from_string` knows (native, preset or alias)."""
    name = _ALIASES.get(name.lower(), name.lower())
    return name in _NATIVE or name in PRESETS


def model_config_problem(spec: str, **options: Any) -> str | None:
    """The one-line reason `model_from_string(spec)` would fail, or None when it would work."""
    try:
        model_from_string(spec, **options)
    except ModelConfigError as exc:
        return str(exc)
    return None
