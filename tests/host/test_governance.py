"""`toolweave serve` governance: [serve.rules], [serve].hooks and approval through MCP
elicitation, driven by the official MCP SDK client (which answers the elicitations)."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import types
from mcp.client import Client

from toolweave.host import ToolHost, parse_config
from toolweave.host.config import HostConfig
from toolweave.host.providers import base as host_providers
from toolweave.mcp.server.testing import connect
from toolweave.mcp.shared.errors import JSONRPCError
from toolweave.tools import ApprovalRequired, Permission, ToolContext, tool

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@tool(permissions=[Permission.SHELL], primary_arg="command")
def run_command(command: str) -> str:
    """Pretend to run a shell command (returns it)."""
    return f"ran {command}"


@tool
def deploy(target: str, ctx: ToolContext) -> str:
    """Deploy; asks for approval itself before doing anything."""
    if not ctx.tool_call_approved:
        raise ApprovalRequired(f"deploying to {target} is irreversible")
    return f"deployed {target}"


@tool(read_only=True)
def status() -> str:
    """Read-only status."""
    return "ok"


class GovernedProvider:
    name = "governed"

    def __init__(self, config: Any) -> None:
        self.config = config

    async def tools(self) -> list[Any]:
        return [run_command, deploy, status]

    async def close(self) -> None:
        return None


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def _serve(
    tmp_path: Path, serve: dict[str, Any], sections: dict[str, Any] | None = None
) -> AsyncIterator[str]:
    """The URL of a host serving `[serve]` (plus `serve`) and the other `sections` over HTTP."""
    port = _port()
    toml = tmp_path / "toolweave.toml"
    toml.write_text("")  # so relative paths resolve against tmp_path
    config = parse_config(
        {
            "serve": {"providers": ["governed"], "transport": "http", "port": port, **serve},
            **(sections or {}),
        },
        source=toml,
    )
    async for url in serve_config(config):
        yield url


async def serve_config(config: HostConfig) -> AsyncIterator[str]:
    """The URL of a `ToolHost` serving `config` over HTTP, until the caller is done."""
    host = ToolHost(config)
    ready = asyncio.Event()
    task = asyncio.ensure_future(host.serve_http(on_ready=lambda _port: ready.set()))
    await ready.wait()
    try:
        yield host.url
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await host.close()


@pytest.fixture(autouse=True)
def _provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(host_providers.PROVIDERS, "governed", f"{__name__}:GovernedProvider")


class Elicitor:
    def __init__(self, action: str, content: dict[str, Any] | None = None) -> None:
        self.action = action
        self.content = content
        self.messages: list[str] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.messages.append(params.message)
        return types.ElicitResult(action=self.action, content=self.content)  # type: ignore[arg-type]


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def test_ask_goes_to_elicitation_and_accept_approves(tmp_path: Path) -> None:
    rules = {"allow": ["run_command(git *)"], "deny": ["run_command(rm *)"]}
    async for url in _serve(tmp_path, {"rules": rules}):
        accept = Elicitor("accept", {"always": False})
        async with Client(url, mode="legacy", elicitation_callback=accept) as client:
            allowed = await client.call_tool("run_command", {"command": "git status"})
            asked = await client.call_tool("run_command", {"command": "make 构建"})
            denied = await client.call_tool("run_command", {"command": "git log; rm -rf /"})
            fine = await client.call_tool("status", {})
        assert not allowed.is_error and _text(allowed) == "ran git status"
        assert not asked.is_error and _text(asked) == "ran make 构建"
        assert len(accept.messages) == 1 and "make 构建" in accept.messages[0]
        assert denied.is_error and "run_command(rm *)" in _text(denied)
        assert not fine.is_error
        decline = Elicitor("decline")
        async with Client(url, mode="legacy", elicitation_callback=decline) as client:
            refused = await client.call_tool("run_command", {"command": "make"})
        assert refused.is_error and "the approver said no" in _text(refused)


async def test_always_is_remembered_for_the_mcp_session(tmp_path: Path) -> None:
    async for url in _serve(tmp_path, {}):
        always = Elicitor("accept", {"always": True})
        async with Client(url, mode="legacy", elicitation_callback=always) as client:
            first = await client.call_tool("run_command", {"command": "make"})
            second = await client.call_tool("run_command", {"command": "make test"})
        assert not first.is_error and not second.is_error
        assert len(always.messages) == 1


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_without_elicitation_ask_is_refused_with_the_toml_fix(
    tmp_path: Path, mode: str
) -> None:
    async for url in _serve(tmp_path, {}):
        async with Client(url, mode=mode) as client:
            refused = await client.call_tool("run_command", {"command": "make"})
            fine = await client.call_tool("status", {})
        assert refused.is_error
        text = _text(refused)
        assert "toolweave.toml" in text and "[serve.rules]" in text
        assert not fine.is_error


async def test_a_2026_client_is_asked_through_an_input_required_result(tmp_path: Path) -> None:
    async for url in _serve(tmp_path, {}):
        yes, no = Elicitor("accept", {}), Elicitor("decline")
        async with Client(url, mode="auto", elicitation_callback=yes) as client:
            approved = await client.call_tool("run_command", {"command": "make 构建"})
        async with Client(url, mode="auto", elicitation_callback=no) as client:
            refused = await client.call_tool("run_command", {"command": "make"})
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        }
        headers = {
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/call",
            "Mcp-Name": "run_command",
        }
        params = {"name": "run_command", "arguments": {"command": "make"}, "_meta": meta}
        async with httpx.AsyncClient() as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
            asked = (await http.post(url, json=body, headers=headers)).json()["result"]
            retry = {
                **params,
                "inputResponses": {
                    key: {"action": "accept", "content": {}} for key in asked["inputRequests"]
                },
                "requestState": asked["requestState"] + "-TAMPERED",
            }
            body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": retry}
            tampered = (await http.post(url, json=body, headers=headers)).json()
    assert not approved.is_error and _text(approved) == "ran make 构建"
    assert "make 构建" in yes.messages[0]
    assert refused.is_error and "the approver said no" in _text(refused)
    assert asked["resultType"] == "input_required"
    assert tampered["error"]["code"] == -32602 and "requestState" in tampered["error"]["message"]


async def test_approval_required_from_a_tool_goes_the_same_way(tmp_path: Path) -> None:
    async for url in _serve(tmp_path, {}):
        accept = Elicitor("accept", {})
        async with Client(url, mode="legacy", elicitation_callback=accept) as client:
            done = await client.call_tool("deploy", {"target": "生产"})
        assert not done.is_error and _text(done) == "deployed 生产"
        assert "irreversible" in accept.messages[0]
        async with Client(url) as client:
            refused = await client.call_tool("deploy", {"target": "prod"})
        assert refused.is_error and "irreversible" in _text(refused)


async def test_hooks_file_guards_served_tools(tmp_path: Path) -> None:
    hooks = tmp_path / "hooks.json"
    hooks.write_text(
        json.dumps(
            {
                "hooks": {
                    # Events toolweave does not run: skipped with a warning, `serve` goes on.
                    "Setup": [{"hooks": [{"type": "command", "command": "exit 2"}]}],
                    "UserPromptExpansion": [{"hooks": [{"type": "prompt", "prompt": "x"}]}],
                    "PreToolUse": [
                        {
                            "matcher": "run_command",
                            "hooks": [
                                {"type": "command", "command": "echo 'no shell today' >&2; exit 2"}
                            ],
                        }
                    ],
                }
            }
        )
    )
    async for url in _serve(tmp_path, {"hooks": "hooks.json", "rules": {"default": "allow"}}):
        async with Client(url) as client:
            blocked = await client.call_tool("run_command", {"command": "ls"})
            fine = await client.call_tool("status", {})
        assert blocked.is_error and "no shell today" in _text(blocked)
        assert not fine.is_error


def test_bad_serve_rules_name_the_table() -> None:
    with pytest.raises(ValueError, match=r"\[serve.rules\]"):
        parse_config({"serve": {"rules": {"allow": ["bash("]}}})
    with pytest.raises(ValueError, match=r"unknown key"):
        parse_config({"serve": {"rules": {"alow": []}}})


async def test_rules_name_proxied_tools_the_claude_code_way(tmp_path: Path) -> None:
    """`mcp__<server>__<tool>` rules reach tools the gateway proxies as `<server>__<tool>`; a
    tool such a rule denies outright is not even listed, and calling it anyway is refused."""
    config = parse_config(
        {
            "serve": {
                "providers": [],
                "rules": {"deny": ["mcp__weather__get_*"], "allow": ["mcp__weather"]},
            },
            "mcpServers": {
                "weather": {
                    "command": sys.executable,
                    "args": [str(EXAMPLES / "weather_server.py")],
                }
            },
        }
    )
    host = ToolHost(config)
    try:
        async with connect(host.server) as client:
            listed = {t["name"] for t in await client.list_tools()}
            converted = await client.call_tool("weather__celsius_to_fahrenheit", {"celsius": 100})
            with pytest.raises(JSONRPCError, match="weather__get_weather"):
                await client.call_tool("weather__get_weather", {"city": "北京"})
    finally:
        await host.close()
    assert converted["structuredContent"] == {"result": 212.0}
    assert "weather__celsius_to_fahrenheit" in listed and "weather__get_weather" not in listed
