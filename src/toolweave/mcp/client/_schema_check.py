"""A small JSON Schema checker for validating `structuredContent` against a tool's output schema.

The client must reject structured results that contradict the schema the server advertised,
but a full validator (jsonschema and its dependencies) is too heavy for a runtime dependency.
This covers the keywords output schemas use in practice (type, properties, required,
additionalProperties, items, enum, const, numeric and length bounds, anyOf/oneOf/allOf, local
`$ref`); keywords it does not know are ignored, never guessed at. Comparisons are JSON's, not
Python's (`True` is not `1`), and a `$ref` cycle stops instead of recursing without end: the
schema comes from the server, so a hostile or broken one must not crash the client.
"""

from __future__ import annotations

from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
    "number": (int, float),
    "integer": (int,),
}


def _is_type(value: Any, name: str) -> bool:
    if name in ("number", "integer") and isinstance(value, bool):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    expected = _TYPES.get(name)
    return expected is None or isinstance(value, expected)


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any] | None:
    if not ref.startswith("#"):
        return None
    node: Any = root
    for part in ref[1:].split("/"):
        if not part:
            continue
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node if isinstance(node, dict) else None


def json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON Schema defines it: `1 == 1.0`, but a boolean is never a number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def schema_errors(value: Any, schema: Any) -> list[str]:
    """Every violation found, each naming the JSON path; an empty list means valid."""
    return _errors(value, schema, schema, "$", set())


def _errors(
    value: Any, schema: Any, root: Any, path: str, following: set[tuple[str, int]]
) -> list[str]:
    """`following` holds the `$ref`s being followed for a value: meeting one again is a cycle."""
    if schema is True or not isinstance(schema, dict):
        return []
    errors: list[str] = []
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = _resolve(ref, root)
        marker = (ref, id(value))
        if target is not None and marker not in following:
            following.add(marker)
            errors += _errors(value, target, root, path, following)
            following.discard(marker)
    kind = schema.get("type")
    if isinstance(kind, str | list):
        names = [kind] if isinstance(kind, str) else [k for k in kind if isinstance(k, str)]
        if names and not any(_is_type(value, name) for name in names):
            return [f"{path}: expected {' or '.join(names)}, got {type(value).__name__}"]
    enum = schema.get("enum")
    if isinstance(enum, list) and not any(json_equal(value, option) for option in enum):
        errors.append(f"{path}: {value!r} is not one of {enum!r}")
    if "const" in schema and not json_equal(value, schema["const"]):
        errors.append(f"{path}: expected {schema['const']!r}")
    if isinstance(value, dict):
        errors += _object_errors(value, schema, root, path, following)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for index, item in enumerate(value):
                errors += _errors(item, items, root, f"{path}[{index}]", following)
        errors += _bounds(len(value), schema, "minItems", "maxItems", path, "items")
    elif isinstance(value, str):
        errors += _bounds(len(value), schema, "minLength", "maxLength", path, "characters")
    elif isinstance(value, int | float) and not isinstance(value, bool):
        errors += _bounds(value, schema, "minimum", "maximum", path, "")
    for key in ("allOf", "anyOf", "oneOf"):
        options = schema.get(key)
        if not isinstance(options, list):
            continue
        results = [_errors(value, option, root, path, following) for option in options]
        passed = sum(1 for r in results if not r)
        if key == "allOf":
            errors += [e for r in results for e in r]
        elif key == "anyOf" and passed == 0:
            errors.append(f"{path}: matches none of anyOf")
        elif key == "oneOf" and passed != 1:
            errors.append(f"{path}: matches {passed} of oneOf, expected exactly 1")
    return errors


def _object_errors(
    value: dict[str, Any],
    schema: dict[str, Any],
    root: Any,
    path: str,
    following: set[tuple[str, int]],
) -> list[str]:
    errors: list[str] = []
    required = schema.get("required")
    if isinstance(required, list):
        errors += [f"{path}: missing required {k!r}" for k in required if k not in value]
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in properties:
            errors += _errors(item, properties[key], root, f"{path}.{key}", following)
        elif extra is False:
            errors.append(f"{path}: unexpected property {key!r}")
        elif isinstance(extra, dict):
            errors += _errors(item, extra, root, f"{path}.{key}", following)
    return errors


def _bounds(
    size: float, schema: dict[str, Any], low: str, high: str, path: str, unit: str
) -> list[str]:
    errors: list[str] = []
    minimum, maximum = schema.get(low), schema.get(high)
    if isinstance(minimum, int | float) and size < minimum:
        errors.append(f"{path}: {size} is below {low} {minimum} {unit}".rstrip())
    if isinstance(maximum, int | float) and size > maximum:
        errors.append(f"{path}: {size} is above {high} {maximum} {unit}".rstrip())
    return errors
