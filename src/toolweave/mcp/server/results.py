"""Result helpers for MCP tools and the one place a `ToolResult` becomes a wire `CallToolResult`.

The forge contract separates two failure kinds: a domain error the model should see and fix
(`error_result`, `isError: true`, the agent loop goes on) and an infrastructure failure, which
travels as a JSON-RPC error instead. Keeping the conversion here means every transport and the
in-memory test client produce byte-identical results.
"""

from __future__ import annotations

import base64
from typing import Any

from toolweave.mcp.shared.constants import PROBE_ALWAYS, PROBE_PATTERNS
from toolweave.tools.result import (
    AudioContent,
    Content,
    ImageContent,
    ResourceContent,
    ResourceLink,
    TextContent,
    ToolResult,
)

#: `ToolResult.metadata` key whose dict is sent as the result's `_meta`.
META_KEY = "_meta"


def text_result(text: str) -> ToolResult:
    """A successful result with one text part."""
    return ToolResult(content=[TextContent(text)])


def error_result(text: str) -> ToolResult:
    """A domain error the model sees (`isError: true`); the agent loop goes on.

    Use it for "not found", "invalid date" and similar outcomes the model can act on. Raise an
    exception only for infrastructure failures.
    """
    return ToolResult(content=[TextContent(text)], is_error=True)


def image_result(
    data: bytes | str, mime_type: str = "image/png", *, text: str | None = None
) -> ToolResult:
    """An image result; `data` is raw bytes or already base64-encoded text.

    `text` adds a caption part before the image for models that cannot see images.
    """
    encoded = base64.b64encode(data).decode("ascii") if isinstance(data, bytes) else data
    content: list[Content] = [TextContent(text)] if text is not None else []
    content.append(ImageContent(data=encoded, mime_type=mime_type))
    return ToolResult(content=content)


def probe_result(patterns: list[str], always: list[str] | None = None) -> ToolResult:
    """The answer to a permission probe: no content, the patterns in `_meta`."""
    meta = {PROBE_PATTERNS: list(patterns), PROBE_ALWAYS: list(always or [])}
    return ToolResult(content=[], metadata={META_KEY: meta})


def content_to_wire(item: Content) -> dict[str, Any]:
    """One content part in MCP's wire form, with its `annotations` and `_meta`."""
    wire = _part_to_wire(item)
    if item.annotations:
        wire["annotations"] = item.annotations
    if item.meta:
        wire["_meta"] = item.meta
    return wire


def _part_to_wire(item: Content) -> dict[str, Any]:
    if isinstance(item, TextContent):
        return {"type": "text", "text": item.text}
    if isinstance(item, ImageContent | AudioContent):
        return {"type": item.type, "data": item.data, "mimeType": item.mime_type}
    if isinstance(item, ResourceLink):
        link: dict[str, Any] = {"type": "resource_link", "uri": item.uri, "name": item.name}
        for key, value in (
            ("title", item.title),
            ("description", item.description),
            ("mimeType", item.mime_type),
            ("size", item.size),
        ):
            if value is not None:
                link[key] = value
        return link
    if isinstance(item, ResourceContent):
        if item.text is None and item.blob is None:
            legacy: dict[str, Any] = {
                "type": "resource_link",
                "uri": item.uri,
                "name": item.name or item.uri,
            }
            if item.mime_type is not None:
                legacy["mimeType"] = item.mime_type
            return legacy
        resource: dict[str, Any] = {"uri": item.uri}
        if item.mime_type is not None:
            resource["mimeType"] = item.mime_type
        if item.text is not None:
            resource["text"] = item.text
        else:
            resource["blob"] = item.blob
        return {"type": "resource", "resource": resource}
    raise TypeError(f"unsupported content part {item!r}")


def content_from_wire(item: dict[str, Any]) -> Content:
    """Parse one wire content part (prompt messages and proxied results use it)."""
    kind = item.get("type")
    if kind == "text":
        return TextContent(str(item.get("text", "")))
    if kind == "image":
        return ImageContent(data=str(item.get("data", "")), mime_type=str(item.get("mimeType")))
    if kind == "audio":
        return AudioContent(data=str(item.get("data", "")), mime_type=str(item.get("mimeType")))
    if kind == "resource":
        res = item.get("resource") or {}
        return ResourceContent(
            uri=str(res.get("uri", "")),
            mime_type=res.get("mimeType"),
            text=res.get("text"),
            blob=res.get("blob"),
        )
    if kind == "resource_link":
        return ResourceLink(uri=str(item.get("uri", "")), name=str(item.get("name", "")))
    raise ValueError(f"unknown MCP content type {kind!r}")


def result_to_wire(result: ToolResult, *, wrap_structured: bool = False) -> dict[str, Any]:
    """A `ToolResult` as a `CallToolResult` dict.

    `structuredContent` must be an object on the wire: a tool whose output schema wraps a
    non-object return type (`-> float`) sends `{"result": value}`; a bare object is sent as is.
    """
    wire: dict[str, Any] = {"content": [content_to_wire(c) for c in result.content]}
    structured = result.structured
    if structured is not None:
        if wrap_structured:
            wire["structuredContent"] = {"result": structured}
        elif isinstance(structured, dict):
            wire["structuredContent"] = structured
    if result.is_error:
        wire["isError"] = True
    meta = result.metadata.get(META_KEY) if result.metadata else None
    if meta:
        wire["_meta"] = meta
    return wire
