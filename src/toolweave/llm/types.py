"""Requests, responses, usage, stream events and errors shared by every `Model`."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from toolweave.llm.messages import (
    Message,
    ProviderToolPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from toolweave.llm.settings import ProviderTool
from toolweave.tools import ToolDef

FinishReason = Literal["stop", "tool_calls", "length", "content_filter", "error"]
ToolChoice: TypeAlias = Literal["auto", "none", "required"] | dict[str, str]


@dataclass(slots=True)
class ModelRequest:
    messages: list[Message]
    tools: list[ToolDef] = field(default_factory=list)
    tool_choice: ToolChoice = "auto"
    output_schema: dict[str, Any] | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    strict_tools: bool = False
    """Send tool schemas in the provider's strict dialect (OpenAI strict mode)."""
    output_name: str = "final_output"
    """The name native structured output is declared under."""
    provider_tools: tuple[ProviderTool, ...] = ()
    """Tools the provider runs itself; an adapter without one refuses the request."""
    deferred_tools: frozenset[str] = frozenset()
    """Names of `tools` sent with `defer_loading`: the provider's `tool_search` (a provider
    tool above) loads them when the model finds them (Anthropic, OpenAI Responses)."""
    prompt_caching: bool = True
    """Mark cache breakpoints (Anthropic) and send `cache_key` (OpenAI) where supported."""
    cache_key: str | None = None
    """Groups requests that share a prefix (a session id): OpenAI's `prompt_cache_key`."""
    stop: tuple[str, ...] = ()
    """Strings that end the answer (`ModelSettings.stop`)."""
    json_mode: bool = False
    """The answer must be a JSON object, no schema (`ModelSettings.json_mode`)."""


@dataclass(slots=True)
class Usage:
    """Token counts. `input_tokens` always includes cached input (Anthropic's is added up)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(slots=True)
class ModelResponse:
    message: Message
    finish_reason: FinishReason = "stop"
    usage: Usage = field(default_factory=Usage)
    raw: Any = None

    def __post_init__(self) -> None:
        # Providers disagree (Gemini says STOP with calls); the message is the truth.
        if self.message.tool_calls:
            self.finish_reason = "tool_calls"


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    index: int
    id: str | None
    name: str | None
    arguments_delta: str


@dataclass(frozen=True, slots=True)
class ToolCallReady:
    call: ToolCallPart


@dataclass(frozen=True, slots=True)
class ProviderToolUpdate:
    """A provider-run tool's call, result or citations, as soon as the stream has it whole."""

    part: ProviderToolPart


@dataclass(frozen=True, slots=True)
class Finished:
    response: ModelResponse


StreamEvent: TypeAlias = (
    TextDelta | ThinkingDelta | ToolCallDelta | ToolCallReady | ProviderToolUpdate | Finished
)

_WORDS = re.compile(r"\S+\s*|\s+")


async def response_events(response: ModelResponse) -> AsyncIterator[StreamEvent]:
    """Split a finished response into the events a real provider would stream: what
    `ScriptedModel` streams, and what an adapter yields when a server answers a streaming
    request with one plain JSON body."""
    for part in response.message.parts:
        if isinstance(part, TextPart):
            for word in _WORDS.findall(part.text):
                yield TextDelta(word)
        elif isinstance(part, ThinkingPart) and part.text:
            yield ThinkingDelta(part.text)
        elif isinstance(part, ProviderToolPart):
            yield ProviderToolUpdate(part)
    for index, call in enumerate(response.message.tool_calls):
        arguments = json.dumps(call.arguments, ensure_ascii=False)
        yield ToolCallDelta(index, call.id, call.name, arguments)
        yield ToolCallReady(call)
    yield Finished(response)
