"""Tools that let the model manage MCP servers: `mcp_list`, `mcp_add`, `mcp_remove`,
`mcp_reconnect`.

They are off unless the host asks for them (`self_management_tools(...)`), because adding a
server means running a command. A change touches two places, the running manager and the
`mcpServers` file, and must never leave them disagreeing: the runtime change happens first, the
file is written atomically (temp file + rename, other keys preserved), and a failed write undoes
the runtime change. Removing a server that never connected still removes it from the file, and
reconnecting re-reads the server's definition from the file so hand edits take effect.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolweave.mcp.client.config import SERVER_NAME, ServerConfig, server_prefix, servers_key
from toolweave.mcp.client.config_values import parse_jsonc
from toolweave.mcp.client.servers import ManagedServers
from toolweave.storage.files import atomic_write
from toolweave.tools.base import Tool
from toolweave.tools.function_tool import FunctionTool
from toolweave.tools.result import ToolResult


def parse_pairs(items: list[str] | None, field_name: str) -> dict[str, str]:
    """`["KEY=VALUE", ...]` as a dict; a malformed item names the field and the fix."""
    pairs: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{field_name}: {item!r} is not KEY=VALUE")
        pairs[key.strip()] = value
    return pairs


def read_config_file(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    raw = parse_jsonc(path.read_text(encoding="utf-8-sig") or "{}", str(path))
    if not isinstance(raw, dict):
        raise ValueError(f"{path} must hold a JSON object with `mcpServers`")
    return raw


def write_config_file(path: Path, data: dict[str, Any]) -> None:
    """Write atomically: readers see the old file or the new one, never half of it. An existing
    file keeps its permission bits (a new one is private: it may hold env secrets)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _update_file(path: Path, name: str, entry: dict[str, Any] | None) -> None:
    data = read_config_file(path)
    key = servers_key(data)
    servers = data.get(key)
    servers = dict(servers) if isinstance(servers, dict) else {}
    if entry is None:  # the name as written, which may differ from its tool prefix `name`
        for written in [k for k in servers if k == name or server_prefix(k) == name]:
            servers.pop(written)
    else:
        servers[name] = entry
    data[key] = servers
    write_config_file(path, data)


def _file_servers(path: Path) -> dict[str, Any]:
    data = read_config_file(path)
    return data.get(servers_key(data)) or {}


def self_management_tools(
    manager: ManagedServers, config_path: str | Path | None = None
) -> list[Tool]:
    """The four management tools for `manager`, persisting to `config_path` (default: the
    manager's own config file)."""
    chosen = config_path if config_path is not None else manager.config_path
    if chosen is None:
        raise ValueError("self-management tools need a config file: pass config_path=...")
    path = Path(chosen)

    async def mcp_list() -> str:
        """List configured MCP servers with their status and tool counts."""
        lines = []
        for name, state in sorted(manager.servers.items()):
            kind = state.config.command or state.config.url
            status = (
                f"connected, {len(state.tools)} tool(s)"
                if state.connected
                else (f"failed: {state.error}" if state.error else "not connected")
            )
            lines.append(f"{name} ({kind}): {status}")
        return "\n".join(lines) or "No MCP servers are configured."

    async def mcp_add(
        name: str,
        command: str | None = None,
        args: list[str] | None = None,
        env: list[str] | None = None,
        cwd: str | None = None,
        url: str | None = None,
        headers: list[str] | None = None,
    ) -> ToolResult:
        """Add an MCP server, connect it now and save it to the config file.

        Args:
            name: Server name: letters, digits, '_' or '-' (it prefixes its tool names).
            command: Executable for a stdio server (give this or url).
            args: Arguments for the command.
            env: Environment variables as KEY=VALUE strings.
            cwd: Working directory for the command.
            url: Streamable HTTP endpoint (give this or command).
            headers: HTTP headers as KEY=VALUE strings.
        """
        if not SERVER_NAME.match(name):
            return ToolResult.error(f"Invalid name {name!r}: use 1-48 letters, digits, '_' or '-'.")
        if name in manager.servers:
            return ToolResult.error(f"A server named {name!r} exists; remove it first.")
        if bool(command) == bool(url):
            return ToolResult.error("Give exactly one of `command` (stdio) or `url` (HTTP).")
        try:
            entry: dict[str, Any] = {"command": command} if command else {"url": url}
            if args:
                entry["args"] = list(args)
            if env:
                entry["env"] = parse_pairs(env, "env")
            if cwd:
                entry["cwd"] = cwd
            if headers:
                entry["headers"] = parse_pairs(headers, "headers")
            config = ServerConfig.from_dict(name, entry)
        except ValueError as exc:
            return ToolResult.error(f"Invalid server definition: {exc}")
        state = await manager.add(config)
        if not state.connected:
            await manager.remove(name)
            return ToolResult.error(f"Server {name!r} did not connect ({state.error}); not saved.")
        try:
            _update_file(path, name, config.to_dict())
        except (OSError, ValueError) as exc:
            await manager.remove(name)
            return ToolResult.error(f"Could not save {path} ({exc}); the server was not added.")
        return ToolResult.text_result(
            f"Added {name!r} with {len(state.tools)} tool(s): "
            + ", ".join(t.name for t in state.tools)
        )

    async def mcp_remove(name: str) -> ToolResult:
        """Disconnect an MCP server and delete it from the config file.

        Args:
            name: The server to remove.
        """
        removed: ServerConfig | None = None
        if name in manager.servers:
            removed = await manager.remove(name)
        try:
            on_file = any(k == name or server_prefix(k) == name for k in _file_servers(path))
            if on_file:
                _update_file(path, name, None)
        except (OSError, ValueError) as exc:
            if removed is not None:
                await manager.add(removed)
            return ToolResult.error(f"Could not save {path} ({exc}); {name!r} was kept.")
        if removed is None and not on_file:
            return ToolResult.error(f"No MCP server named {name!r}.")
        return ToolResult.text_result(f"Removed {name!r}.")

    async def mcp_reconnect(name: str) -> ToolResult:
        """Reconnect an MCP server using its current definition in the config file.

        Args:
            name: The server to reconnect.
        """
        try:
            entry = _file_servers(path).get(name)
            config = ServerConfig.from_dict(name, entry) if entry is not None else None
        except ValueError as exc:
            return ToolResult.error(f"The definition of {name!r} in {path} is invalid: {exc}")
        if config is None and name not in manager.servers:
            return ToolResult.error(f"No MCP server named {name!r} in {path}.")
        state = await manager.reconnect(name, config)
        if not state.connected:
            return ToolResult.error(f"{name!r} failed to reconnect: {state.error}")
        return ToolResult.text_result(f"Reconnected {name!r}: {len(state.tools)} tool(s).")

    return [
        FunctionTool(mcp_list, read_only=True, idempotent=True, tags=["mcp"]),
        FunctionTool(mcp_add, destructive=False, open_world=True, tags=["mcp"]),
        FunctionTool(mcp_remove, destructive=True, tags=["mcp"]),
        FunctionTool(mcp_reconnect, destructive=False, idempotent=True, tags=["mcp"]),
    ]
