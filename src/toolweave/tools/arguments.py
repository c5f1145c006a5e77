"""Turn what a model sent as arguments into a dict.

Models send a dict, a JSON string, or broken JSON (single quotes, trailing commas, code fences,
truncated objects). The strict parser is tried first; json-repair only on failure.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .errors import InvalidArguments

_FENCE = re.compile(r"^\s*```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)


def parse_arguments(raw: dict[str, Any] | str | bytes | None, tool_name: str) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if raw is None:
        return {}
    text = raw.decode() if isinstance(raw, bytes) else raw
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        value = repair_json(text)
    if value is None or value == "":
        return {}
    if not isinstance(value, dict):
        raise InvalidArguments(
            f"Invalid arguments for tool '{tool_name}': expected a JSON object of named "
            f"arguments, got {type(value).__name__}. Send the arguments as an object such as "
            '{"name": value}.',
            tool=tool_name,
        )
    return value


def repair_json(text: str) -> Any:
    """Best-effort parse of model-written JSON; returns "" when nothing can be recovered."""
    from json_repair import repair_json as _repair

    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
        try:
            return json.loads(text)
        except ValueError:
            pass
    return _repair(text, return_objects=True, ensure_ascii=False)
