"""Custom headers from tool parameters (SEP-2243, 2026-07-28 Streamable HTTP).

A tool's `inputSchema` may mark a top-level property with `"x-mcp-header": "Region"`; a client
calling that tool over HTTP then mirrors the argument into an `Mcp-Param-Region` header, so a
gateway or load balancer can route on it without reading the body. The rules, from the
specification's transport page:

- the name is a non-empty RFC 9110 token, unique case-insensitively within the tool, and only a
  `string`, `integer` or `boolean` property may carry it (a `number`, an object, an array or a
  null is an error); a tool with an invalid declaration is excluded with a warning, the others
  are kept;
- a null or absent argument sends no header; an integer goes in decimal, a boolean as
  `true`/`false`; a value that is not plain printable ASCII (0x20-0x7E), has leading or
  trailing whitespace, or itself looks like the sentinel travels as `=?base64?<UTF-8 bytes>?=`.
  The same encoding applies to `Mcp-Name`.
"""

from __future__ import annotations

import base64
import re
from typing import Any

#: The schema keyword that designates a parameter to mirror.
HEADER_KEYWORD = "x-mcp-header"
#: Prefix of a mirrored parameter's header name.
PARAM_HEADER_PREFIX = "Mcp-Param-"
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_SENTINEL = re.compile(r"^=\?base64\?.*\?=$", re.DOTALL)
_HEADER_TYPES = ("string", "integer", "boolean")


def header_bindings(schema: Any) -> dict[str, str]:
    """`{property: header name}` for the `x-mcp-header` declarations of one `inputSchema`.

    Raises `ValueError` naming the property and the rule it breaks; the caller skips the tool.
    """
    if not isinstance(schema, dict):
        return {}
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    bindings: dict[str, str] = {}
    seen: dict[str, str] = {}
    for prop, spec in properties.items():
        if not isinstance(spec, dict) or HEADER_KEYWORD not in spec:
            continue
        name = spec[HEADER_KEYWORD]
        where = f"property {prop!r}: {HEADER_KEYWORD} {name!r}"
        if not isinstance(name, str) or not name:
            raise ValueError(f"{where} must be a non-empty string")
        if not _TOKEN.match(name):
            raise ValueError(
                f"{where} must be an HTTP token (ASCII letters, digits and !#$%&'*+-.^_`|~; "
                f"no spaces, colons or control characters)"
            )
        if spec.get("type") not in _HEADER_TYPES:
            raise ValueError(
                f"{where} is on a {spec.get('type')!r} property; only string, integer and "
                f"boolean parameters may be mirrored"
            )
        other = seen.get(name.lower())
        if other is not None:
            raise ValueError(f"{where} repeats the header of property {other!r}")
        seen[name.lower()] = prop
        bindings[prop] = name
    return bindings


def encode_header_value(value: str) -> str:
    """`value` as it may ride in an HTTP header: plain when safe, else the base64 sentinel."""
    plain = all(0x20 <= ord(ch) <= 0x7E for ch in value)
    if plain and value == value.strip() and not _SENTINEL.match(value):
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode('ascii')}?="


def param_headers(bindings: dict[str, str], arguments: dict[str, Any]) -> dict[str, str]:
    """The `Mcp-Param-*` headers of one call; null and absent arguments send none."""
    headers: dict[str, str] = {}
    for prop, name in bindings.items():
        value = arguments.get(prop)
        if value is None:
            continue
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, (int, float, str)):
            text = str(value)
        else:
            continue  # a structured value cannot be mirrored; the server reads the body
        headers[PARAM_HEADER_PREFIX + name] = encode_header_value(text)
    return headers
