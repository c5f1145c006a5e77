"""Small conversions every adapter needs: call ids, argument parsing, images, system text.

Kept in one place so the four adapters agree on edge cases (broken argument JSON, missing
ids, tool results that are not JSON).
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

from toolweave.llm.messages import (
    ImagePart,
    Message,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from toolweave.tools import InvalidArguments, parse_arguments

logger = logging.getLogger("toolweave.llm")
OPENAI_URL = "https://api.openai.com/"
"""OpenAI's own API: the only server `prompt_cache_key` is sent to unless asked."""
TEXT_SEPARATOR = "\n\n"
"""Between the text parts of one message where a provider takes a single string: a blank line,
so "What does this file describe?" and the file stay two paragraphs."""


def new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def tool_call(
    call_id: str | None, name: str, raw: Any, provider_data: dict[str, Any] | None = None
) -> ToolCallPart:
    """A `ToolCallPart` from wire arguments (dict or JSON text, repaired when broken).

    Arguments that are not an object are kept verbatim in `provider_data["raw_arguments"]`
    with empty `arguments`, so the tool's own validation tells the model what went wrong.
    """
    data = dict(provider_data or {})
    try:
        arguments = parse_arguments(raw, name)
    except InvalidArguments:
        arguments = {}
        data["raw_arguments"] = raw if isinstance(raw, str) else json.dumps(raw)
    return ToolCallPart(call_id or new_call_id(), name, arguments, data)


def arguments_json(call: ToolCallPart) -> str:
    """The arguments as the model should see them echoed back."""
    raw = call.provider_data.get("raw_arguments")
    if isinstance(raw, str):
        return raw
    return json.dumps(call.arguments, ensure_ascii=False)


def image_url(image: ImagePart) -> str:
    if image.url:
        return image.url
    return f"data:{image.mime_type};base64,{image.data or ''}"


def result_images(result: ToolResultPart) -> list[ImagePart]:
    if isinstance(result.content, str):
        return []
    return [p for p in result.content if isinstance(p, ImagePart)]


def joined_text(message: Message) -> str:
    """The message's text parts as one string, a blank line between parts."""
    return TEXT_SEPARATOR.join(p.text for p in message.parts if isinstance(p, TextPart) and p.text)


def system_text(messages: list[Message]) -> str:
    return TEXT_SEPARATOR.join(
        text for m in messages if m.role == "system" and (text := joined_text(m))
    )


def skipped(provider: str, what: str, kind: object) -> None:
    """Log (at debug) a block, item or event this adapter does not read, and carry on."""
    logger.debug("%s: skipped unknown %s %r", provider, what, kind)


def foreign_note(message: Message, provider: str) -> str | None:
    """A note standing in for provider-run tool parts another provider made, or None.

    Such parts are the other provider's own wire data and would be refused here, so they are
    left out; the note tells the model that something ran which it cannot see.
    """
    foreign = sorted(
        {f"{p.provider} {p.tool}" for p in message.provider_tools if p.provider != provider}
    )
    if not foreign:
        return None
    names = ", ".join(foreign)
    return f"[Provider-run tools left out of this history (another provider ran them): {names}]"


def tool_result_value(result: ToolResultPart) -> Any:
    """Tool output as a JSON value: parsed when the text is JSON, the text otherwise."""
    text = result.text
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text
