"""A small JSON Schema checker for validating `structuredContent` against a tool's output schema.

The client must reject structured results that contradict the schema the server advertised,
but a full validator (jsonschema and its dependencies) is too heavy for a runtime dependency.
This covers the keywords output schemas use in practice (type, properties, required,
additionalProperties, items, enum, const, numeric and length bounds, anyOf/oneOf/allOf, local
`$ref`); keywords it does not know are ignored, never guessed at.
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


def schema_errors(value: Any, schema: Any, root: Any = None, path: str = "$") -> list[str]:
    """Every violation found, each naming the JSON path; an empty list means valid."""
    if schema is True or not isinstance(schema, dict):
        return []
    root = schema if root is None else root
    errors: list[str] = []
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = _resolve(ref, root)
        if target is not None:
            errors += schema_errors(value, target, root, path)
    kind = schema.get("type")
    if isinstance(kind, str | list):
        names = [kind] if isinstance(kind, str) else [k for k in kind if isinstance(k, str)]
        if names and not any(_is_type(value, name) for name in names):
            return [f"{path}: expected {' or '.join(names)}, got {type(value).__name__}"]
    if "enum" in schema and isinstance(schema["enum"], list) and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} is not one of {schema['enum']!r}")
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: expected {schema['const']!r}")
    if isinstance(value, dict):
        errors += _object_errors(value, schema, root, path)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for index, item in enumerate(value):
                errors += schema_errors(item, items, root, f"{path}[{index}]")
        errors += _bounds(len(value), schema, "minItems", "maxItems", path, "items")
    elif isinstance(value, str):
        errors += _bounds(len(value), schema, "minLength", "maxLength", path, "characters")
    elif isinstance(value, int | float) and not isinstance(value, bool):
        errors += _bounds(value, schema, "minimum", "maximum", path, "")
    for key in ("allOf", "anyOf", "oneOf"):
        options = schema.get(key)
        if not isinstance(options, list):
            continue
        results = [schema_errors(value, option, root, path) for option in options]
        passed = sum(1 for r in results if not r)
        if key == "allOf":
            errors += [e for r in results for e in r]
        elif key == "anyOf" and passed == 0:
            errors.append(f"{path}: matches none of anyOf")
        elif key == "oneOf" and passed != 1:
            errors.append(f"{path}: matches {passed} of oneOf, expected exactly 1")
    return errors


def _object_errors(
    value: dict[str, Any], schema: dict[str, Any], root: Any, path: str
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
            errors += schema_errors(item, properties[key], root, f"{path}.{key}")
        elif extra is False:
            errors.append(f"{path}: unexpected property {key!r}")
        elif isinstance(extra, dict):
            errors += schema_errors(item, extra, root, f"{path}.{key}")
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
