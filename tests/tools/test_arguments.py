"""Arguments as models send them: dicts, JSON text, and JSON with the quirks models produce
(single quotes, trailing commas, code fences, Python literals), repaired before validation."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolweave.tools import InvalidArguments, ToolRegistry, parse_arguments, repair_json, tool


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"a": 1}, {"a": 1}),
        ('{"a": 1}', {"a": 1}),
        (b'{"a": 1}', {"a": 1}),
        (None, {}),
        ("", {}),
        ("   ", {}),
        ("null", {}),
        ("{'a': 1, 'b': 'x'}", {"a": 1, "b": "x"}),
        ('{"a": [1, 2,], "b": 3,}', {"a": [1, 2], "b": 3}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ("```\n{'a': 1,}\n```", {"a": 1}),
        ("```json\n```", {}),
        ("{a: True, b: None, c: False}", {"a": True, "b": None, "c": False}),
        ('{"city": "北京", "note": "it\'s"}', {"city": "北京", "note": "it's"}),
        ('{"a": 1', {"a": 1}),
        ('Sure, here are the arguments: {"a": 1}', {"a": 1}),
        (json.dumps(json.dumps({"a": 1, "b": "x"})), {"a": 1, "b": "x"}),
        ("\"{'a': 1,}\"", {"a": 1}),
    ],
)
def test_parse_and_repair(raw: Any, expected: dict[str, Any]) -> None:
    assert parse_arguments(raw, "t") == expected


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ("[1, 2]", "got an array"),
        ('"text"', "got a string"),
        ("3", "got a number"),
        ("true", "got a boolean"),
        ("hello there", "is not JSON and could not be repaired"),
        (5, "got int"),
        (b'{"a": "\xff"}', "the bytes are not UTF-8"),
    ],
)
def test_non_objects_are_invalid_arguments(raw: Any, fragment: str) -> None:
    with pytest.raises(InvalidArguments) as info:
        parse_arguments(raw, "calc")
    assert fragment in info.value.message
    assert "tool 'calc'" in info.value.message
    assert info.value.recoverable


def test_dict_input_is_passed_through_untouched() -> None:
    args = {"a": [1]}
    assert parse_arguments(args, "t") is args


def test_repair_json_returns_empty_string_when_hopeless() -> None:
    assert repair_json("no json here") == ""
    assert repair_json("```json\n[1, 2,]\n```") == [1, 2]


async def test_registry_repairs_before_validation() -> None:
    @tool
    def add(a: int, b: int = 0) -> int:
        """Add two integers."""
        return a + b

    registry = ToolRegistry()
    registry.register(add)
    invocation = await registry.invoke("add", "```json\n{'a': 2, 'b': 3,}\n```")
    assert invocation.ok
    assert invocation.result.structured == 5
    assert invocation.args == {"a": 2, "b": 3}
    broken = await registry.invoke("add", "[2, 3]")
    assert isinstance(broken.error, InvalidArguments)


# -- property: model-style serialisation quirks are undone exactly ----------------------------

# Strings a model would quote without escapes: no quotes, backslashes or control characters.
_SAFE_TEXT = st.text(
    alphabet=st.characters(
        categories=["L", "N", "Zs"], include_characters="-_.,:;!?()@#/", exclude_characters="'\""
    ),
    max_size=12,
)
_KEYS = _SAFE_TEXT.filter(lambda k: k.strip() == k and k != "")
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _SAFE_TEXT
)
_VALUES = st.recursive(
    _SCALARS,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_KEYS, children, max_size=3),
    max_leaves=10,
)
_OBJECTS = st.dictionaries(_KEYS, _VALUES, min_size=1, max_size=5)


def quirky_dumps(value: Any, quote: str, trailing_comma: bool, python_literals: bool) -> str:
    """Serialise like a sloppy model: chosen quote, trailing commas, True/None literals."""
    if value is None:
        return "None" if python_literals else "null"
    if value is True or value is False:
        return str(value) if python_literals else json.dumps(value)
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, str):
        return f"{quote}{value}{quote}"
    comma = "," if trailing_comma else ""
    if isinstance(value, list):
        items = [quirky_dumps(v, quote, trailing_comma, python_literals) for v in value]
        return "[" + ", ".join(items) + (comma if items else "") + "]"
    pairs = [
        f"{quote}{k}{quote}: {quirky_dumps(v, quote, trailing_comma, python_literals)}"
        for k, v in value.items()
    ]
    return "{" + ", ".join(pairs) + (comma if pairs else "") + "}"


@settings(max_examples=300, deadline=None)
@given(
    value=_OBJECTS,
    quote=st.sampled_from(['"', "'"]),
    trailing_comma=st.booleans(),
    python_literals=st.booleans(),
    fence=st.sampled_from(["", "```json\n{}\n```", "```\n{}\n```", "  {}  \n"]),
)
def test_repair_undoes_model_quirks(
    value: dict[str, Any], quote: str, trailing_comma: bool, python_literals: bool, fence: str
) -> None:
    text = quirky_dumps(value, quote, trailing_comma, python_literals)
    if fence:
        text = fence.replace("{}", text)
    assert parse_arguments(text, "t") == value
