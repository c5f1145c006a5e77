"""Schema dialects, refereed by openai-agents' strict checker and google-genai's Schema type."""

from __future__ import annotations

import copy
import json
import warnings
from typing import Any, Literal

from agents.strict_schema import ensure_strict_json_schema
from google.genai import types
from pydantic import BaseModel, Field

from toolweave.llm import to_gemini_schema, to_openai_strict


class Address(BaseModel):
    street: str
    zip_code: str | None = None


class Node(BaseModel):
    name: str
    children: list[Node] = []


class Order(BaseModel):
    """An order with nested, optional, enum, union and recursive parts."""

    id: int = Field(description="Order number", ge=1)
    note: str | None = None
    status: Literal["new", "paid"] = "new"
    ship_to: Address = Field(description="Where to send it")
    bill_to: Address | None = None
    tags: list[str] = Field(default_factory=list, max_length=5)
    amount: float | int = 0
    tree: Node | None = None


def _objects(node: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if node.get("type") == "object" or "properties" in node:
            found.append(node)
        for value in node.values():
            found.extend(_objects(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_objects(value))
    return found


def test_openai_strict_closes_objects_and_makes_optional_nullable() -> None:
    schema = Order.model_json_schema()
    original = copy.deepcopy(schema)
    strict = to_openai_strict(schema)
    assert schema == original, "the input is never mutated"
    for node in _objects(strict):
        assert node["additionalProperties"] is False
        assert node["required"] == list(node["properties"])
    properties = strict["properties"]
    assert properties["note"]["anyOf"][-1] == {"type": "null"}
    assert properties["tags"]["type"] == ["array", "null"]
    assert properties["id"]["type"] == "integer", "required stays non-nullable"
    assert "$ref" not in json.dumps(properties["ship_to"]) or len(properties["ship_to"]) == 1


def test_openai_strict_output_is_a_fixed_point_of_the_agents_sdk_checker() -> None:
    strict = to_openai_strict(Order.model_json_schema())
    assert ensure_strict_json_schema(copy.deepcopy(strict)) == strict


def test_openai_strict_handles_plain_tool_schemas() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}, "k": {"type": "integer"}}}
    assert to_openai_strict(schema) == {
        "type": "object",
        "properties": {"q": {"type": ["string", "null"]}, "k": {"type": ["integer", "null"]}},
        "required": ["q", "k"],
        "additionalProperties": False,
    }


def test_gemini_schema_inlines_and_drops_unsupported_keywords() -> None:
    gemini = to_gemini_schema(Order.model_json_schema())
    text = json.dumps(gemini)
    for banned in ('"$ref"', '"$defs"', "additionalProperties", '"default"', '"$schema"', "const"):
        assert banned not in text
    properties = gemini["properties"]
    assert properties["ship_to"]["properties"]["street"] == {"type": "STRING", "title": "Street"}
    assert properties["ship_to"]["description"] == "Where to send it"
    assert properties["note"] == {"type": "STRING", "nullable": True, "title": "Note"}
    assert properties["status"]["enum"] == ["new", "paid"]
    assert [v["type"] for v in properties["amount"]["anyOf"]] == ["NUMBER", "INTEGER"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        types.Schema.model_validate_json(text)


def test_gemini_schema_unrolls_recursion_to_a_bounded_depth() -> None:
    gemini = to_gemini_schema(Node.model_json_schema())
    depth, node = 0, gemini
    while "items" in node.get("properties", {}).get("children", {}):
        node = node["properties"]["children"]["items"]
        depth += 1
    assert 1 <= depth <= 10
    assert node["type"] == "OBJECT"


def test_gemini_type_lists_become_nullable() -> None:
    schema = {
        "type": "object",
        "properties": {"x": {"type": ["integer", "null"], "format": "int64"}},
    }
    assert to_gemini_schema(schema)["properties"]["x"] == {
        "type": "INTEGER",
        "nullable": True,
        "format": "int64",
    }


def test_gemini_enums_are_strings_and_empty_objects_stay_bare() -> None:
    schema = {
        "type": "object",
        "properties": {
            "level": {"type": "integer", "enum": [1, 2, 3], "description": "How loud"},
            "mode": {"enum": ["fast", "slow", None]},
            "answer": {"const": 42},
            "extra": {"type": "object", "properties": {}, "additionalProperties": True},
        },
    }
    properties = to_gemini_schema(schema)["properties"]
    assert properties["level"] == {
        "type": "INTEGER",
        "description": "How loud Allowed values: 1, 2, 3.",
    }, "non-string enums would come back as strings and fail validation"
    assert properties["mode"] == {"type": "STRING", "enum": ["fast", "slow"], "nullable": True}
    assert properties["answer"] == {"description": "Allowed values: 42."}
    assert properties["extra"] == {"type": "OBJECT"}, "Gemini rejects empty `properties`"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        types.Schema.model_validate(to_gemini_schema(schema))
