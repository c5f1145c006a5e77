"""The neutral message format every provider adapter converts to and from.

One tool message per tool call (adapters merge where a provider wants one message); provider
specifics that must survive a round trip (Gemini thought signatures, Anthropic thinking
signatures, DeepSeek reasoning) live in `provider_data` / `ThinkingPart`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from toolweave.errors import ConfigError

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class TextPart:
    text: str
    provider_data: dict[str, Any] = field(default_factory=dict)
    kind: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image by base64 `data` (with `mime_type`) or by `url`."""

    data: str | None = None
    mime_type: str = "image/png"
    url: str | None = None
    kind: Literal["image"] = "image"


@dataclass(frozen=True, slots=True)
class ToolCallPart:
    id: str
    name: str
    arguments: dict[str, Any]
    provider_data: dict[str, Any] = field(default_factory=dict)
    kind: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True, slots=True)
class ToolResultPart:
    call_id: str
    name: str
    content: str | list[TextPart | ImagePart]
    is_error: bool = False
    kind: Literal["tool_result"] = "tool_result"

    def __post_init__(self) -> None:
        # Every adapter reads `content` as text or parts: anything else used to be sent as "".
        content = self.content
        if isinstance(content, str):
            return
        if isinstance(content, list) and all(isinstance(p, TextPart | ImagePart) for p in content):
            return
        raise ConfigError(
            f"ToolResultPart.content for call {self.call_id!r} must be a str or a list of "
            f"TextPart/ImagePart, got {type(content).__name__}; pass a dict or list to "
            "Message.tool_result (sent as JSON) or json.dumps it first"
        )

    @property
    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "\n".join(p.text for p in self.content if isinstance(p, TextPart))


@dataclass(frozen=True, slots=True)
class ThinkingPart:
    text: str
    signature: str | None = None
    provider_data: dict[str, Any] = field(default_factory=dict)
    kind: Literal["thinking"] = "thinking"


ProviderToolPhase = Literal["call", "result", "citations"]


@dataclass(frozen=True, slots=True)
class ProviderToolPart:
    """A tool the provider ran itself (web search, code execution, web fetch, an MCP
    connector): its call, its result or the citations grounding the answer.

    `data` is the provider's own block, item or part, byte for byte, so the turn goes back to
    the same `provider` unchanged (Gemini 3 signatures included); adapters of any other
    provider leave it out and say so in a note. These are not local tool calls: governance
    never sees them (forbid them by not asking for them, see `ProviderTool`).
    """

    provider: str
    tool: str
    phase: ProviderToolPhase
    id: str
    data: dict[str, Any]
    kind: Literal["provider_tool"] = "provider_tool"

    @property
    def summary(self) -> str:
        """One line for events and logs: who ran what."""
        return f"{self.provider} {self.tool} {self.phase} {self.id}".rstrip()


Part: TypeAlias = (
    TextPart | ImagePart | ToolCallPart | ToolResultPart | ThinkingPart | ProviderToolPart
)
_PART_TYPES: dict[str, type[Any]] = {
    "text": TextPart,
    "image": ImagePart,
    "tool_call": ToolCallPart,
    "tool_result": ToolResultPart,
    "thinking": ThinkingPart,
    "provider_tool": ProviderToolPart,
}


@dataclass(slots=True)
class Message:
    role: Role
    parts: list[Part] = field(default_factory=list)

    @classmethod
    def system(cls, text: str) -> Message:
        return cls("system", [TextPart(text)])

    @classmethod
    def user(cls, text: str, images: Sequence[ImagePart] = ()) -> Message:
        return cls("user", [TextPart(text), *images])

    @classmethod
    def assistant(cls, text: str = "", tool_calls: Sequence[ToolCallPart] = ()) -> Message:
        parts: list[Part] = [TextPart(text)] if text else []
        parts.extend(tool_calls)
        return cls("assistant", parts)

    @classmethod
    def tool_result(
        cls,
        call_id: str,
        name: str,
        content: str | list[TextPart | ImagePart] | Mapping[str, Any] | list[Any],
        is_error: bool = False,
    ) -> Message:
        """A tool message; a dict (or a list that is not content parts) is sent as its JSON."""
        if isinstance(content, Mapping) or (
            isinstance(content, list)
            and not all(isinstance(p, TextPart | ImagePart) for p in content)
        ):
            try:
                content = json.dumps(content, ensure_ascii=False, sort_keys=True)
            except (TypeError, ValueError) as exc:
                raise ConfigError(
                    f"Message.tool_result content for call {call_id!r} is not JSON ({exc}); "
                    "pass text, content parts, or JSON-ready values"
                ) from None
        return cls("tool", [ToolResultPart(call_id, name, content, is_error)])

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        return [p for p in self.parts if isinstance(p, ToolCallPart)]

    @property
    def tool_results(self) -> list[ToolResultPart]:
        return [p for p in self.parts if isinstance(p, ToolResultPart)]

    @property
    def provider_tools(self) -> list[ProviderToolPart]:
        return [p for p in self.parts if isinstance(p, ProviderToolPart)]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form for session stores; `from_dict` restores it exactly."""
        parts = []
        for part in self.parts:
            data: dict[str, Any] = {"kind": part.kind}
            for name in part.__dataclass_fields__:
                if name == "kind":
                    continue
                value = getattr(part, name)
                if name == "content" and not isinstance(value, str):
                    value = [{"kind": p.kind, **_fields(p)} for p in value]
                data[name] = value
            parts.append(data)
        return {"role": self.role, "parts": parts}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        parts: list[Part] = []
        for raw in data["parts"]:
            fields = dict(raw)
            kind = fields.pop("kind")
            if kind == "tool_result" and not isinstance(fields["content"], str):
                fields["content"] = [
                    _PART_TYPES[c["kind"]](**{k: v for k, v in c.items() if k != "kind"})
                    for c in fields["content"]
                ]
            parts.append(_PART_TYPES[kind](**fields))
        return cls(data["role"], parts)


def _fields(part: Any) -> dict[str, Any]:
    return {n: getattr(part, n) for n in part.__dataclass_fields__ if n != "kind"}
