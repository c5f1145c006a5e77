"""Issue 10, fail closed: probes, errored probes, downstream environment, policy-hidden tools,
read-only annotations. Against the official MCP SDK client and real stdio servers."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError as SDKError

from tests.peers.node_platform import SKIP_REASON, find_node
from toolweave.host import ToolHost, parse_config
from toolweave.mcp import MCPClient
from toolweave.mcp.server.testing import connect
from toolweave.mcp.shared.errors import INVALID_PARAMS, JSONRPCError, MCPError
from toolweave.mcp.toolset.bridge import as_tools
from toolweave.tools.base import ToolAnnotations

ROOT = Path(__file__).resolve().parents[3]
WRITER = ROOT / "examples" / "probe_file_writer.py"
TOOLWEAVE = Path(sys.executable).with_name("toolweave")
PEERS = ROOT / "tests" / "peers" / "node_modules"
NODE = find_node(PEERS)
needs_node = pytest.mark.skipif(NODE is None, reason=SKIP_REASON)
# Values a loose reading would take for a probe (or a real call): all must be refused.
NOT_TRUE: list[Any] = [1, "true", {}, [1], "yes", False, 0]

ENV_SERVER = """
import os
from toolweave.mcp import MCPServer

server = MCPServer("env")


@server.tool(read_only=True)
def getenv(name: str) -> str:
    return os.environ.get(name, "<unset>")


server.run()
"""


def writer_args(root: Path) -> list[str]:
    return [str(WRITER), "--root", str(root)]


async def sdk_probe(sdk: Client, tool: str, value: Any) -> Any:
    """A tools/call through the official SDK client with the probe key set to `value`."""
    meta = {"forge.permission_patterns": value}
    return await sdk.call_tool(tool, {"path": "a.txt", "content": "x"}, meta=meta)


def gateway_toml(tmp_path: Path, serve: str) -> Path:
    """A toolweave.toml proxying the probe-aware file writer as `files`."""
    config = tmp_path / "toolweave.toml"
    args = ", ".join(f'"{a}"' for a in writer_args(tmp_path))
    config.write_text(
        f'{serve}\n[mcpServers.files]\ncommand = "{sys.executable}"\nargs = [{args}]\n'
    )
    return config


@pytest.mark.parametrize("value", NOT_TRUE)
async def test_malformed_probe_key_is_invalid_params_and_never_runs(
    tmp_path: Path, value: Any
) -> None:
    params = StdioServerParameters(command=sys.executable, args=writer_args(tmp_path))
    async with Client(params, mode="legacy") as sdk:
        with pytest.raises(SDKError) as refused:
            await sdk_probe(sdk, "write_file", value)
    assert refused.value.error.code == INVALID_PARAMS
    assert "must be exactly true" in refused.value.error.message
    assert not (tmp_path / "a.txt").exists()


async def test_our_client_refuses_a_malformed_probe_without_sending(tmp_path: Path) -> None:
    async with MCPClient.stdio(sys.executable, writer_args(tmp_path)) as client:
        for value in NOT_TRUE:
            with pytest.raises(JSONRPCError, match="must be exactly true") as refused:
                await client.call_tool(
                    "write_file", {"path": "a.txt"}, meta={"forge.permission_patterns": value}
                )
            assert refused.value.code == INVALID_PARAMS
    assert not (tmp_path / "a.txt").exists()


def gateway(tmp_path: Path, **serve: Any) -> dict[str, Any]:
    return {
        "serve": {"providers": [], **serve},
        "mcpServers": {"files": {"command": sys.executable, "args": writer_args(tmp_path)}},
    }


async def test_malformed_probe_through_the_gateway_never_executes(tmp_path: Path) -> None:
    config = gateway_toml(tmp_path, "[serve]\nproviders = []\n")
    params = StdioServerParameters(
        command=str(TOOLWEAVE), args=["serve", "--stdio", "--config", str(config)], cwd=tmp_path
    )
    async with Client(params, mode="legacy") as sdk:
        for value in NOT_TRUE:
            with pytest.raises(SDKError) as refused:
                await sdk_probe(sdk, "files__write_file", value)
            assert refused.value.error.code == INVALID_PARAMS
        probe = await sdk_probe(sdk, "files__write_file", True)
    assert probe.meta == {"forge.patterns": ["write:a.txt"], "forge.always": ["fs:write"]}
    assert not (tmp_path / "a.txt").exists()


async def test_errored_probe_refuses_the_call_in_bridge_and_gateway(tmp_path: Path) -> None:
    escape = {"path": "../../etc/passwd", "content": "x"}
    async with MCPClient.stdio(sys.executable, writer_args(tmp_path)) as client:
        tool = {t.name: t for t in await as_tools(client)}["write_file"]
        with pytest.raises(MCPError, match=r"permission probe .* failed"):
            await tool.permission_patterns(escape)
        with pytest.raises(MCPError, match=r"permission probe .* failed"):
            await tool.permission_patterns({"content": "no path"})  # invalid arguments
    host = ToolHost(parse_config(gateway(tmp_path)))
    try:
        async with connect(host.server) as upstream:
            with pytest.raises(JSONRPCError, match=r"permission probe .* failed.*outside"):
                await upstream.probe("files__write_file", escape)
    finally:
        await host.close()


async def test_stdio_servers_get_a_minimal_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "env_server.py"
    script.write_text(ENV_SERVER)
    monkeypatch.setenv("SECRET_API_KEY", "sk-host-only")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    python = sys.executable
    manager_config = {
        "mcpServers": {
            "minimal": {"command": python, "args": [str(script)], "env": {"MINE": "given"}},
            "full": {"command": python, "args": [str(script)], "inherit_env": True},
        }
    }
    host = ToolHost(parse_config({"serve": {"providers": []}, **manager_config}))
    try:
        async with connect(host.server) as client:

            async def env(server: str, name: str) -> str:
                result = await client.call_tool(f"{server}__getenv", {"name": name})
                text: str = result["content"][0]["text"]
                return text

            minimal = [await env("minimal", n) for n in ("SECRET_API_KEY", "MINE", "LC_ALL")]
            path = await env("minimal", "PATH")
            full = await env("full", "SECRET_API_KEY")
    finally:
        await host.close()
    assert minimal == ["<unset>", "given", "C.UTF-8"] and path != "<unset>"
    assert full == "sk-host-only"
    with pytest.raises(ValueError, match=r"mcpServers\.x\.inherit_env must be true or false"):
        ToolHost(parse_config({"mcpServers": {"x": {"command": "x", "inherit_env": "yes"}}}))


async def test_policy_denied_tools_are_not_listed(tmp_path: Path) -> None:
    weather = {"command": sys.executable, "args": [str(ROOT / "examples" / "weather_server.py")]}
    config = gateway(tmp_path, policy={"denied": ["mcp:files"]})
    config["mcpServers"]["weather"] = weather
    host = ToolHost(parse_config(config))
    try:
        async with connect(host.server) as client:
            names = sorted(t["name"] for t in await client.list_tools())
            with pytest.raises(JSONRPCError, match="Unknown tool"):
                await client.call_tool("files__write_file", {"path": "b.txt", "content": "x"})
    finally:
        await host.close()
    assert names == ["weather__celsius_to_fahrenheit", "weather__get_weather"]
    assert not (tmp_path / "b.txt").exists()


async def test_policy_denied_tools_are_not_in_as_tools_of_a_host_client(tmp_path: Path) -> None:
    serve = '[serve]\nproviders = ["demo"]\n[serve.policy]\ndenied = ["mcp:files"]\n'
    config = gateway_toml(tmp_path, serve)
    client = MCPClient.stdio(str(TOOLWEAVE), ["serve", "--stdio", "--config", str(config)])
    async with client:
        names = sorted(t.name for t in await as_tools(client))
    assert names == ["calculate", "celsius_to_fahrenheit", "get_weather"]


def test_read_only_is_never_destructive() -> None:
    hints = {"readOnlyHint": True, "destructiveHint": True, "idempotentHint": False}
    converted = ToolAnnotations.from_mcp(hints)
    assert (converted.read_only, converted.destructive, converted.idempotent) == (
        True,
        False,
        True,
    )
    assert ToolAnnotations(read_only=True).to_mcp()["destructiveHint"] is False
    # Without readOnlyHint the MCP defaults stand: destructive, not idempotent.
    assert ToolAnnotations.from_mcp({}).destructive is True


async def test_gateway_republishes_read_only_downstream_tools_as_read_only(
    tmp_path: Path,
) -> None:
    downstream = tmp_path / "ro.py"
    downstream.write_text(
        "from toolweave.mcp import MCPServer\n"
        "server = MCPServer('ro')\n"
        "@server.tool(read_only=True, destructive=True)\n"
        "def look() -> str:\n    return 'ok'\n"
        "server.run()\n"
    )
    config = {"command": sys.executable, "args": [str(downstream)]}
    host = ToolHost(parse_config({"serve": {"providers": []}, "mcpServers": {"ro": config}}))
    try:
        async with connect(host.server) as client:
            listed = {t["name"]: t for t in await client.list_tools()}
    finally:
        await host.close()
    hints = listed["ro__look"]["annotations"]
    assert hints["readOnlyHint"] is True and hints["destructiveHint"] is False


@needs_node
async def test_npm_peers_get_the_minimal_environment_and_keep_read_only_hints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """server-everything's get-env shows what a downstream sees; server-filesystem marks its
    readers `readOnlyHint: true` without a destructiveHint (the MCP default would say true)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-host-secret")
    bin_dir = PEERS / ".bin"
    servers = {
        "everything": {"command": str(NODE), "args": [str(bin_dir / "mcp-server-everything")]},
        "fs": {
            "command": str(NODE),
            "args": [str(bin_dir / "mcp-server-filesystem"), str(tmp_path)],
        },
    }
    host = ToolHost(parse_config({"serve": {"providers": []}, "mcpServers": servers}))
    try:
        async with connect(host.server) as client:
            listed = {t["name"]: t for t in await client.list_tools()}
            env_text = (await client.call_tool("everything__get-env", {}))["content"][0]["text"]
    finally:
        await host.close()
    seen = json.loads(env_text)
    assert "OPENAI_API_KEY" not in seen and "PATH" in seen
    hints = listed["fs__read_text_file"]["annotations"]
    assert hints["readOnlyHint"] is True and hints["destructiveHint"] is False
