"""Turn tool invocations (and final-answer calls) into the `ToolResultPart`s the model reads.

Tool output is capped at the run's budget and wrapped as data, not instructions
(`toolweave.tools.shape_result`); with saved results on (`ContextEconomy`), a longer text is
saved whole first (`result_pages.py`) and the model reads its head, tail and handle. The loop's
own error texts (recovery hints, "not executed") are capped but not wrapped, since they come
from us and must be read as guidance.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave.llm import ImagePart, Message, TextPart, ToolCallPart, ToolResultPart
from toolweave.tools import (
    AudioContent,
    Content,
    ImageContent,
    ResourceContent,
    ResourceLink,
    TextContent,
    ToolInvocation,
    ToolResult,
    shape_result,
    truncate_text,
)

if TYPE_CHECKING:
    from toolweave.agent._run.result_pages import ResultPages
    from toolweave.agent.errors import OutputValidationError
    from toolweave.agent.output import OutputSpec

_EMPTY = "(the tool returned no output)"


def error_part(
    call: ToolCallPart, text: str, max_chars: int, *, is_error: bool = True
) -> ToolResultPart:
    return ToolResultPart(call.id, call.name, truncate_text(text, max_chars), is_error=is_error)


def result_part(
    call: ToolCallPart,
    inv: ToolInvocation,
    max_chars: int,
    pages: ResultPages | None = None,
    session_id: str | None = None,
) -> ToolResultPart:
    """What the model reads of a finished call: the result capped at `max_chars`; with `pages`,
    a longer text is saved whole and the model reads its head, its tail and the handle."""
    if inv.error is not None:
        return error_part(call, inv.error.message, max_chars)
    result = inv.result
    content: list[Content] = [_textual(c) for c in result.content] or [TextContent(_EMPTY)]
    notice = None
    if pages is not None:
        content, notice = pages.spill(session_id, call.name, content, max_chars)
    shaped = shape_result(ToolResult(content=content), call.name, max_chars)
    if notice is not None:  # ours, so read as guidance: outside the data boundary
        shaped.content.append(TextContent(notice))
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
    if isinstance(item, ResourceLink):
        label = item.title or item.name
        return TextContent(
            f"[resource link {item.uri} ({label}, {item.mime_type or 'unknown type'})]"
        )
    assert isinstance(item, AudioContent)
    return TextContent(f"[audio ({item.mime_type}) omitted: this model reads no audio]")


def acceptance(
    calls: list[ToolCallPart], output_call: ToolCallPart | None, max_chars: int
) -> list[Message]:
    """Answers to a turn whose final-output call was valid: one tool message per call."""
    if output_call is None:
        return []
    return [
        Message(
            "tool",
            [
                error_part(
                    call,
                    "Final answer accepted."
                    if call is output_call
                    else "Not executed: the final answer was given in the same turn.",
                    max_chars,
                    is_error=False,
                )
            ],
        )
        for call in calls
    ]


def rejection(
    spec: OutputSpec | None,
    calls: list[ToolCallPart],
    output_call: ToolCallPart | None,
    exc: OutputValidationError,
    max_chars: int,
) -> list[Message]:
    """What asks the model to correct an invalid answer: the error as the final-output call's
    result, or (for a text answer) a user message with the error and the schema."""
    assert spec is not None
    if output_call is None:
        return [Message.user(spec.retry_message(exc))]
    return [
        Message(
            "tool",
            [
                error_part(
                    call,
                    f"Invalid final answer: {exc}. Call {spec.name} again with corrected arguments."
                    if call is output_call
                    else f"Not executed: call other tools in a turn without {spec.name}.",
                    max_chars,
                )
            ],
        )
        for call in calls
    ]
