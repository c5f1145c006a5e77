"""The 2026-07-28 stateless core (SEP-2575) and custom headers (SEP-2243) over Streamable HTTP:
refusals carry the request's id and the right status, removed methods are 404, logs need a
requested level, and `Mcp-Param-*` headers must agree with the body."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import Field

from tests.mcp.server.modern import VERSION, Modern, b64_header, modern_client, sse_messages
from toolweave.mcp import Context, MCPServer


def make_server() -> MCPServer:
    server = MCPServer("core")

    @server.tool
    async def chatty(ctx: Context) -> str:
        await ctx.warning("careful")
        return "done"

    @server.tool
    async def ask_model(ctx: Context) -> str:
        await ctx.sample("hi", tools=[{"name": "t", "inputSchema": {"type": "object"}}])
        return "never"

    @server.tool(header_params={"region": "Region", "count": "Count", "dry": "Dry-Run"})
    def route(
        region: Annotated[str, Field(description="Where")],
        count: int = 1,
        dry: bool = False,
        note: str | None = None,
    ) -> str:
        return f"{region}/{count}/{dry}/{note}"

    return server


async def test_refusals_answer_with_the_request_id_and_minus_32602_for_missing_meta() -> None:
    headers = {
        "Accept": "application/json",
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": "server/discover",
    }
    async with modern_client(make_server()) as http:
        no_meta = await http.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 41, "method": "server/discover", "params": {}},
            headers=headers,
        )
        no_caps = await http.post(
            "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": "s-42",
                "method": "server/discover",
                "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": VERSION}},
            },
            headers=headers,
        )
    assert no_meta.status_code == no_caps.status_code == 400
    assert no_meta.json()["id"] == 41 and no_caps.json()["id"] == "s-42"
    assert no_meta.json()["error"]["code"] == no_caps.json()["error"]["code"] == -32602
    assert "_meta" in no_meta.json()["error"]["message"]


@pytest.mark.parametrize(
    "method", ["ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"]
)
async def test_methods_removed_in_2026_are_404_method_not_found(method: str) -> None:
    async with modern_client(make_server()) as http:
        response = await Modern(http).post(method, {"level": "info", "uri": "x://y"})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == -32601 and response.json()["id"] == 101


async def test_logs_reach_only_requests_that_asked_for_a_level() -> None:
    async with modern_client(make_server()) as http:
        modern = Modern(http)
        silent = await modern.post("tools/call", {"name": "chatty"})
        heard = await modern.post(
            "tools/call", {"name": "chatty"}, meta={"io.modelcontextprotocol/logLevel": "info"}
        )
        too_high = await modern.post(
            "tools/call", {"name": "chatty"}, meta={"io.modelcontextprotocol/logLevel": "error"}
        )
    assert silent.headers["content-type"] == "application/json"  # no notification came first
    assert too_high.headers["content-type"] == "application/json"
    logs = [m for m in sse_messages(heard.text) if m.get("method") == "notifications/message"]
    assert [m["params"]["data"] for m in logs] == ["careful"]


async def test_sampling_with_tools_needs_the_declared_feature() -> None:
    async with modern_client(make_server()) as http:
        modern = Modern(http)
        refused = await modern.post("tools/call", {"name": "ask_model"}, caps={"sampling": {}})
        asked = await modern.result(
            "tools/call", {"name": "ask_model"}, caps={"sampling": {"tools": {}}}
        )
    assert refused.status_code == 400
    assert refused.json()["error"]["data"] == {"requiredCapabilities": {"sampling": {"tools": {}}}}
    request = asked["inputRequests"]["sampling-1"]["params"]
    assert request["tools"][0]["name"] == "t"


async def test_custom_headers_are_published_and_must_match_the_arguments() -> None:
    args = {"region": "eu-west 1 ünï", "count": 3, "dry": True}
    good = {"Mcp-Param-Region": b64_header("eu-west 1 ünï"), "Mcp-Param-Count": "3"}
    good["Mcp-Param-Dry-Run"] = "true"
    async with modern_client(make_server()) as http:
        modern = Modern(http)
        listed = await modern.result("tools/list")
        ok = await modern.result("tools/call", {"name": "route", "arguments": args}, headers=good)
        cases = {
            "missing": {k: v for k, v in good.items() if k != "Mcp-Param-Count"},
            "different": {**good, "Mcp-Param-Count": "4"},
            "bad padding": {**good, "Mcp-Param-Region": "=?base64?SGVsbG8?="},
            "bad chars": {**good, "Mcp-Param-Region": "=?base64?SGVs!!!bG8=?="},
        }
        refused = {
            case: await modern.post(
                "tools/call", {"name": "route", "arguments": args}, headers=headers
            )
            for case, headers in cases.items()
        }
        stray = await modern.post(
            "tools/call",
            {"name": "route", "arguments": {"region": "x"}},
            headers={"Mcp-Param-Region": "x", "Mcp-Param-Count": "1"},
        )
    schema = next(t for t in listed["tools"] if t["name"] == "route")["inputSchema"]
    assert schema["properties"]["region"]["x-mcp-header"] == "Region"
    assert schema["properties"]["dry"]["x-mcp-header"] == "Dry-Run"
    assert "x-mcp-header" not in schema["properties"]["note"]
    assert ok["content"][0]["text"] == "eu-west 1 ünï/3/True/None"
    for case, response in refused.items():
        assert response.status_code == 400, case
        assert response.json()["error"]["code"] == -32020, case
    assert (
        "Mcp-Param-Count is sent but arguments.count is absent" in stray.json()["error"]["message"]
    )


def test_bad_header_params_name_the_field_and_the_fix() -> None:
    server = MCPServer("bad")

    @server.tool(header_params={"items": "Items"})
    def listy(items: list[str]) -> str:
        return ""

    @server.tool(header_params={"a": "Same", "b": "same"})
    def twice(a: str, b: str) -> str:
        return ""

    @server.tool(header_params={"a": "Bad Name"})
    def spaced(a: str) -> str:
        return ""

    for name, message in [
        ("listy", "must be a string, number, integer or boolean"),
        ("twice", "the same header Mcp-Param-same"),
        ("spaced", "not a valid header name suffix"),
    ]:
        entry = server.tool_entry(name)
        assert entry is not None
        with pytest.raises(ValueError, match=message):
            entry.definition()
