"""`ModelSettings`: the settings an agent sends with every model call, and `ProviderTool`.

Kept apart from `ModelRequest` (one call) so an agent holds one validated value and each call
copies it in; an unset field is left out of the provider request, so the provider's default
applies. `ProviderTool` asks for a tool the provider runs itself (web search, code execution,
web fetch, an MCP connector): each adapter turns it into its own request shape or refuses it
with a `ModelConfigError` naming the provider.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from toolweave.errors import ConfigError

ProviderToolName = Literal["web_search", "code_execution", "web_fetch", "mcp", "tool_search"]
PROVIDER_TOOL_NAMES: tuple[str, ...] = get_args(ProviderToolName)
MAX_STOP_SEQUENCES = 4
"""Stop sequences per request: the smallest provider limit (OpenAI's)."""


@dataclass(frozen=True, slots=True)
class ProviderTool:
    """A tool the provider runs on its side, asked for in neutral terms.

    `name` is one of `web_search`, `code_execution`, `web_fetch`, `mcp` (the MCP connector,
    which needs `url` and `label`, the server's name) or `tool_search` (the provider's own
    search over the request's deferred tools, `ModelRequest.deferred_tools`). `options` go into
    the provider's tool entry as given (e.g. Anthropic's `max_uses`, `allowed_domains`; OpenAI's
    `search_context_size`; an MCP server's `authorization_token` or `allowed_tools`).
    Governance never sees these calls: the provider makes them, not toolweave.
    """

    name: ProviderToolName
    url: str | None = None
    label: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.name not in PROVIDER_TOOL_NAMES:
            raise ConfigError(
                f"ProviderTool(name=...) must be one of {', '.join(PROVIDER_TOOL_NAMES)}, "
                f"got {self.name!r}"
            )
        if self.name == "mcp" and not (self.url and self.label):
            raise ConfigError(
                "ProviderTool('mcp') needs url=... (the MCP server's https URL) and label=... "
                "(a short name for it)"
            )
        if self.url is not None and not self.url.startswith("https://"):
            raise ConfigError(
                f"ProviderTool(url=...) must be an https:// URL the provider can reach, "
                f"got {self.url!r}"
            )


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """Settings for every model call of an agent.

    `temperature` (0 or more) and `max_tokens` (the answer's token cap, positive): None leaves
    the provider's default. `prompt_caching` (on by default) marks cache breakpoints where the
    provider wants them marked (Anthropic) and sends a per-session cache key where it takes
    one (OpenAI); turn it off to send neither. `provider_tools` asks for provider-run tools.
    `stop`: up to `MAX_STOP_SEQUENCES` strings that end the answer where they appear (OpenAI
    Chat `stop`, Anthropic `stop_sequences`, Gemini `stopSequences`; the Responses API has
    none and refuses). `json_mode`: the answer must be a JSON object, without a schema (OpenAI
    `json_object`, Gemini's JSON MIME type; Anthropic has no such mode and refuses: give the
    agent an `output_type` instead). A structured `output_type` takes precedence over it.
    """

    temperature: float | None = None
    max_tokens: int | None = None
    prompt_caching: bool = True
    provider_tools: tuple[ProviderTool, ...] = ()
    stop: tuple[str, ...] = ()
    json_mode: bool = False

    def request_fields(self) -> dict[str, Any]:
        """The `ModelRequest` fields these settings fill (one place, so a new setting reaches
        every request the agent builds)."""
        return {
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "provider_tools": self.provider_tools,
            "prompt_caching": self.prompt_caching,
            "stop": self.stop,
            "json_mode": self.json_mode,
        }

    def __post_init__(self) -> None:
        if (
            not isinstance(self.stop, tuple)
            or len(self.stop) > MAX_STOP_SEQUENCES
            or not all(isinstance(s, str) and s for s in self.stop)
        ):
            raise ConfigError(
                f"ModelSettings(stop=...) must be a tuple of at most {MAX_STOP_SEQUENCES} "
                f"non-empty strings, e.g. stop=('Observation:',), got {self.stop!r}"
            )
        if self.temperature is not None and not self.temperature >= 0:
            raise ConfigError(
                f"ModelSettings(temperature=...) must be 0 or more, got {self.temperature!r}"
            )
        if self.max_tokens is not None and (
            isinstance(self.max_tokens, bool)
            or not isinstance(self.max_tokens, int)
            or self.max_tokens <= 0
        ):
            raise ConfigError(
                f"ModelSettings(max_tokens=...) must be a positive integer, got {self.max_tokens!r}"
            )
        if not isinstance(self.provider_tools, tuple) or not all(
            isinstance(t, ProviderTool) for t in self.provider_tools
        ):
            raise ConfigError(
                "ModelSettings(provider_tools=...) must be a tuple of ProviderTool, e.g. "
                "(ProviderTool('web_search'),)"
            )
