"""The gateway as users meet it: a silent downstream does not block the first listing, a crashed
one is withdrawn, reconnected and republished. Real stdio servers; the host's own MCP session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.peers.node_platform import SKIP_REASON, find_node
from toolweave.host import HostConfig, ToolHost, parse_config
from toolweave.mcp import MCPError
from toolweave.mcp.server.testing import connect

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
PEERS = ROOT / "tests" / "peers" / "node_modules"
NODE = find_node(PEERS)
EVERYTHING = PEERS / ".bin" / "mcp-server-everything"
needs_node = pytest.mark.skipif(NODE is None, reason=SKIP_REASON)

# Blocks before serving until the test creates the go-file: a downstream that is silent for as
# long as the test wants, with no timing in the test itself.
LATE_SERVER = """
import os, sys, time
go = sys.argv[1]
while not os.path.exists(go):
    time.sleep(0.02)
sys.argv = sys.argv[:1]
exec(compile(open({weather!r}).read(), {weather!r}, "exec"))
"""

CRASHY_SERVER = """
import os
from toolweave.mcp import MCPServer

server = MCPServer("crashy")


@server.tool
def ping() -> str:
    return "pong"


@server.tool
def crash() -> str:
    os._exit(3)


server.run()
"""


async def test_a_silent_downstream_does_not_block_the_first_listing(tmp_path: Path) -> None:
    late = tmp_path / "late_server.py"
    late.write_text(LATE_SERVER.format(weather=str(EXAMPLES / "weather_server.py")))
    go = tmp_path / "go"
    config = parse_config(
        {
            "serve": {"providers": ["demo"], "connect_deadline": 0.2},
            "mcpServers": {"late": {"command": sys.executable, "args": [str(late), str(go)]}},
        }
    )
    host = ToolHost(config)
    try:
        async with connect(host.server) as client:
            first = sorted(t["name"] for t in await client.list_tools())
            local = await client.call_tool("calculate", {"expression": "6 * 7"})
            go.write_text("")
            await client.wait_for_notification("notifications/tools/list_changed")
            after = sorted(t["name"] for t in await client.list_tools())
            proxied = await client.call_tool("late__get_weather", {"city": "London"})
    finally:
        await host.close()
    assert first == ["calculate", "celsius_to_fahrenheit", "get_weather"]
    assert local["structuredContent"] == {"result": 42.0}
    assert "late__get_weather" in after and set(first) < set(after)
    assert proxied.get("isError") is not True


async def test_a_crashed_downstream_is_withdrawn_reconnected_and_republished(
    tmp_path: Path,
) -> None:
    script = tmp_path / "crashy.py"
    script.write_text(CRASHY_SERVER)
    config = parse_config(
        {
            # Its tools say destructiveHint: true (toolweave's default for a tool that writes).
            "serve": {"providers": [], "rules": {"allow": ["crashy__*"]}},
            "mcpServers": {"crashy": {"command": sys.executable, "args": [str(script)]}},
        }
    )
    host = ToolHost(config)
    try:
        async with connect(host.server) as client:
            before = sorted(t["name"] for t in await client.list_tools())
            with pytest.raises(MCPError, match="exited with code 3"):
                await client.call_tool("crashy__crash")  # a transport failure, not a tool error
            await client.wait_for_notification("notifications/tools/list_changed")
            await client.wait_for_notification("notifications/tools/list_changed", count=2)
            after = sorted(t["name"] for t in await client.list_tools())
            pong = await client.call_tool("crashy__ping")
    finally:
        await host.close()
    assert before == ["crashy__crash", "crashy__ping"]
    assert after == before
    assert pong["content"][0]["text"] == "pong"


def everything_config(**policy: list[str]) -> HostConfig:
    return parse_config(
        {
            "serve": {"providers": ["demo"], "policy": policy},
            "mcpServers": {"everything": {"command": str(NODE), "args": [str(EVERYTHING)]}},
        }
    )


@needs_node
async def test_downstream_resources_prompts_and_completions_are_proxied() -> None:
    host = ToolHost(everything_config())
    try:
        async with connect(host.server) as client:
            resources = await client.list_resources()  # before any tools/list: connects itself
            templates = await client.list_resource_templates()
            first = resources[0]
            read = await client.read_resource(first["uri"])
            links = await client.call_tool("everything__get-resource-links", {"count": 2})
            linked = [c for c in links["content"] if c.get("type") == "resource_link"]
            assert linked and all(c.get("description") for c in linked)  # republished whole
            followed = await client.read_resource(linked[0]["uri"])
            prompts = {p["name"]: p for p in await client.list_prompts()}
            simple = await client.get_prompt("everything__simple-prompt")
            completed = await client.complete(
                {"type": "ref/prompt", "name": "everything__completable-prompt"}, "department", "E"
            )
    finally:
        await host.close()
    assert resources and all(r["name"].startswith("everything__") for r in resources)
    assert first["uri"].startswith("demo://") and read and read[0]["uri"] == first["uri"]
    assert {t["uriTemplate"] for t in templates} >= {"demo://resource/dynamic/text/{resourceId}"}
    assert linked and followed  # a link a proxied tool returned is readable through the host
    assert {"everything__simple-prompt", "everything__completable-prompt"} <= set(prompts)
    assert simple["messages"] and simple["messages"][0]["role"] == "user"
    assert completed and all(v.startswith("E") for v in completed)


@needs_node
async def test_a_denied_downstream_lists_and_serves_no_resources_or_prompts() -> None:
    host = ToolHost(everything_config(denied=["mcp:everything"]))
    try:
        async with connect(host.server) as client:
            resources = await client.list_resources()
            prompts = await client.list_prompts()
            with pytest.raises(MCPError, match="Resource not found"):
                await client.read_resource("demo://resource/static/document/architecture.md")
            with pytest.raises(MCPError, match="Unknown prompt"):
                await client.get_prompt("everything__simple-prompt")
    finally:
        await host.close()
    assert resources == [] and prompts == []


@needs_node
async def test_the_official_sdk_client_reads_proxied_resources(tmp_path: Path) -> None:
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    config = tmp_path / "toolweave.toml"
    config.write_text(
        f'[serve]\nproviders = []\n\n[mcpServers.everything]\ncommand = "{NODE}"\n'
        f'args = ["{EVERYTHING}"]\n'
    )
    toolweave = Path(sys.executable).with_name("toolweave")
    params = StdioServerParameters(
        command=str(toolweave), args=["serve", "--stdio", "--config", str(config)], cwd=tmp_path
    )
    async with Client(params, mode="auto") as client:
        resources = (await client.list_resources()).resources
        read = await client.read_resource(resources[0].uri)
        prompts = (await client.list_prompts()).prompts
    assert resources[0].name.startswith("everything__") and read.contents
    assert "everything__simple-prompt" in {p.name for p in prompts}


GROWING_DOCS = """
from toolweave.mcp import MCPServer

server = MCPServer("docs")


@server.resource("docs://readme")
def readme() -> str:
    return "README"


@server.tool
async def publish() -> str:
    @server.resource("docs://notes/today")
    def today() -> str:
        return "今天的笔记 / today's notes"

    await server.notify_resources_changed()
    return "published"


server.run()
"""


async def test_a_downstream_resource_list_change_reaches_the_client(tmp_path: Path) -> None:
    script = tmp_path / "docs_server.py"
    script.write_text(GROWING_DOCS)
    config = parse_config(
        {
            "serve": {"providers": [], "rules": {"allow": ["docs__publish"]}},  # it writes
            "mcpServers": {"docs": {"command": sys.executable, "args": [str(script)]}},
        }
    )
    host = ToolHost(config)
    try:
        async with connect(host.server) as client:
            before = await client.list_resources()
            await client.call_tool("docs__publish")
            await client.wait_for_notification("notifications/resources/list_changed")
            after = await client.list_resources()
            read = await client.read_resource("docs://notes/today")
    finally:
        await host.close()
    assert [r["name"] for r in before] == ["docs__readme"]
    assert sorted(r["name"] for r in after) == ["docs__readme", "docs__today"]
    assert read[0]["text"] == "今天的笔记 / today's notes"


def test_serve_refuses_vscode_inputs_and_expands_variables(tmp_path: Path) -> None:
    from toolweave.errors import ConfigError

    asking = parse_config(
        {
            "serve": {"providers": ["mcp"]},
            "mcpServers": {"Obsidian Rest MCP": {"command": "uvx", "env": {"K": "${input:key}"}}},
        }
    )
    with pytest.raises(ConfigError) as refused:
        ToolHost(asking)
    assert "mcpServers.Obsidian Rest MCP.env.K uses ${input:key}" in str(refused.value)
    assert "toolweave serve runs unattended" in str(refused.value)
    config = parse_config(
        {
            "serve": {"providers": ["mcp"]},
            "mcpServers": {
                "Obsidian Rest MCP": {"command": "uvx", "args": ["${TW_TEST_VAULT:-笔记}"]}
            },
        }
    )
    host = ToolHost(config)
    provider = next(p for p in host.providers if p.name == "mcp")
    server = provider.manager.servers["Obsidian_Rest_MCP"].config  # type: ignore[attr-defined]
    assert server.args == ["笔记"] and server.label == "Obsidian Rest MCP"


ICONY_SERVER = """
from toolweave.mcp import MCPServer

server = MCPServer("icony")
ICON = {"src": "data:image/png;base64,iVBORw0KGgo=", "mimeType": "image/png", "sizes": ["16x16"]}


@server.tool(icons=[ICON], meta={"example.org/ui": {"panel": "chart"}})
def draw(city: str) -> str:
    \"\"\"Draw the weather chart of a city.\"\"\"
    return "drawn " + city


server.run()
"""


async def test_a_downstream_tools_icons_and_meta_are_republished_unchanged(
    tmp_path: Path,
) -> None:
    """Issue 34: through the gateway, tool definitions lost their icons and `_meta`."""
    script = tmp_path / "icony.py"
    script.write_text(ICONY_SERVER, encoding="utf-8")
    host = ToolHost(
        parse_config(
            {
                "serve": {
                    "providers": [],
                    "data_dir": str(tmp_path / "data"),
                    "rules": {"allow": ["icony__draw"]},
                },
                "mcpServers": {"icony": {"command": sys.executable, "args": [str(script)]}},
            }
        )
    )
    try:
        async with connect(host.server) as client:
            tools = {t["name"]: t for t in await client.list_tools()}
            drawn = await client.call_tool("icony__draw", {"city": "北京"})
    finally:
        await host.close()
    draw = tools["icony__draw"]
    assert draw["icons"] == [
        {"src": "data:image/png;base64,iVBORw0KGgo=", "mimeType": "image/png", "sizes": ["16x16"]}
    ]
    assert draw["_meta"]["example.org/ui"] == {"panel": "chart"}
    assert drawn["content"][0]["text"] == "drawn 北京"
