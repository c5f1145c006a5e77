"""Turn what a model sent as arguments into a dict.

Models send a dict, a JSON string, or broken JSON (single quotes, trailing commas, code fences,
Python literals, truncated objects, an object encoded twice). The strict parser (pydantic-core's,
~6x faster than the stdlib's on small objects) is tried first, so well-formed calls never pay
for repair. Then JSON written with Python-isms (`{'a': True,}`) is read exactly through Python's
own parser (never evaluated), because json-repair guesses wrong on single-quoted strings such as
`','`; json-repair handles the rest (truncation, prose around the object, unquoted keys).
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections.abc import Callable
from typing import Any

from toolweave.tools.errors import InvalidArguments

_FENCE = re.compile(r"^\s*```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)
_NOTHING = object()


def parse_arguments(raw: dict[str, Any] | str | bytes | None, tool_name: str) -> dict[str, Any]:
    """The arguments as a dict; raise `InvalidArguments` when they are not a JSON object."""
    if isinstance(raw, dict):
        return raw
    if raw is None:
        return {}
    text = _decode(raw, tool_name) if isinstance(raw, bytes | bytearray) else raw
    if not isinstance(text, str):
        raise InvalidArguments(
            f"Invalid arguments for tool '{tool_name}': expected a JSON object of named "
            f"arguments, got {type(text).__name__}. Send the arguments as an object such as "
            '{"name": value}.',
            tool=tool_name,
        )
    try:
        value = _parse_json(text)
    except ValueError:
        if not text.strip():
            return {}
        value = _repair(text)
        if value is _NOTHING:
            snippet = text if len(text) <= 60 else text[:57] + "..."
            raise InvalidArguments(
                f"Invalid arguments for tool '{tool_name}': {snippet!r} is not JSON and could "
                'not be repaired. Send the arguments as a JSON object such as {"name": value}.',
                tool=tool_name,
            ) from None
    if value is None:
        return {}
    if isinstance(value, str) and value.lstrip().startswith("{"):
        return parse_arguments(value, tool_name)  # JSON encoded twice: a string holding the object
    if not isinstance(value, dict):
        raise InvalidArguments(
            f"Invalid arguments for tool '{tool_name}': expected a JSON object of named "
            f"arguments, got {_json_type(value)}. Send the arguments as an object such as "
            '{"name": value}.',
            tool=tool_name,
        )
    return value


def _decode(raw: bytes | bytearray, tool_name: str) -> str:
    try:
        return raw.decode()
    except UnicodeDecodeError as exc:
        raise InvalidArguments(
            f"Invalid arguments for tool '{tool_name}': the bytes are not UTF-8 ({exc.reason} at "
            f"byte {exc.start}). Send the arguments as UTF-8 JSON text.",
            tool=tool_name,
        ) from None


def _first_parse(text: str) -> Any:
    """Bind the fast parser on first use: pydantic-core costs ~20 ms to import, which layers
    that only need errors or results (an MCP server answering `initialize`) should not pay."""
    global _parse_json
    from pydantic_core import from_json

    _parse_json = from_json
    return from_json(text)


_parse_json: Callable[[str], Any] = _first_parse


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


def _repair(text: str) -> Any:
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
        if not text.strip():
            return None  # an empty code block: no arguments
    value = _python_literal(text)
    if value is not _NOTHING:
        return value
    value = repair_json(text)
    if value == "" and text.strip() not in ('""', "''"):
        return _NOTHING
    return value


_NAMES = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}


def _python_literal(text: str) -> Any:
    """JSON or a Python literal of JSON values (any quotes, trailing commas, True/None), or
    `_NOTHING`. Parsed with `ast`, never evaluated."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes such as "\/" warn in Python
            tree = ast.parse(text.strip(), mode="eval")
        return _literal_value(tree.body)
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        return _NOTHING


def _literal_value(node: ast.expr) -> Any:
    if isinstance(node, ast.Constant):
        if node.value is None or isinstance(node.value, str | int | float):
            return node.value
    elif isinstance(node, ast.Name) and node.id in _NAMES:
        return _NAMES[node.id]
    elif (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub | ast.UAdd)
        and isinstance(node.operand, ast.Constant)
    ):
        number = node.operand.value
        if isinstance(number, int | float) and not isinstance(number, bool):
            return -number if isinstance(node.op, ast.USub) else number
    elif isinstance(node, ast.List | ast.Tuple):
        return [_literal_value(item) for item in node.elts]
    elif isinstance(node, ast.Dict):
        keys = [_literal_value(k) if k is not None else None for k in node.keys]
        if all(isinstance(k, str) for k in keys):
            return dict(zip(keys, (_literal_value(v) for v in node.values), strict=True))
    raise ValueError("not a JSON-like literal")


def repair_json(text: str) -> Any:
    """Best-effort parse of model-written JSON; returns "" when nothing can be recovered."""
    from json_repair import repair_json as _repair_json

    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
        try:
            return json.loads(text)
        except ValueError:
            pass
    return _repair_json(text, return_objects=True, ensure_ascii=False)
