"""JSON Schema as each provider's dialect wants it.

Tools describe themselves in full JSON Schema. OpenAI strict mode accepts only a closed
subset (every property required, optional ones expressed as nullable, no extra properties);
Gemini's `parameters` take an OpenAPI 3.0 subset without references, defaults or
`additionalProperties`. Both transformers work on copies and never mutate the input.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from toolweave.errors import ConfigError

_GEMINI_KEYS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "items",
        "properties",
        "required",
        "anyOf",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "minProperties",
        "maxProperties",
        "pattern",
        "propertyOrdering",
    }
)
_GEMINI_STRING_FORMATS = frozenset({"enum", "date-time"})
_MAX_INLINE_DEPTH = 8
"""Recursive `$ref`s are unrolled this many levels, then left as a plain object."""


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any]:
    if not ref.startswith("#/"):
        raise ConfigError(f"only local $ref values are supported, got {ref!r}")
    node: Any = root
    for key in ref[2:].split("/"):
        node = node[key.replace("~1", "/").replace("~0", "~")]
    if not isinstance(node, dict):
        raise ConfigError(f"$ref {ref!r} does not point to a schema object")
    return node


def to_openai_strict(schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAI strict mode: closed objects, all properties required, optional -> nullable."""
    result = copy.deepcopy(schema)
    _strict(result, result)
    return result


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    kind = node.get("type")
    if isinstance(kind, str) and "enum" not in node:
        return {**node, "type": [kind, "null"]} if kind != "null" else node
    if isinstance(kind, list):
        return node if "null" in kind else {**node, "type": [*kind, "null"]}
    variants = node.get("anyOf")
    if isinstance(variants, list):
        if any(v.get("type") == "null" for v in variants if isinstance(v, dict)):
            return node
        return {**node, "anyOf": [*variants, {"type": "null"}]}
    return {"anyOf": [node, {"type": "null"}]}


def _strict(node: Any, root: dict[str, Any]) -> None:
    if isinstance(node, list):
        for item in node:
            _strict(item, root)
        return
    if not isinstance(node, dict):
        return
    if "oneOf" in node:
        node["anyOf"] = node.pop("oneOf")
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
        node.pop("allOf")
        node.update({k: v for k, v in all_of[0].items() if k not in node})
    if "$ref" in node and len(node) > 1:
        # Strict mode forbids siblings next to $ref: inline the target.
        target = copy.deepcopy(_resolve(node.pop("$ref"), root))
        node.update({k: v for k, v in target.items() if k not in node})
    if node.get("default", 0) is None:
        node.pop("default")
    for key in ("$defs", "definitions"):
        for sub in (node.get(key) or {}).values():
            _strict(sub, root)
    for key in ("items", "anyOf", "allOf", "prefixItems", "not"):
        if key in node:
            _strict(node[key], root)
    properties = node.get("properties")
    if node.get("type") == "object" or isinstance(properties, dict):
        properties = properties if isinstance(properties, dict) else {}
        node["properties"] = properties
        required = set(node.get("required", []))
        for name, sub in list(properties.items()):
            _strict(sub, root)
            if name not in required and isinstance(sub, dict):
                properties[name] = _nullable(sub)
        node["required"] = list(properties)
        node["additionalProperties"] = False


def to_gemini_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Gemini `parameters`: references inlined, unsupported keywords dropped, types upper-case."""
    return _gemini(schema, schema, 0)


def _gemini(node: Any, root: dict[str, Any], depth: int) -> dict[str, Any]:
    if not isinstance(node, dict):
        return {}
    if "$ref" in node:
        if depth >= _MAX_INLINE_DEPTH:
            return {"type": "OBJECT", "description": node.get("description", "")}
        target = _resolve(node["$ref"], root)
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _gemini(merged, root, depth + 1)
    node = dict(node)
    if "const" in node:
        node["enum"] = [node.pop("const")]
    if "oneOf" in node:
        node["anyOf"] = node.pop("oneOf")
    all_of = node.pop("allOf", None)
    if isinstance(all_of, list):
        for part in all_of:
            resolved = _gemini(part, root, depth + 1)
            node.update({k: v for k, v in resolved.items() if k not in node})
    out: dict[str, Any] = {}
    kind = node.get("type")
    if isinstance(kind, list):
        non_null = [k for k in kind if k != "null"]
        if len(non_null) < len(kind):
            out["nullable"] = True
        if len(non_null) == 1:
            kind = non_null[0]
        else:
            node["anyOf"] = [{**node, "type": k} for k in non_null]
            kind = None
    variants = node.get("anyOf")
    if isinstance(variants, list):
        kept = [v for v in variants if not (isinstance(v, dict) and v.get("type") == "null")]
        if len(kept) < len(variants):
            out["nullable"] = True
        if len(kept) == 1:
            inner = _gemini(kept[0], root, depth + 1)
            for key in ("description", "title"):
                if key in node:
                    inner[key] = node[key]
            return {**inner, **out}
        out["anyOf"] = [_gemini(v, root, depth + 1) for v in kept]
    if isinstance(kind, str):
        out["type"] = kind.upper()
    for key, value in node.items():
        if key not in _GEMINI_KEYS or key in ("type", "anyOf"):
            continue
        if key == "properties" and isinstance(value, dict):
            if value:  # Gemini rejects an empty `properties`; a bare OBJECT is accepted
                out[key] = {name: _gemini(sub, root, depth + 1) for name, sub in value.items()}
        elif key == "items":
            out[key] = _gemini(value, root, depth + 1)
        elif key == "enum":
            continue  # after the loop: it may rewrite the description
        elif key == "format" and kind == "string" and value not in _GEMINI_STRING_FORMATS:
            continue
        else:
            out[key] = value
    if isinstance(node.get("enum"), list):
        _gemini_enum(out, [v for v in node["enum"] if v is not None])
        if None in node["enum"]:
            out["nullable"] = True
    return out


def _gemini_enum(out: dict[str, Any], values: list[Any]) -> None:
    """Gemini enums are string-only. Other enums keep their type and name the allowed values
    in the description: sent as strings they would come back as strings and fail validation.
    """
    if all(isinstance(v, str) for v in values):
        out["enum"] = values
        out["type"] = "STRING"
        return
    allowed = "Allowed values: " + ", ".join(json.dumps(v) for v in values) + "."
    out["description"] = f"{out['description']} {allowed}" if out.get("description") else allowed


def strip_for_gemini_json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`parametersJsonSchema`/`responseJsonSchema` take real JSON Schema; only `$schema` goes."""
    return {k: v for k, v in schema.items() if k != "$schema"}
