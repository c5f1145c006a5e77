"""Nothing a server sends is dropped: toolweave's listings, field by field, against the official
`mcp` SDK client's, on real servers (server-everything and server-filesystem from npm) and on a
2026-only server that takes a while to start (it is connected only because the 2026 handshake is
tried again after the fallback `initialize` is answered with -32022)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.mcp.client.mcp_peers import EVERYTHING, FILESYSTEM, NODE, requires_node
from toolweave.mcp import MCPClient
from toolweave.mcp.client import protocol
from toolweave.tools import ResourceLink, TextContent

MODERN_SERVER = str(Path(__file__).parent / "modern_server.py")
#: Seconds the 2026-only server spends starting: longer than the probe bound used here.
START_DELAY = "1.5"

Listing = dict[str, dict[str, dict[str, Any]]]


async def sdk_listings(command: str, args: list[str]) -> Listing:
    """What the official client lists, as the JSON it would send on (None fields left out)."""

    def dump(items: Any, key: str) -> dict[str, dict[str, Any]]:
        dumped = (i.model_dump(by_alias=True, exclude_none=True, mode="json") for i in items)
        return {str(d[key]): d for d in dumped}

    params = StdioServerParameters(command=command, args=args)
    async with Client(params) as client:
        capabilities = client.server_capabilities
        found: Listing = {"tools": dump((await client.list_tools()).tools, "name")}
        if capabilities is not None and capabilities.resources is not None:
            found["resources"] = dump((await client.list_resources()).resources, "uri")
            templates = (await client.list_resource_templates()).resource_templates
            found["templates"] = dump(templates, "uriTemplate")
        if capabilities is not None and capabilities.prompts is not None:
            found["prompts"] = dump((await client.list_prompts()).prompts, "name")
    return found


async def toolweave_listings(client: MCPClient) -> Listing:
    found: Listing = {"tools": {t.name: t.to_wire() for t in await client.list_tools()}}
    if "resources" in client.capabilities:
        found["resources"] = {r.uri: r.to_wire() for r in await client.list_resources()}
        templates = await client.list_resource_templates()
        found["templates"] = {t.uri_template: t.to_wire() for t in templates}
    if "prompts" in client.capabilities:
        found["prompts"] = {p.name: p.to_wire() for p in await client.list_prompts()}
    return found


def assert_nothing_dropped(ours: Listing, theirs: Listing) -> None:
    """Every item and every field the official client keeps, toolweave keeps with the same
    value (toolweave may keep more: keys of a newer revision the SDK does not model)."""
    assert ours.keys() == theirs.keys()
    for kind, items in theirs.items():
        assert ours[kind].keys() == items.keys(), kind
        for key, item in items.items():
            for field, value in item.items():
                assert ours[kind][key].get(field) == value, (kind, key, field)


@requires_node
async def test_server_everything_lists_the_same(tmp_path: Path) -> None:
    async with MCPClient.stdio(NODE, [EVERYTHING], cwd=str(tmp_path)) as client:
        ours = await toolweave_listings(client)
    theirs = await sdk_listings(NODE, [EVERYTHING])
    assert_nothing_dropped(ours, theirs)
    execution = {name: t.get("execution") for name, t in ours["tools"].items()}
    assert any(e and e.get("taskSupport") for e in execution.values()), execution


@requires_node
async def test_server_filesystem_lists_the_same(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# 笔记\n")
    async with MCPClient.stdio(NODE, [FILESYSTEM, str(tmp_path)]) as client:
        ours = await toolweave_listings(client)
    theirs = await sdk_listings(NODE, [FILESYSTEM, str(tmp_path)])
    assert_nothing_dropped(ours, theirs)


async def test_a_slow_2026_server_connects_and_lists_the_same(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(protocol, "PROBE_TIMEOUT", 0.3)  # the start takes longer than this
    args = [MODERN_SERVER, "--start-delay", START_DELAY]
    with caplog.at_level(logging.INFO, "toolweave.mcp.client"):
        client = MCPClient.stdio(sys.executable, args)
        await client.connect()
    async with client:
        assert "refused initialize with -32022" in caplog.text  # the fallback, then the retry
        assert client.protocol_version == "2026-07-28"
        ours = await toolweave_listings(client)
        result = await client.call_tool("research", {"topic": "雨"})
        contents = await client.read_resource("doc://guide")
    theirs = await sdk_listings(sys.executable, args)
    assert_nothing_dropped(ours, theirs)
    tool = ours["tools"]["research"]
    assert tool["x-future-field"] == {"kept": True}  # a key no client models yet
    assert tool["execution"] == {"taskSupport": "optional"} and tool["icons"]
    assert result.metadata["meta"] == {"example.com/result": "kept"}
    text, link = result.content
    assert isinstance(text, TextContent) and text.annotations == {
        "audience": ["user"],
        "priority": 1,
    }
    assert isinstance(link, ResourceLink)  # a link, not an embedded resource
    assert (link.title, link.description, link.size) == ("Guide", "The guide.", 42)
    assert link.annotations == {"priority": 0.2} and link.meta == {"example.com/link": 1}
    assert contents[0].meta == {"example.com/ui": "x"}  # read_resource keeps the contents' _meta


async def test_the_start_budget_is_a_setting() -> None:
    client = MCPClient.stdio(sys.executable, [MODERN_SERVER], discover_timeout=90.0)
    assert client.discover_timeout == 90.0
    assert MCPClient.stdio(sys.executable, [MODERN_SERVER]).discover_timeout >= 30.0
