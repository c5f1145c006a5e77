"""Custom headers from tool parameters (SEP-2243): which declarations are valid, how values are
encoded, and that one malformed tool never hides the valid ones. The conformance suite's
`http-custom-headers` and `http-invalid-tool-headers` scenarios check the same over the wire."""

from __future__ import annotations

import base64
import logging
from typing import Any

import pytest

from toolweave.mcp import MCPToolInfo, elicitation_defaults
from toolweave.mcp.client._features import ServerFeatures
from toolweave.mcp.client._param_headers import (
    encode_header_value,
    header_bindings,
    param_headers,
)


def schema(**properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def test_values_that_are_not_plain_ascii_travel_as_base64() -> None:
    assert encode_header_value("us-west1") == "us-west1"
    assert encode_header_value("us west 1") == "us west 1"
    assert encode_header_value("") == ""
    for unsafe in ("Hello, 世界", " padded ", "line1\nline2", "\tindented", "=?base64?eA==?="):
        encoded = encode_header_value(unsafe)
        assert encoded.startswith("=?base64?") and encoded.endswith("?=")
        assert base64.b64decode(encoded[9:-2]).decode() == unsafe


def test_mirrored_arguments_skip_nulls_and_unannotated_ones() -> None:
    bindings = header_bindings(
        schema(
            region={"type": "string", "x-mcp-header": "Region"},
            priority={"type": "integer", "x-mcp-header": "Priority"},
            verbose={"type": "boolean", "x-mcp-header": "Verbose"},
            query={"type": "string"},
        )
    )
    headers = param_headers(
        bindings, {"region": "中国", "priority": 42, "verbose": None, "query": "SELECT 1"}
    )
    assert headers == {
        "Mcp-Param-Region": encode_header_value("中国"),
        "Mcp-Param-Priority": "42",
    }
    assert param_headers(bindings, {"verbose": False}) == {"Mcp-Param-Verbose": "false"}


@pytest.mark.parametrize(
    ("spec", "rule"),
    [
        ({"type": "string", "x-mcp-header": ""}, "non-empty"),
        ({"type": "object", "x-mcp-header": "Data"}, "only string, integer and boolean"),
        ({"type": "number", "x-mcp-header": "Score"}, "only string, integer and boolean"),
        ({"type": "string", "x-mcp-header": "My Region"}, "HTTP token"),
        ({"type": "string", "x-mcp-header": "Région"}, "HTTP token"),
    ],
)
def test_an_invalid_declaration_names_the_property_and_the_rule(
    spec: dict[str, Any], rule: str
) -> None:
    with pytest.raises(ValueError, match=rule) as caught:
        MCPToolInfo.from_wire({"name": "bad", "inputSchema": schema(value=spec)})
    assert "tool 'bad'" in str(caught.value) and "'value'" in str(caught.value)


def test_duplicate_header_names_differ_only_in_case() -> None:
    with pytest.raises(ValueError, match="repeats the header of property 'a'"):
        header_bindings(
            schema(
                a={"type": "string", "x-mcp-header": "MyField"},
                b={"type": "string", "x-mcp-header": "myfield"},
            )
        )


def test_one_malformed_tool_is_skipped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    features = ServerFeatures()
    features.name = "srv"
    listed: list[dict[str, Any]] = [
        {"name": "valid", "inputSchema": schema(r={"type": "string", "x-mcp-header": "R"})},
        {"name": "broken", "inputSchema": schema(r={"type": "array", "x-mcp-header": "R"})},
        {"description": "no name"},
        {"name": "not_an_object", "inputSchema": "string"},
        {"name": "valid", "inputSchema": {"type": "object"}},
    ]
    with caplog.at_level(logging.WARNING, "toolweave.mcp.client"):
        kept = features._valid_tools(listed)
    assert [t.name for t in kept] == ["valid"]
    assert kept[0].header_bindings == {"r": "R"}
    assert len(caplog.records) == 4
    assert "tool 'broken'" in caplog.text and "second tool 'valid'" in caplog.text


def test_elicitation_defaults_are_for_a_form_to_show_not_sent_unasked() -> None:
    params = {
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string", "default": "John"}, "age": {}},
        }
    }
    assert elicitation_defaults(params) == {"name": "John"}
