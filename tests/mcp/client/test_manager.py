"""MCPManager, lazy two-phase loading and the self-management tools against real servers:
server-everything, server-filesystem and server-memory on Node 22."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.client.mcp_peers import (
    EVERYTHING,
    FILESYSTEM,
    MEMORY,
    NODE,
    RAW_SERVER,
    requires_node,
    skip_without_node,
)
from toolweave.errors import ConfigError
from toolweave.mcp import (
    MCPManager,
    MCPTool,
    ServerConfig,
    load_config,
    self_management_tools,
)
from toolweave.mcp.toolset import self_tools
from toolweave.tools import ToolContext, ToolRegistry, tool_def


def config(tmp_path: Path, *, broken: bool = False) -> dict[str, Any]:
    (tmp_path / "files").mkdir(exist_ok=True)
    (tmp_path / "files" / "hello.txt").write_text("hello file")
    servers: dict[str, Any] = {
        "everything": {"command": NODE, "args": [EVERYTHING]},
        "fs": {"command": NODE, "args": [FILESYSTEM, str(tmp_path / "files")]},
        "memory": {
            "command": NODE,
            "args": [MEMORY],
            "env": {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")},
        },
    }
    if broken:
        servers["broken"] = {"command": "/nonexistent/server"}
    return {"mcpServers": servers}


@pytest.fixture
async def manager(tmp_path: Path) -> AsyncIterator[MCPManager]:
    skip_without_node()
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(config(tmp_path, broken=True)))
    async with MCPManager.from_config(path) as started:
        yield started


async def test_concurrent_start_with_one_broken_server(manager: MCPManager) -> None:
    assert set(manager.errors) == {"broken"}
    assert "could not start" in manager.errors["broken"]
    connected = sorted(n for n, s in manager.servers.items() if s.connected)
    assert connected == ["everything", "fs", "memory"]
    names = [t.name for t in manager.tools()]
    assert names == sorted(names)
    same = manager.tools()
    assert await manager.start() == manager.errors  # again: only the broken one is retried
    assert manager.tools() == same
    assert {"everything__echo", "fs__read_text_file", "memory__create_entities"} <= set(names)


async def test_eager_registry_calls_through(manager: MCPManager, tmp_path: Path) -> None:
    registry = ToolRegistry()
    manager.attach(registry)
    assert len(registry) == len(manager.tools())
    path = str(tmp_path / "files" / "hello.txt")
    read = await registry.invoke("fs__read_text_file", {"path": path})
    assert read.ok and "hello file" in read.result.text
    echo = registry.get("everything__echo")
    assert isinstance(echo, MCPTool) and echo.annotations.read_only
    created = await registry.invoke(
        "memory__create_entities",
        {"entities": [{"name": "Ada", "entityType": "person", "observations": ["math"]}]},
    )
    assert created.ok and "Ada" in created.result.text
    await manager.remove("memory")
    assert not any(n.startswith("memory__") for n in registry.names())
    manager.detach(registry)
    assert len(registry) == 0


async def test_lazy_mode_discover_then_load_into_the_session(manager: MCPManager) -> None:
    shared = ToolRegistry()
    for t in manager.model_tools(lazy=True):
        shared.register(t)
    assert shared.names() == ["mcp_discover", "mcp_load"]
    session = shared.overlay()
    ctx = ToolContext(extras={"registry": session})
    listing = (await shared.invoke("mcp_discover", {}, ctx)).result.text
    assert "everything: " in listing and "- fs__read_text_file: " in listing
    assert "broken: unavailable" in listing
    narrowed = (await shared.invoke("mcp_discover", {"query": "entities"}, ctx)).result.text
    assert "memory__create_entities" in narrowed and "fs__read_text_file" not in narrowed
    loaded = await shared.invoke("mcp_load", {"tools": ["everything__echo", "fs__*", "nope"]}, ctx)
    assert "Loaded: " in loaded.result.text and "Unknown: nope" in loaded.result.text
    assert "everything__echo" in session and "fs__list_directory" in session
    assert "everything__echo" not in shared  # other sessions are untouched
    echo = await session.invoke("everything__echo", {"message": "lazy"}, ctx)
    assert echo.result.text == "Echo: lazy"
    again = await shared.invoke("mcp_load", {"tools": ["everything__echo"]}, ctx)
    assert "Already loaded" in again.result.text


async def test_lazy_mode_sends_at_most_15_percent_of_eager_bytes(manager: MCPManager) -> None:
    def size(tools: list[Any]) -> int:
        """Bytes of the tool definitions a provider request carries on the first turn."""
        defs = [tool_def(t) for t in tools]
        wire = [
            {"name": d.name, "description": d.description, "parameters": d.parameters} for d in defs
        ]
        return len(json.dumps(wire, sort_keys=True).encode())

    eager = size(manager.model_tools(lazy=False))
    lazy = size(manager.model_tools(lazy=True))
    assert lazy <= 0.15 * eager, (lazy, eager)


@requires_node
async def test_filters_by_prefix_list_and_keyword(tmp_path: Path) -> None:
    raw = {"mcpServers": {"everything": {"command": NODE, "args": [EVERYTHING]}}}
    async with MCPManager.from_config(raw, include=["get-*", "echo"], exclude=["~image"]) as m:
        names = {t.name for t in m.tools()}
    assert "everything__echo" in names and "everything__get-sum" in names
    assert "everything__get-tiny-image" not in names
    assert "everything__toggle-simulated-logging" not in names


def test_config_validation_names_the_field() -> None:
    with pytest.raises(ValueError, match=r"mcpServers\.x: give exactly one of"):
        load_config({"mcpServers": {"x": {"command": "a", "url": "http://b"}}})
    with pytest.raises(ValueError, match=r"mcpServers\.x\.args must be a list"):
        load_config({"mcpServers": {"x": {"command": "a", "args": "oops"}}})
    with pytest.raises(ValueError, match="server name must be 1-64 printable"):
        load_config({"mcpServers": {"bad\nname": {"command": "a"}}})
    parsed = load_config({"mcpServers": {"web": {"url": "http://h/mcp", "headers": {"A": "1"}}}})
    assert parsed["web"].to_dict() == {"url": "http://h/mcp", "headers": {"A": "1"}}


@requires_node
async def test_self_management_tools_persist_and_roll_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"other": 1, "mcpServers": {"ghost": {"command": "/nope"}}}))
    path.chmod(0o640)
    async with MCPManager.from_config(path) as manager:
        registry = ToolRegistry()
        for t in self_management_tools(manager):
            registry.register(t)
        manager.attach(registry)
        assert "ghost" in manager.errors

        added = await registry.invoke(
            "mcp_add",
            {"name": "raw", "command": sys.executable, "args": [RAW_SERVER], "env": ["A=1"]},
        )
        assert added.ok and "Added 'raw'" in added.result.text, added.result.text
        saved = json.loads(path.read_text())
        assert saved["other"] == 1  # unrelated keys survive
        assert path.stat().st_mode & 0o777 == 0o640  # and so do the file's permissions
        assert saved["mcpServers"]["raw"]["env"] == {"A": "1"}
        assert "raw__echo" in registry

        listing = (await registry.invoke("mcp_list", {})).result.text
        assert "raw (" in listing and "connected, 9 tool(s)" in listing
        assert "ghost (/nope): failed" in listing

        bad = await registry.invoke("mcp_add", {"name": "bad name!", "command": "x"})
        assert bad.result.is_error and "Invalid name" in bad.result.text
        dead = await registry.invoke("mcp_add", {"name": "dead", "command": "/nonexistent"})
        assert dead.result.is_error and "did not connect" in dead.result.text
        assert "dead" not in manager.servers
        assert "dead" not in json.loads(path.read_text())["mcpServers"]
        both = await registry.invoke("mcp_add", {"name": "y", "command": "x", "url": "http://h"})
        assert both.result.is_error and "exactly one of" in both.result.text
        pairs = await registry.invoke("mcp_add", {"name": "y", "command": "x", "env": ["NOEQ"]})
        assert pairs.result.is_error and "env: 'NOEQ' is not KEY=VALUE" in pairs.result.text

        # A never-connected server can still be removed from the file.
        gone = await registry.invoke("mcp_remove", {"name": "ghost"})
        assert gone.ok and "ghost" not in json.loads(path.read_text())["mcpServers"]

        # reconnect re-reads the definition from the file.
        data = json.loads(path.read_text())
        data["mcpServers"]["raw"]["args"] = [RAW_SERVER, "--page-size", "3"]
        path.write_text(json.dumps(data))
        again = await registry.invoke("mcp_reconnect", {"name": "raw"})
        assert again.ok and "9 tool(s)" in again.result.text
        assert manager.servers["raw"].config.args[-1] == "3"

        # A failed write rolls the runtime change back.
        def disk_full(path: Path, data: dict[str, Any]) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(self_tools, "write_config_file", disk_full)
        failed = await registry.invoke(
            "mcp_add", {"name": "raw2", "command": sys.executable, "args": [RAW_SERVER]}
        )
        assert failed.result.is_error and "was not added" in failed.result.text
        assert "raw2" not in manager.servers and "raw2__echo" not in registry
        kept = await registry.invoke("mcp_remove", {"name": "raw"})
        assert kept.result.is_error and "was kept" in kept.result.text
        assert manager.servers["raw"].connected and "raw__echo" in registry
        monkeypatch.undo()

        removed = await registry.invoke("mcp_remove", {"name": "raw"})
        assert removed.ok and "raw__echo" not in registry
        assert json.loads(path.read_text())["mcpServers"] == {}


async def test_add_and_reconnect_at_runtime() -> None:
    manager = MCPManager()
    state = await manager.add(ServerConfig("raw", command=sys.executable, args=[RAW_SERVER]))
    try:
        assert state.connected and len(state.tools) == 9
        client = state.client
        assert client is not None
        old_pid = client.server_pid
        await manager.reconnect("raw")
        assert client.server_pid not in (None, old_pid)
        with pytest.raises(ValueError, match="already exists"):
            await manager.add(ServerConfig("raw", command=sys.executable))
    finally:
        await manager.close()


async def test_colliding_safe_names_keep_the_first_and_warn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    twins = ServerConfig("raw", command=sys.executable, args=[RAW_SERVER, "--twins"])
    async with MCPManager({"raw": twins}) as manager:
        bridged = [t for t in manager.tools() if t.name == "raw__bad_structured"]
        assert [t.remote_name for t in bridged] == ["bad.structured"]
        assert len(manager.tools()) == 9  # ten on the server, one dropped
    assert any("both become 'raw__bad_structured'" in r.message for r in caplog.records)


def test_missing_config_file_is_an_error_not_zero_servers(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    with pytest.raises(ConfigError, match=r"missing\.json does not exist"):
        MCPManager.from_config(missing)


def test_vscode_servers_format_loads_like_claude_desktop(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps(
            {
                "inputs": [],
                "servers": {
                    "everything": {"type": "stdio", "command": NODE, "args": [EVERYTHING]},
                    "web": {"type": "http", "url": "https://example.invalid/mcp"},
                },
            }
        )
    )
    parsed = load_config(path)
    assert parsed["everything"].command == NODE and parsed["everything"].args == [EVERYTHING]
    assert parsed["web"].url == "https://example.invalid/mcp"
    with pytest.raises(ConfigError, match="both `mcpServers` and `servers`"):
        load_config({"mcpServers": {}, "servers": {}})
    path.write_text(json.dumps({"mcp": {"x": {"command": "a"}}}))
    with pytest.raises(ConfigError, match=r"no `mcpServers` \(Claude Desktop\) or `servers`"):
        load_config(path)


def test_field_types_are_validated_at_load() -> None:
    cases = [
        ({"command": ["npx", "-y"]}, r"mcpServers\.x\.command must be a string"),
        ({"url": "ftp://host/mcp"}, r"mcpServers\.x\.url must be an http:// or https:// URL"),
        ({"url": 42}, r"mcpServers\.x\.url must be an http"),
        ({"command": "a", "cwd": 3}, r"mcpServers\.x\.cwd must be a directory path"),
        ({"command": "a", "timeout": True}, r"mcpServers\.x\.timeout must be a positive"),
        ({"command": "a", "type": "http"}, r"mcpServers\.x\.type is 'http' but the entry has"),
        ({"url": "http://h/mcp", "type": "ws"}, r"use 'http' or 'sse' or 'streamable-http'"),
    ]
    for entry, message in cases:
        with pytest.raises(ConfigError, match=message):
            load_config({"mcpServers": {"x": entry}})


@requires_node
async def test_self_management_writes_back_in_the_files_own_format(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"servers": {}}))
    async with MCPManager.from_config(path) as manager:
        tools = {t.name: t for t in self_management_tools(manager)}
        result = await tools["mcp_add"].execute(
            {"name": "every", "command": NODE, "args": [EVERYTHING]}, ToolContext()
        )
        assert not result.is_error, result.text
    saved = json.loads(path.read_text())
    assert set(saved) == {"servers"} and saved["servers"]["every"]["command"] == NODE
