"""Custom request headers (SEP-2243): tool arguments a client mirrors into `Mcp-Param-*` headers.

A tool marks an argument with `"x-mcp-header": "Region"` in its input schema (the toolkit's
`header_params={"region": "Region"}` does it), and a 2026-07-28 client then sends the argument's
value in `Mcp-Param-Region` too, so a load balancer or gateway can route on it without reading
the body. A value that is not plain visible ASCII travels base64-encoded as `=?base64?...?=`.

The server must not trust a header the body contradicts: a call whose header is missing while
the body has a value, whose base64 is malformed, or whose value differs from the body's, is
refused with HTTP 400 and -32020 (HeaderMismatch), before the tool runs.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolweave.mcp.shared.errors import HEADER_MISMATCH

if TYPE_CHECKING:  # starlette loads only with the HTTP transport
    from starlette.requests import Request
    from starlette.responses import Response

HEADER_KEY = "x-mcp-header"
#: What a header-name suffix may contain: an HTTP token without the characters proxies mangle.
_HEADER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,63}$")
_PRIMITIVES = {"string", "number", "integer", "boolean"}


def annotate_schema(
    tool: str, schema: dict[str, Any], header_params: Mapping[str, str]
) -> dict[str, Any]:
    """`schema` with `x-mcp-header` on each named property; a bad mapping is a ValueError that
    names the property and the fix."""
    annotated = copy.deepcopy(schema)
    properties = annotated.get("properties") or {}
    seen: dict[str, str] = {}
    for prop, header in header_params.items():
        spec = properties.get(prop)
        if not isinstance(spec, dict):
            raise ValueError(
                f"tool {tool!r}: header_params names {prop!r}, which is not one of its "
                f"parameters ({', '.join(sorted(properties))})"
            )
        kind = spec.get("type")
        if kind not in _PRIMITIVES:
            raise ValueError(
                f"tool {tool!r}: header_params[{prop!r}] must be a string, number, integer or "
                f"boolean parameter to travel in a header, not {kind or 'an untyped value'!r}"
            )
        if not _HEADER_NAME.match(header):
            raise ValueError(
                f"tool {tool!r}: header_params[{prop!r}] = {header!r} is not a valid header "
                "name suffix; use letters, digits and '-' (e.g. 'Region')"
            )
        if header.lower() in seen:
            raise ValueError(
                f"tool {tool!r}: header_params maps {seen[header.lower()]!r} and {prop!r} to "
                f"the same header Mcp-Param-{header} (names are case-insensitive)"
            )
        seen[header.lower()] = prop
        spec[HEADER_KEY] = header
    return annotated


def header_text(value: Any) -> str:
    """A JSON primitive as a client writes it into its header (before any base64)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    return json.dumps(value)


def check_param_headers(
    request: Request, request_id: Any, definition: dict[str, Any], arguments: Any
) -> Response | None:
    """Refuse a `tools/call` whose `Mcp-Param-*` headers disagree with its arguments."""
    from toolweave.mcp.server._guards import decode_header, error_response

    properties = (definition.get("inputSchema") or {}).get("properties") or {}
    args = arguments if isinstance(arguments, dict) else {}
    for prop, spec in properties.items():
        header = spec.get(HEADER_KEY) if isinstance(spec, dict) else None
        if not isinstance(header, str):
            continue
        raw = request.headers.get(f"mcp-param-{header}")
        value = args.get(prop)
        problem: str | None = None
        if value is None:
            if raw is not None:
                problem = f"is sent but arguments.{prop} is absent or null"
        elif raw is None:
            problem = f"is missing while arguments.{prop} has a value; send the header too"
        else:
            decoded = decode_header(raw.strip(" \t"))
            if decoded is None:
                problem = "is not valid =?base64?...?= (bad padding or characters)"
            elif decoded != header_text(value):
                problem = f"does not match arguments.{prop}"
        if problem is not None:
            return error_response(
                400, HEADER_MISMATCH, f"Header mismatch: Mcp-Param-{header} {problem}", request_id
            )
    return None
