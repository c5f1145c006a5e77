"""Turn a tool invocation into the `ToolResultPart` the model reads.

Tool output is capped at the run's budget and wrapped as data, not instructions
(`toolweave.tools.shape_result`); the loop's own error texts (recovery hints, "not executed")
are capped but not wrapped, since they come from us and must be read as guidance.
"""

from __future__ import annotations

from toolweave.llm import ImagePart, TextPart, ToolCallPart, ToolResultPart
from toolweave.tools import (
    AudioContent,
    Content,
    ImageContent,
    ResourceContent,
    TextContent,
    ToolInvocation,
    ToolResult,
    shape_result,
    truncate_text,
)

_EMPTY = "(the tool returned no output)"


def error_part(
    call: ToolCallPart, text: str, max_chars: int, *, is_error: bool = True
) -> ToolResultPart:
    return ToolResultPart(call.id, call.name, truncate_text(text, max_chars), is_error=is_error)


def result_part(call: ToolCallPart, inv: ToolInvocation, max_chars: int) -> ToolResultPart:
    if inv.error is not None:
        return error_part(call, inv.error.message, max_chars)
    result = inv.result
    content: list[Content] = [_textual(c) for c in result.content] or [TextContent(_EMPTY)]
    shaped = shape_result(ToolResult(content=content), call.name, max_chars)
    if all(isinstance(c, TextContent) for c in shaped.content):
        text = "\n".join(c.text for c in shaped.content if isinstance(c, TextContent))
        return ToolResultPart(call.id, call.name, text, is_error=result.is_error)
    parts: list[TextPart | ImagePart] = []
    for c in shaped.content:
        if isinstance(c, ImageContent):
            parts.append(ImagePart(data=c.data, mime_type=c.mime_type))
        elif isinstance(c, TextContent):
            parts.append(TextPart(c.text))
    return ToolResultPart(call.id, call.name, parts, is_error=result.is_error)


def _textual(item: Content) -> Content:
    """Everything but images becomes text a model can read (and the budget can cap)."""
    if isinstance(item, TextContent | ImageContent):
        return item
    if isinstance(item, ResourceContent):
        if item.text is not None:
            return TextContent(item.text)
        kind = "binary " if item.blob is not None else ""
        return TextContent(f"[{kind}resource {item.uri} ({item.mime_type or 'unknown type'})]")
    assert isinstance(item, AudioContent)
    return TextContent(f"[audio ({item.mime_type}) omitted: this model reads no audio]")
