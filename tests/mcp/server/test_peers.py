"""Real peers against our server: the official conformance suite, the official Python SDK client
and the MCP Inspector CLI, over stdio and Streamable HTTP."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.peers.node_platform import SKIP_REASON, find_node

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
PEERS = ROOT / "tests" / "peers" / "node_modules"
NODE = find_node(PEERS) or Path("node")
"""Node 22 for the npm peers: this platform's `node-<os>-<arch>` package or the system node."""

needs_node = pytest.mark.skipif(not find_node(PEERS), reason=SKIP_REASON)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_http(script: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    """Start an example over HTTP; return once uvicorn reports it is listening."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(script), *args, "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if "Uvicorn running on" in line:
            return proc, f"http://127.0.0.1:{port}/mcp"
    proc.kill()
    raise RuntimeError(f"{script.name} exited before listening (code {proc.wait()})")


def stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def conformance_url() -> Iterator[str]:
    proc, url = start_http(EXAMPLES / "mcp_conformance_server.py")
    try:
        yield url
    finally:
        stop(proc)


def node(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(cwd or ROOT), "PATH": f"{NODE.parent}:{os.environ['PATH']}"}
    return subprocess.run(
        [str(NODE), *args], capture_output=True, text=True, timeout=120, cwd=cwd, env=env
    )


@needs_node
@pytest.mark.parametrize(
    "selection",
    [
        ("--suite", "all"),  # every server scenario, extensions (tasks, skills) included
        ("--requirements", "2026-07-28"),  # exactly what the current revision requires
        ("--requirements", "2025-11-25"),  # and what the handshake era requires
    ],
    ids=["all", "2026-07-28", "2025-11-25"],
)
def test_conformance_suite(
    conformance_url: str, tmp_path: Path, selection: tuple[str, str]
) -> None:
    suite = str(PEERS / ".bin" / "conformance")
    out = node(suite, "server", "--url", conformance_url, *selection, cwd=tmp_path)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    total = [line for line in out.stdout.splitlines() if line.startswith("Total:")]
    assert total and total[-1].endswith(" passed, 0 failed"), out.stdout[-4000:]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_official_client_over_stdio(mode: str) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=[str(EXAMPLES / "weather_server.py")]
    )
    async with Client(params, mode=mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        result = await client.call_tool("celsius_to_fahrenheit", {"celsius": 30})
        weather = await client.call_tool("get_weather", {"city": "北京"})
        prompt = await client.get_prompt("umbrella_advice", {"city": "上海"})
    assert set(tools) == {"celsius_to_fahrenheit", "get_weather"}
    assert tools["get_weather"].output_schema is not None
    assert result.structured_content == {"result": 86.0}
    assert weather.structured_content is not None
    assert weather.structured_content["condition"] == "晴"
    assert "上海" in prompt.messages[0].content.text  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_official_client_over_http(conformance_url: str, mode: str) -> None:
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with Client(conformance_url, mode=mode) as client:
        tools = (await client.list_tools()).tools
        text = await client.call_tool("test_simple_text", {})
        failed = await client.call_tool("test_error_handling", {})
        token = await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        resource = await client.read_resource("test://template/7/data")
    assert len(tools) >= 14
    assert text.content[0].text == "This is a simple text response for testing."  # type: ignore[union-attr]
    assert failed.is_error is True
    assert progress == [0, 50, 100] and token.content
    assert json.loads(resource.contents[0].text)["id"] == "7"  # type: ignore[union-attr]


async def test_probe_over_stdio_never_writes(tmp_path: Path) -> None:
    script = str(EXAMPLES / "probe_file_writer.py")
    params = StdioServerParameters(command=sys.executable, args=[script, "--root", str(tmp_path)])
    async with Client(params, mode="legacy") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        probe = await client.call_tool(
            "write_file",
            {"path": "a.txt", "content": "hi"},
            meta={"forge.permission_patterns": True},
        )
        dotted = await client.call_tool(
            "write_file",
            {"path": "notes/../a.txt", "content": "hi"},
            meta={"forge.permission_patterns": True},
        )
        assert not (tmp_path / "a.txt").exists()
        escaped = await client.call_tool("write_file", {"path": "../x.txt", "content": "no"})
        written = await client.call_tool("write_file", {"path": "a.txt", "content": "hi"})
    assert tools["write_file"].meta == {"forge.supports_permission_patterns": True}
    assert tools["read_file"].meta is None
    assert probe.content == []
    assert probe.meta == {"forge.patterns": ["write:a.txt"], "forge.always": ["fs:write"]}
    assert dotted.meta == probe.meta  # patterns are canonical: `..` cannot dodge a rule
    assert escaped.is_error is True and "outside" in escaped.content[0].text  # type: ignore[union-attr]
    assert written.is_error is False and (tmp_path / "a.txt").read_text() == "hi"


def inspector(*args: str, cwd: Path) -> Any:
    out = node(str(PEERS / ".bin" / "mcp-inspector"), "--cli", *args, cwd=cwd)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    return json.loads(out.stdout)


@needs_node
def test_inspector_cli_over_stdio_and_http(conformance_url: str, tmp_path: Path) -> None:
    stdio = [sys.executable, str(EXAMPLES / "weather_server.py")]
    listed = inspector(*stdio, "--method", "tools/list", cwd=tmp_path)
    called = inspector(
        *stdio,
        "--method",
        "tools/call",
        "--tool-name",
        "celsius_to_fahrenheit",
        "--tool-arg",
        "celsius=100",
        cwd=tmp_path,
    )
    http_listed = inspector(conformance_url, "--method", "tools/list", cwd=tmp_path)
    http_called = inspector(
        conformance_url, "--method", "tools/call", "--tool-name", "test_simple_text", cwd=tmp_path
    )
    assert sorted(t["name"] for t in listed["tools"]) == ["celsius_to_fahrenheit", "get_weather"]
    assert called["structuredContent"] == {"result": 212.0}
    assert any(t["name"] == "test_reconnection" for t in http_listed["tools"])
    assert http_called["content"][0]["text"].startswith("This is a simple text")


async def test_gateway_proxies_http_server_with_progress_and_logs(conformance_url: str) -> None:
    from toolweave.host import ToolHost, parse_config
    from toolweave.mcp.server.testing import connect

    host = ToolHost(
        parse_config(
            {
                "serve": {
                    "providers": [],
                    "rules": {"allow": ["conf__*"]},
                },  # undeclared: destructive
                "mcpServers": {"conf": {"url": conformance_url}},
            }
        )
    )
    try:
        async with connect(host.server) as client:
            names = [t["name"] for t in await client.list_tools()]
            result = await client.call_tool("conf__test_tool_with_progress", progress=True)
            failed = await client.call_tool("conf__test_error_handling")
            image = await client.call_tool("conf__test_image_content")
    finally:
        await host.close()
    assert "conf__test_reconnection" in names and "conf__json_schema_2020_12_tool" in names
    assert [p for p, _, _ in client.progress] == [0, 50, 100]
    assert result["content"][0]["type"] == "text"
    assert failed["isError"] is True
    assert image["content"][0]["mimeType"] == "image/png"
