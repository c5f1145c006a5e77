"""What a tool returns: content parts for the model, an optional structured value, an error flag.

Plain return values are converted here so tool authors can return `str`, numbers, dicts, lists,
pydantic models or dataclasses and get a well-formed `ToolResult`. Every part may carry MCP
`annotations` (audience, priority, lastModified) and `meta` (its `_meta`), kept as a server
sent them, so a gateway republishes them unchanged.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias


@dataclass(frozen=True, slots=True)
class TextContent:
    text: str
    type: Literal["text"] = "text"
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ImageContent:
    """An image as base64 `data` with its MIME type."""

    data: str
    mime_type: str
    type: Literal["image"] = "image"
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class AudioContent:
    """Audio as base64 `data` with its MIME type (MCP servers may return it)."""

    data: str
    mime_type: str
    type: Literal["audio"] = "audio"
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ResourceContent:
    """A resource by URI, embedded (`text` or base64 `blob`) or linked (neither)."""

    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: str | None = None
    name: str | None = None
    type: Literal["resource"] = "resource"
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ResourceLink:
    """A link to a resource the caller may read (`resource_link`): nothing is embedded."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    type: Literal["resource_link"] = "resource_link"
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None


Content: TypeAlias = TextContent | ImageContent | AudioContent | ResourceContent | ResourceLink
_PARTS = (TextContent, ImageContent, AudioContent, ResourceContent, ResourceLink)


@dataclass(slots=True)
class ToolResult:
    """The outcome of one tool call as the model and the caller see it."""

    content: list[Content] = field(default_factory=list)
    structured: Any = None
    is_error: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def text_result(cls, text: str, *, is_error: bool = False) -> ToolResult:
        return cls(content=[TextContent(text)], is_error=is_error)

    @classmethod
    def error(cls, message: str) -> ToolResult:
        """A domain error the model should see and can act on; the run goes on."""
        return cls(content=[TextContent(message)], is_error=True)

    @property
    def text(self) -> str:
        """All text parts joined by newlines; resources contribute their embedded text."""
        parts: list[str] = []
        for item in self.content:
            text = item.text if isinstance(item, TextContent | ResourceContent) else None
            if text is not None:
                parts.append(text)
        return "\n".join(parts)


def to_jsonable(value: Any) -> Any:
    """Turn pydantic models, dataclasses, enums, tuples and sets into plain JSON values.

    Anything else goes through pydantic-core's encoder (datetime and date as ISO 8601, UUID,
    Decimal, Path, bytes as UTF-8); what even that cannot encode becomes its `str()`.
    """
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((to_jsonable(v) for v in value), key=repr)
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    from pydantic_core import to_jsonable_python  # only for the unusual types that need it

    try:
        return to_jsonable_python(value)
    except ValueError:  # PydanticSerializationError: a type with no JSON form
        return str(value)


def to_tool_result(value: Any) -> ToolResult:
    """Convert whatever a tool function returned into a `ToolResult`.

    str -> one text part; None -> no content; a `ToolResult` passes through; a content part or
    a non-empty list of them becomes the content; anything JSON-like -> `structured` plus its
    JSON as text (so providers without structured results still see it).
    """
    if isinstance(value, str):
        return ToolResult([TextContent(value)])
    if isinstance(value, ToolResult):
        return value
    if value is None:
        return ToolResult()
    if isinstance(value, _PARTS):
        return ToolResult(content=[value])
    if isinstance(value, list) and value and all(isinstance(v, _PARTS) for v in value):
        return ToolResult(content=list(value))  # several parts, e.g. text plus an image
    structured = to_jsonable(value)
    text = json.dumps(structured, ensure_ascii=False)
    return ToolResult(content=[TextContent(text)], structured=structured)
