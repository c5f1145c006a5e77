"""The client's output-schema checker: JSON (not Python) equality and `$ref` cycles that stop.

A server advertises the `outputSchema`, so the checker must neither accept `True` for `1`
(Python's `True == 1`) nor recurse until RecursionError on a schema that refers to itself.
"""

from __future__ import annotations

from toolweave.mcp.client._schema_check import json_equal, schema_errors


def test_booleans_are_not_numbers_in_enum_and_const() -> None:
    assert schema_errors(True, {"enum": [1]}) == ["$: True is not one of [1]"]
    assert schema_errors(False, {"const": 0}) == ["$: expected 0"]
    assert schema_errors(1, {"enum": [True]}) != []
    assert schema_errors(0, {"const": False}) != []
    assert schema_errors(1, {"enum": [1]}) == []
    assert schema_errors(True, {"const": True}) == []


def test_numbers_compare_mathematically_and_containers_deeply() -> None:
    assert schema_errors(1.0, {"const": 1}) == []
    assert schema_errors([1, True], {"const": [1, 1]}) == ["$: expected [1, 1]"]
    assert schema_errors({"城市": "北京", "ok": 1}, {"const": {"城市": "北京", "ok": True}}) != []
    assert schema_errors({"城市": "北京"}, {"enum": [{"城市": "北京"}, "Paris"]}) == []
    assert not json_equal({"a": 1}, {"a": 1, "b": 2})
    assert not json_equal("1", 1)
    assert not json_equal(None, False)


def test_a_ref_cycle_stops_instead_of_recursing() -> None:
    self_loop = {"$ref": "#"}
    assert schema_errors({"x": 1}, self_loop) == []
    mutual = {
        "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a", "type": "object"}},
        "$ref": "#/$defs/a",
    }
    assert schema_errors({"x": 1}, mutual) == []
    assert schema_errors("not an object", mutual) == ["$: expected object, got str"]
    through_any_of = {"anyOf": [{"$ref": "#"}, {"type": "string"}]}
    assert schema_errors(3, through_any_of) == []


def test_a_recursive_schema_still_checks_every_level() -> None:
    tree = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#"}},
        },
        "required": ["name"],
    }
    good = {"name": "根", "children": [{"name": "leaf", "children": [{"name": "叶"}]}]}
    assert schema_errors(good, tree) == []
    bad = {"name": "root", "children": [{"children": [{"name": 7}]}]}
    assert schema_errors(bad, tree) == [
        "$.children[0]: missing required 'name'",
        "$.children[0].children[0].name: expected string, got int",
    ]
