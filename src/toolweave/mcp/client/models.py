"""What the client hands back: listings of tools, resources and prompts, and wire conversions.

Listings are small frozen dataclasses rather than pydantic models: a server with hundreds of
tools is parsed on every `list_changed`, and plain attribute access is what callers want. Tool
results become the tool core's `ToolResult`, so an MCP tool is indistinguishable from a local one
to the agent loop.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from toolweave.mcp.client._param_headers import header_bindings
from toolweave.tools.base import ToolAnnotations
from toolweave.tools.result import (
    AudioContent,
    Content,
    ImageContent,
    ResourceContent,
    ResourceLink,
    TextContent,
    ToolResult,
)


def _str(raw: dict[str, Any], key: str) -> str | None:
    value = raw.get(key)
    return value if isinstance(value, str) else None


def _dict(raw: dict[str, Any], key: str) -> dict[str, Any]:
    value = raw.get(key)
    return dict(value) if isinstance(value, dict) else {}


def _icons(raw: dict[str, Any]) -> list[dict[str, Any]]:
    """`icons` (SEP-973): `{src, mimeType?, sizes?, theme?}` entries, kept as sent."""
    value = raw.get("icons")
    return (
        [dict(icon) for icon in value if isinstance(icon, dict)] if isinstance(value, list) else []
    )


def _extra(raw: dict[str, Any], known: frozenset[str]) -> dict[str, Any]:
    """The keys of `raw` a model does not name, carried as sent."""
    return {key: value for key, value in raw.items() if key not in known}


def _wire(base: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """`base` plus every field that is set (`None` and empty values are left out)."""
    return {
        **base,
        **{key: value for key, value in fields.items() if value not in (None, "", [], {})},
    }


_COMMON_KEYS = frozenset({"name", "title", "description", "_meta", "icons"})
_TOOL_KEYS = _COMMON_KEYS | {"inputSchema", "outputSchema", "annotations", "execution"}
_RESOURCE_KEYS = _COMMON_KEYS | {"uri", "mimeType", "size", "annotations"}
_TEMPLATE_KEYS = _COMMON_KEYS | {"uriTemplate", "mimeType", "annotations"}
_PROMPT_KEYS = _COMMON_KEYS | {"arguments"}


@dataclass(frozen=True, slots=True)
class MCPToolInfo:
    """One entry of `tools/list`."""

    name: str
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    output_schema: dict[str, Any] | None = None
    title: str | None = None
    annotations: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    icons: list[dict[str, Any]] = field(default_factory=list)
    execution: dict[str, Any] = field(default_factory=dict)
    """How the tool runs (`{"taskSupport": "forbidden" | "optional" | "required"}`)."""
    header_bindings: dict[str, str] = field(default_factory=dict)
    """`{argument: header name}` of its `x-mcp-header` parameters (mirrored as `Mcp-Param-*`)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys this client does not model, carried as sent (a newer revision's fields)."""

    @property
    def tool_annotations(self) -> ToolAnnotations:
        hints = dict(self.annotations)
        if self.title is not None:
            hints.setdefault("title", self.title)
        return ToolAnnotations.from_mcp(hints)

    @classmethod
    def from_wire(cls, raw: dict[str, Any]) -> MCPToolInfo:
        """One listed tool; `ValueError` (naming the field) for a definition no call can use:
        a missing name, an `inputSchema` that is not an object, an invalid `x-mcp-header`."""
        name = raw.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"tool definition without a string 'name': {str(raw)[:120]}")
        schema = raw.get("inputSchema", {"type": "object"})
        if not isinstance(schema, dict):
            raise ValueError(f"tool {name!r}: inputSchema must be a JSON object")
        output = raw.get("outputSchema")
        try:
            bindings = header_bindings(schema)
        except ValueError as exc:
            raise ValueError(f"tool {name!r}: inputSchema {exc}") from exc
        return cls(
            name=name,
            description=_str(raw, "description") or "",
            input_schema=dict(schema),
            output_schema=dict(output) if isinstance(output, dict) else None,
            title=_str(raw, "title"),
            annotations=_dict(raw, "annotations"),
            meta=_dict(raw, "_meta"),
            icons=_icons(raw),
            execution=_dict(raw, "execution"),
            header_bindings=bindings,
            extra=_extra(raw, _TOOL_KEYS),
        )

    def to_wire(self) -> dict[str, Any]:
        """The definition as the server sent it (what a gateway republishes)."""
        return _wire(
            {**self.extra, "name": self.name, "inputSchema": self.input_schema},
            title=self.title,
            description=self.description,
            outputSchema=self.output_schema,
            annotations=self.annotations,
            _meta=self.meta,
            icons=self.icons,
            execution=self.execution,
        )


@dataclass(frozen=True, slots=True)
class MCPResource:
    """One entry of `resources/list`."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    icons: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_wire(cls, raw: dict[str, Any]) -> MCPResource:
        size = raw.get("size")
        return cls(
            uri=str(raw.get("uri", "")),
            name=str(raw.get("name", "")),
            title=_str(raw, "title"),
            description=_str(raw, "description"),
            mime_type=_str(raw, "mimeType"),
            size=size if isinstance(size, int) else None,
            annotations=_dict(raw, "annotations"),
            meta=_dict(raw, "_meta"),
            icons=_icons(raw),
            extra=_extra(raw, _RESOURCE_KEYS),
        )

    def to_wire(self) -> dict[str, Any]:
        """The entry as the server sent it (what a gateway republishes)."""
        return _wire(
            {**self.extra, "uri": self.uri, "name": self.name},
            title=self.title,
            description=self.description,
            mimeType=self.mime_type,
            size=self.size,
            annotations=self.annotations,
            _meta=self.meta,
            icons=self.icons,
        )


@dataclass(frozen=True, slots=True)
class MCPResourceTemplate:
    """One entry of `resources/templates/list` (an RFC 6570 URI template)."""

    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    annotations: dict[str, Any] = field(default_factory=dict)
    icons: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_wire(cls, raw: dict[str, Any]) -> MCPResourceTemplate:
        return cls(
            uri_template=str(raw.get("uriTemplate", "")),
            name=str(raw.get("name", "")),
            title=_str(raw, "title"),
            description=_str(raw, "description"),
            mime_type=_str(raw, "mimeType"),
            meta=_dict(raw, "_meta"),
            annotations=_dict(raw, "annotations"),
            icons=_icons(raw),
            extra=_extra(raw, _TEMPLATE_KEYS),
        )

    def to_wire(self) -> dict[str, Any]:
        return _wire(
            {**self.extra, "uriTemplate": self.uri_template, "name": self.name},
            title=self.title,
            description=self.description,
            mimeType=self.mime_type,
            annotations=self.annotations,
            _meta=self.meta,
            icons=self.icons,
        )


@dataclass(frozen=True, slots=True)
class MCPPrompt:
    """One entry of `prompts/list`; `arguments` are `{name, description, required}` dicts."""

    name: str
    title: str | None = None
    description: str | None = None
    arguments: list[dict[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    icons: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_wire(cls, raw: dict[str, Any]) -> MCPPrompt:
        arguments = raw.get("arguments")
        return cls(
            name=str(raw.get("name", "")),
            title=_str(raw, "title"),
            description=_str(raw, "description"),
            arguments=[a for a in arguments if isinstance(a, dict)]
            if isinstance(arguments, list)
            else [],
            meta=_dict(raw, "_meta"),
            icons=_icons(raw),
            extra=_extra(raw, _PROMPT_KEYS),
        )

    def to_wire(self) -> dict[str, Any]:
        return _wire(
            {**self.extra, "name": self.name},
            title=self.title,
            description=self.description,
            arguments=self.arguments,
            _meta=self.meta,
            icons=self.icons,
        )


@dataclass(frozen=True, slots=True)
class MCPPromptMessage:
    role: str
    content: Content


@dataclass(frozen=True, slots=True)
class MCPPromptResult:
    """The answer of `prompts/get`."""

    messages: list[MCPPromptMessage]
    description: str | None = None


def content_from_wire(raw: Any) -> Content:
    """One MCP content block as a tool-core content part, its `annotations` and `_meta` kept
    (unknown kinds become text)."""
    if not isinstance(raw, dict):
        return TextContent(str(raw))
    kind = raw.get("type")
    extras: dict[str, Any] = {
        "annotations": _dict(raw, "annotations") or None,
        "meta": _dict(raw, "_meta") or None,
    }
    if kind == "text":
        return TextContent(str(raw.get("text", "")), **extras)
    if kind == "image":
        data, mime = str(raw.get("data", "")), str(raw.get("mimeType", "image/png"))
        return ImageContent(data, mime, **extras)
    if kind == "audio":
        return AudioContent(
            str(raw.get("data", "")), str(raw.get("mimeType", "audio/wav")), **extras
        )
    if kind == "resource":
        inner = raw.get("resource")
        embedded = resource_from_wire(inner if isinstance(inner, dict) else {})
        return dataclasses.replace(embedded, annotations=extras["annotations"], meta=extras["meta"])
    if kind == "resource_link":
        size = raw.get("size")
        return ResourceLink(
            uri=str(raw.get("uri", "")),
            name=str(raw.get("name", "")),
            title=_str(raw, "title"),
            description=_str(raw, "description"),
            mime_type=_str(raw, "mimeType"),
            size=size if isinstance(size, int) and not isinstance(size, bool) else None,
            **extras,
        )
    return TextContent(str(raw))


def resource_from_wire(raw: dict[str, Any]) -> ResourceContent:
    """Embedded resource contents (`text` or base64 `blob`), with their `_meta`."""
    return ResourceContent(
        uri=str(raw.get("uri", "")),
        mime_type=_str(raw, "mimeType"),
        text=_str(raw, "text"),
        blob=_str(raw, "blob"),
        name=_str(raw, "name"),
        meta=_dict(raw, "_meta") or None,
    )


def tool_result_from_wire(raw: dict[str, Any]) -> ToolResult:
    """A `CallToolResult` as a `ToolResult`; `isError` stays a result, not an exception."""
    content = raw.get("content")
    parts = [content_from_wire(item) for item in content] if isinstance(content, list) else []
    metadata: dict[str, Any] = {}
    meta = raw.get("_meta")
    if isinstance(meta, dict):
        metadata["meta"] = meta
    return ToolResult(
        content=parts,
        structured=raw.get("structuredContent"),
        is_error=bool(raw.get("isError", False)),
        metadata=metadata,
    )
