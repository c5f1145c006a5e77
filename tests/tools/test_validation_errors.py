"""The `InvalidArguments` message a model reads after a bad call: every bad field by its path
in the arguments, what was expected and what arrived, with pydantic's union-member tags left
out (they name no field the model could send)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pytest
from pydantic import BaseModel

from toolweave.tools import InvalidArguments, ToolRegistry, tool


@dataclass
class Point:
    x: float
    y: float = 0.0


class Circle(BaseModel):
    radius: float


class Square(BaseModel):
    side: float


def test_invalid_arguments_name_the_field_and_expectation() -> None:
    @tool
    def f(count: int, mode: Literal["a", "b"], point: Point) -> None:
        """Validate."""

    with pytest.raises(InvalidArguments) as info:
        f.schema.validate("f", {"count": "many", "mode": "c", "point": {"x": "?"}, "zzz": 1})
    message = str(info.value)
    assert info.value.recoverable is True
    assert info.value.tool == "f"
    assert "'count': Input should be a valid integer" in message
    assert '(got "many")' in message
    assert "'mode': Input should be 'a' or 'b'" in message
    assert "'point.x'" in message
    assert "'zzz' is not a parameter of this tool" in message
    with pytest.raises(InvalidArguments, match="'count' is required but missing"):
        f.schema.validate("f", {"mode": "a", "point": {"x": 1}})


def _message(func: object, args: dict[str, object]) -> str:
    with pytest.raises(InvalidArguments) as info:
        tool(func).schema.validate("f", args)  # type: ignore[arg-type]
    return info.value.message


def test_union_alternatives_merge_under_the_fields_own_path() -> None:
    def f(
        key: int | str, shape: Circle | Square | None = None, sizes: tuple[int | None, ...] = ()
    ) -> None:
        """Unions at the top, in a model choice and inside a list."""

    message = _message(f, {"key": [1], "shape": {"radius": "big"}, "sizes": [1, "x"]})
    assert "'key': Input should be a valid integer or a valid string (got [1])" in message
    assert "'shape.radius': Input should be a valid number" in message
    assert "'shape.side' is required but missing" in message
    assert "'sizes.1': Input should be a valid integer" in message
    for tag in ("key.int", "key.str", "Circle", "Square", "shape.radius.", "sizes.1.int"):
        assert tag not in message
    # A key the model really sent is kept even when it spells a tag name.
    assert "'key': Input should be a valid integer or a valid string (got {\"int\": 1})" in (
        _message(f, {"key": {"int": 1}})
    )
    # Present fields are never reported missing under a tag-like key.
    message = _message(f, {"key": 1, "shape": {"Circle": {"radius": 1}}})
    assert "'shape.radius' is required but missing" in message
    assert "'shape.Circle'" not in message and "'shape.Circle.radius'" not in message


async def test_the_registry_reports_the_same_message() -> None:
    def f(key: int | str) -> None:
        """One union."""

    registry = ToolRegistry()
    registry.register(tool(f))
    invocation = await registry.invoke("f", '{"key": null}')
    assert isinstance(invocation.error, InvalidArguments)
    assert invocation.error.message == (
        "Invalid arguments for tool 'f': 'key': Input should be a valid integer or a valid "
        "string (got null). Fix these fields to match the tool's parameter schema and call it "
        "again."
    )
