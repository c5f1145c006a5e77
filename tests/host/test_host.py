"""`toolweave serve`: config, providers, the policy gate, the gateway and the CLI."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import IO

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from toolweave.host import HostConfig, ToolHost, load_host_config, parse_config
from toolweave.mcp.server.testing import connect
from toolweave.mcp.shared.errors import JSONRPCError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
TOOLWEAVE = Path(sys.executable).with_name("toolweave")


def test_defaults_work_without_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = load_host_config()
    assert (config.transport, config.host, config.port, config.path) == (
        "stdio",
        "127.0.0.1",
        8765,
        "/mcp",
    )
    assert config.providers == ("builtins", "memory", "kb", "notes", "skills")
    assert config.mcp_servers == {} and not config.providers_chosen
    assert config.url == "http://127.0.0.1:8765/mcp"


def test_config_errors_name_the_field(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"\[serve\].port: Input should be a valid integer"):
        parse_config({"serve": {"port": "80"}})
    with pytest.raises(ValueError, match=r"\[serve\].prot is not a known key"):
        parse_config({"serve": {"prot": 1}})
    with pytest.raises(ValueError, match=r"\[serve.policy\].denied: Input should be a valid list"):
        parse_config({"serve": {"policy": {"denied": "shell"}}})
    with pytest.raises(ValueError, match=r"\[serve\].token: Input should be a valid string"):
        parse_config({"serve": {"token": 12345}})
    exposed = parse_config({"serve": {"transport": "http", "host": "0.0.0.0"}})
    with pytest.raises(ValueError, match=r"\[serve\].token"):
        exposed.check()
    bad = tmp_path / "toolweave.toml"
    bad.write_text("[serve\n")
    with pytest.raises(ValueError, match="not valid TOML"):
        load_host_config(bad)
    with pytest.raises(ValueError, match="unknown provider 'nope'"):
        ToolHost(parse_config({"serve": {"providers": ["nope"]}}))
    with pytest.raises(ValueError, match=r"mcpServers\.files"):
        ToolHost(parse_config({"mcpServers": {"files": {"args": ["x"]}}}))


async def test_demo_tools_through_the_host() -> None:
    host = ToolHost(HostConfig(providers=["demo"]))
    async with connect(host.server) as client:
        names = [t["name"] for t in await client.list_tools()]
        result = await client.call_tool("calculate", {"expression": "(3 + 4) * 2"})
    await host.close()
    assert names == ["calculate", "celsius_to_fahrenheit", "get_weather"]
    assert result["structuredContent"] == {"result": 14.0}


def gateway_config(tmp_path: Path, **policy: list[str]) -> HostConfig:
    python = sys.executable
    return parse_config(
        {
            # The downstream writer declares destructiveHint: true, so it asks unless allowed.
            "serve": {"providers": [], "policy": policy, "rules": {"allow": ["files__write_*"]}},
            "mcpServers": {
                "weather": {"command": python, "args": [str(EXAMPLES / "weather_server.py")]},
                "files": {
                    "command": python,
                    "args": [str(EXAMPLES / "probe_file_writer.py"), "--root", str(tmp_path)],
                },
            },
        }
    )


async def test_gateway_is_lazy_prefixed_and_forwards_probes(tmp_path: Path) -> None:
    host = ToolHost(gateway_config(tmp_path))
    manager = host.providers[0].manager  # type: ignore[attr-defined]
    assert not any(s.connected for s in manager.servers.values())  # nothing spawned yet
    try:
        async with connect(host.server) as client:
            tools = {t["name"]: t for t in await client.list_tools()}
            converted = await client.call_tool("weather__celsius_to_fahrenheit", {"celsius": 0})
            probe = await client.probe("files__write_file", {"path": "a.txt", "content": "x"})
            unmarked = await client.probe("files__read_file", {"path": "a.txt"})
            assert not (tmp_path / "a.txt").exists()
            written = await client.call_tool("files__write_file", {"path": "a.txt", "content": "x"})
    finally:
        await host.close()
    assert sorted(tools) == [
        "files__read_file",
        "files__write_file",
        "weather__celsius_to_fahrenheit",
        "weather__get_weather",
    ]
    assert tools["files__write_file"]["_meta"] == {"forge.supports_permission_patterns": True}
    assert converted["structuredContent"] == {"result": 32.0}
    assert probe["_meta"] == {"forge.patterns": ["write:a.txt"], "forge.always": ["fs:write"]}
    # A tool without the marker is never probed downstream: the host answers itself.
    assert unmarked["isError"] is True
    assert "does not support permission probes" in unmarked["content"][0]["text"]
    assert written.get("isError") is not True and (tmp_path / "a.txt").read_text() == "x"


async def test_a_policy_denied_tool_is_neither_listed_called_nor_probed(tmp_path: Path) -> None:
    """The host checks its policy once, when it publishes: a probe cannot reach a denied tool."""
    host = ToolHost(gateway_config(tmp_path, denied=["mcp:files"]))
    try:
        async with connect(host.server) as client:
            names = [t["name"] for t in await client.list_tools()]
            with pytest.raises(JSONRPCError, match="Unknown tool: 'files__write_file'"):
                await client.probe("files__write_file", {"path": "a.txt", "content": "x"})
            with pytest.raises(JSONRPCError, match="Unknown tool: 'files__write_file'"):
                await client.call_tool("files__write_file", {"path": "a.txt", "content": "x"})
    finally:
        await host.close()
    assert names == ["weather__celsius_to_fahrenheit", "weather__get_weather"]
    assert not (tmp_path / "a.txt").exists()


DYNAMIC_SERVER = """
from toolweave.mcp import MCPServer

server = MCPServer("dyn")


@server.tool
async def grow() -> str:
    @server.tool
    def extra() -> str:
        return "extra!"

    await server.notify_tools_changed()
    return "grown"


server.run()
"""


async def test_gateway_mirrors_downstream_tool_changes(tmp_path: Path) -> None:
    script = tmp_path / "dynamic_server.py"
    script.write_text(DYNAMIC_SERVER)
    config = parse_config(
        {
            # Its tools say destructiveHint: true (toolweave's default for a tool that writes).
            "serve": {"providers": [], "rules": {"allow": ["dyn__*"]}},
            "mcpServers": {"dyn": {"command": sys.executable, "args": [str(script)]}},
        }
    )
    host = ToolHost(config)
    try:
        async with connect(host.server) as client:
            before = [t["name"] for t in await client.list_tools()]
            grown = await client.call_tool("dyn__grow")
            await client.wait_for_notification("notifications/tools/list_changed")
            after = [t["name"] for t in await client.list_tools()]
            extra = await client.call_tool("dyn__extra")
    finally:
        await host.close()
    assert before == ["dyn__grow"] and grown["content"][0]["text"] == "grown"
    assert after == ["dyn__extra", "dyn__grow"]
    assert extra["content"][0]["text"] == "extra!"


DEMO_TOOLS = {"calculate", "celsius_to_fahrenheit", "get_weather"}
REAL_TOOLS = {"memory", "kb_add", "kb_search", "kb", "note", "read_file", "time", "todo_write"}


def served_by_default(names: set[str]) -> bool:
    """What `make run` serves with no toolweave.toml: memory, the knowledge base, notes, skills
    and the safe built-ins (tests/builtins checks the exact built-in set), never the shell, SQL
    or fetch, and the demo tools only with --demo."""
    return names >= REAL_TOOLS and not names & {"bash", "fetch", "sql_query", *DEMO_TOOLS}


def data_dir_config(tmp_path: Path) -> None:
    """A toolweave.toml that keeps the built-ins' workspace inside the test's directory."""
    (tmp_path / "toolweave.toml").write_text(f'[serve]\ndata_dir = "{tmp_path / "data"}"\n')


async def test_cli_stdio_serves_the_official_client(tmp_path: Path) -> None:
    data_dir_config(tmp_path)
    args = ["serve", "--stdio", "--demo", "-c", "toolweave.toml"]
    params = StdioServerParameters(
        command=str(TOOLWEAVE), args=args, cwd=tmp_path, env=dict(os.environ)
    )
    async with Client(params, mode="auto") as client:
        tools = (await client.list_tools()).tools
        result = await client.call_tool("calculate", {"expression": "2 ** 10"})
    names = {t.name for t in tools}
    assert names >= REAL_TOOLS | DEMO_TOOLS and not names & {"bash", "fetch", "sql_query"}
    assert result.structured_content == {"result": 1024.0}
    assert (tmp_path / "toolweave-workspace").is_dir()


def test_cli_refuses_public_bind_without_token() -> None:
    out = subprocess.run(
        [str(TOOLWEAVE), "serve", "--http", "0.0.0.0:8799"],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if k != "TOOLWEAVE_SERVE_TOKEN"},
    )
    assert out.returncode == 2 and "--token" in out.stderr


def test_cli_rejects_an_out_of_range_port_in_one_line() -> None:
    out = subprocess.run(
        [str(TOOLWEAVE), "serve", "--http", "127.0.0.1:99999"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert out.stderr.strip() == (
        "error: --http port must be 0-65535 (0 picks a free port), not 99999"
    )  # one line, as docs/serve.md says (it was a four-line usage box)


async def test_cli_port_zero_prints_the_bound_port_and_the_exact_command(tmp_path: Path) -> None:
    config = tmp_path / "host.toml"
    config.write_text(f'[serve]\nname = "zero"\ndata_dir = "{tmp_path / "data"}"\n')
    proc = start_serve(0, tmp_path, "--config", str(config))
    try:
        assert proc.stdout is not None
        banner = "".join(iter_until(proc.stdout, "Ctrl+C"))
        port = int(banner.split("http://127.0.0.1:")[1].split("/")[0])
        assert port > 0 and ":0/" not in banner
        again = f"{TOOLWEAVE} serve --http 127.0.0.1:{port} --config {config}"
        assert f"This server again: {again}" in banner
        desktop = json.loads("{" + banner.split("either spawning it:\n{")[1].split("\n}")[0] + "}")
        assert desktop["toolweave"]["args"] == ["serve", "--stdio", "--config", str(config)]
        async with Client(f"http://127.0.0.1:{port}/mcp", mode="legacy") as client:
            tools = (await client.list_tools()).tools
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert served_by_default({t.name for t in tools})


async def test_cli_http_prints_how_to_connect_and_serves(tmp_path: Path) -> None:
    port = free_port()
    data_dir_config(tmp_path)
    proc = start_serve(port, tmp_path, "-c", "toolweave.toml")
    try:
        assert proc.stdout is not None
        banner = "".join(iter_until(proc.stdout, "Ctrl+C"))
        url = f"http://127.0.0.1:{port}/mcp"
        assert url in banner and "claude mcp add --transport http toolweave" in banner
        assert '"serve"' in banner and "--stdio" in banner and str(TOOLWEAVE) in banner
        data = tmp_path / "data"
        for line in (
            f"Serving (data in {data}):",
            f"  builtins  built-in tools: files jailed to {tmp_path / 'toolweave-workspace'} "
            "(write_file and edit_file ask unless allowed), time, todo_write",
            f"  memory    the memory tool over {data / 'memory.db'}: one store shared by every "
            "client (no authentication)",
            f"  kb        kb_add, kb_search and kb over {data / 'kb.db'} (kb remove and clear ask "
            "unless allowed)",
            f"  notes     the note tool over Markdown files in {data / 'notes'} (note delete asks "
            "unless allowed)",
        ):
            assert line + "\n" in banner, banner
        async with Client(url, mode="legacy") as client:
            tools = (await client.list_tools()).tools
            added = await client.call_tool("kb_add", {"content": "# 端口\n\n默认端口是 8765。"})
            found = await client.call_tool("kb_search", {"query": "默认端口"})
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert served_by_default({t.name for t in tools})
    assert not added.is_error and not found.is_error, (added, found)
    assert "8765" in json.dumps(found.structured_content, ensure_ascii=False)
    assert (tmp_path / "data" / "kb.db").is_file()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def start_serve(port: int, cwd: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(TOOLWEAVE), "serve", "--http", f"127.0.0.1:{port}", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=cwd,
    )


def iter_until(stream: IO[str], marker: str) -> list[str]:
    lines = []
    for line in stream:
        lines.append(line)
        if marker in line:
            break
    return lines


async def test_library_serve_http_fails_closed_without_token() -> None:
    host = ToolHost(parse_config({"serve": {"host": "0.0.0.0"}}))  # stdio config passes check()
    with pytest.raises(ValueError, match=r"\[serve\].token"):
        await host.serve_http()


async def test_cli_http_with_token_requires_it(tmp_path: Path) -> None:
    import httpx

    port = free_port()
    data_dir_config(tmp_path)
    proc = start_serve(port, tmp_path, "--token", "s3cret-token", "-c", "toolweave.toml")
    try:
        assert proc.stdout is not None
        banner = "".join(iter_until(proc.stdout, "Ctrl+C"))
        url = f"http://127.0.0.1:{port}/mcp"
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}},
        }
        accept = {"Accept": "application/json, text/event-stream"}
        async with httpx.AsyncClient() as http:
            anonymous = await http.post(url, json=init, headers=accept)
            wrong = await http.post(
                url, json=init, headers={**accept, "Authorization": "Bearer s3cret-tokeN"}
            )
            right = await http.post(
                url, json=init, headers={**accept, "Authorization": "Bearer s3cret-token"}
            )
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert "Authorization: Bearer <token>" in banner
    again = next(line for line in banner.splitlines() if line.startswith("This server again:"))
    assert again.startswith("This server again: TOOLWEAVE_SERVE_TOKEN=<token> ")
    assert "--token" not in banner and "s3cret" not in banner
    assert anonymous.status_code == 401 and wrong.status_code == 401
    assert right.status_code == 200 and right.json()["result"]["serverInfo"]["name"] == "toolweave"


def test_a_default_provider_without_its_extra_is_left_out_and_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from toolweave import _extras
    from toolweave.errors import MissingDependency

    monkeypatch.setitem(_extras.EXTRA_MODULES, "memory", ("no_such_module_for_memory",))
    host = ToolHost(HostConfig(data_dir=tmp_path))
    assert [p.name for p in host.providers] == ["builtins", "kb", "skills"]
    assert host.notes == [
        "memory not served: the 'memory' provider needs 'no_such_module_for_memory', which is "
        "not installed: pip install 'toolweave[memory]'",
        "notes not served: the 'notes' provider needs 'no_such_module_for_memory', which is "
        "not installed: pip install 'toolweave[memory]'",
    ]
    chosen = parse_config({"serve": {"providers": ["memory"], "data_dir": str(tmp_path)}})
    with pytest.raises(MissingDependency, match=r"pip install 'toolweave\[memory\]'"):
        ToolHost(chosen)
