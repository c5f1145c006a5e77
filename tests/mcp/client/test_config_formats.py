"""Every MCP config format hosts write: JSONC, names with spaces, bare `.mcp.json`, `serverUrl`,
variables and VS Code `inputs`; and every real config in the corpus parses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolweave.errors import ConfigError
from toolweave.mcp.client.config import load_config, server_prefix
from toolweave.mcp.client.config_values import InputSpec

CORPUS = Path("/work/shared/corpus/mcp-configs")

VSCODE = """// VS Code MCP servers
{
  "inputs": [
    {"type": "promptString", "id": "obsidian-key", "description": "Obsidian API key",
     "password": true},
    {"type": "promptString", "id": "vault", "description": "Vault name", "default": "notes"},
  ],
  "servers": {
    /* a block comment
       across lines */
    "Obsidian Rest MCP": {
      "type": "stdio",
      "command": "uvx",
      "args": ["mcp-obsidian", "--vault", "${input:vault}", "--url=http://x//y"], // trailing
      "env": {"OBSIDIAN_API_KEY": "${input:obsidian-key}", "ROOT": "${workspaceFolder}"},
    },
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/",
      "headers": {"Authorization": "Bearer ${input:obsidian-key}"},
    },
  },
}
"""


def test_vscode_jsonc_with_inputs_asked_once_each(tmp_path: Path) -> None:
    path = tmp_path / "project" / ".vscode" / "mcp.json"
    path.parent.mkdir(parents=True)
    path.write_text(VSCODE, encoding="utf-8")
    asked: list[InputSpec] = []

    def ask(spec: InputSpec) -> str:
        asked.append(spec)
        return {"obsidian-key": "s3cret", "vault": "工作"}[spec.id]

    servers = load_config(path, ask=ask)
    assert sorted(servers) == ["Obsidian_Rest_MCP", "github"]
    obsidian = servers["Obsidian_Rest_MCP"]
    assert obsidian.label == "Obsidian Rest MCP"
    assert obsidian.args == ["mcp-obsidian", "--vault", "工作", "--url=http://x//y"]
    assert obsidian.env == {"OBSIDIAN_API_KEY": "s3cret", "ROOT": str(tmp_path / "project")}
    assert servers["github"].headers == {"Authorization": "Bearer s3cret"}
    assert [s.id for s in asked] == ["vault", "obsidian-key"]  # each input asked for once
    assert asked[1].password and not asked[0].password and asked[0].default == "notes"


def test_inputs_are_refused_where_nobody_can_ask(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(VSCODE, encoding="utf-8")
    with pytest.raises(ConfigError) as error:
        load_config(path)
    message = str(error.value)
    assert "${input:vault}" in message and "Vault name" in message
    assert "servers.Obsidian Rest MCP.args[2]" in message and "toolweave serve" in message
    with pytest.raises(ConfigError, match="no entry with id 'nope'"):
        load_config({"servers": {"a": {"command": "${input:nope}"}}}, ask=lambda s: "x")


def test_variables_expand_in_every_field(tmp_path: Path) -> None:
    environ = {"HOME": "/home/ann", "TOKEN": "t-1", "EMPTY": ""}
    raw = {
        "mcpServers": {
            "api": {
                "url": "https://${HOST:-api.example.com}/mcp",
                "headers": {"Authorization": "Bearer ${TOKEN}", "X-Empty": "${EMPTY:-dflt}"},
            },
            "fs": {
                "command": "${HOME}/bin/server",
                "args": ["${userHome}/data", "${workspaceFolder}", "${env:MISSING}x"],
                "env": {"KEY": "${TOKEN}", "LITERAL": "$TOKEN"},
                "cwd": "${workspaceFolder}/sub",
            },
        }
    }
    servers = load_config(raw, workspace=tmp_path, environ=environ)
    assert servers["api"].url == "https://api.example.com/mcp"
    assert servers["api"].headers == {"Authorization": "Bearer t-1", "X-Empty": "dflt"}
    fs = servers["fs"]
    assert fs.command == "/home/ann/bin/server"
    assert fs.args == ["/home/ann/data", str(tmp_path), "x"]
    assert fs.env == {"KEY": "t-1", "LITERAL": "$TOKEN"}
    assert fs.cwd == f"{tmp_path}/sub"
    with pytest.raises(ConfigError, match=r"mcpServers\.x\.env\.K uses \$\{NOT_SET\}"):
        load_config({"mcpServers": {"x": {"command": "a", "env": {"K": "${NOT_SET}"}}}}, environ={})
    with pytest.raises(ConfigError, match="does not expand"):
        load_config({"mcpServers": {"x": {"command": "${command:pick}"}}}, environ={})


def test_bare_plugin_config_server_url_and_sse_type(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(
        json.dumps(
            {
                "context7": {"type": "sse", "url": "https://mcp.context7.com/sse"},
                "docs": {"serverUrl": "https://developers.openai.com/mcp"},
                "local": {"command": "node", "args": ["${CLAUDE_PLUGIN_ROOT:-.}/server.js"]},
            }
        ),
        encoding="utf-8",
    )
    servers = load_config(path, environ={})
    assert servers["context7"].transport == "sse"
    assert servers["context7"].to_dict() == {"url": "https://mcp.context7.com/sse", "type": "sse"}
    assert servers["docs"].url == "https://developers.openai.com/mcp"
    assert servers["local"].args == ["./server.js"]
    with pytest.raises(ConfigError, match="no `mcpServers`"):
        path.write_text('{"something": 1}', encoding="utf-8")
        load_config(path)


def test_derived_prefixes_and_collisions() -> None:
    assert server_prefix("Obsidian Rest MCP") == "Obsidian_Rest_MCP"
    assert server_prefix("google-drive") == "google-drive"
    assert server_prefix("文件 system (local)") == "system_local"
    assert server_prefix("文件系统").startswith("server_")
    assert server_prefix("文件系统") == server_prefix("文件系统")
    with pytest.raises(ConfigError, match="both get the tool prefix 'a_b'"):
        load_config({"mcpServers": {"a b": {"command": "x"}, "a_b": {"command": "y"}}})


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus not found at {CORPUS}")
def test_every_real_config_parses() -> None:
    files = sorted(p for p in CORPUS.rglob("*.json") if p.name != "INDEX.json")
    environ = {"HOME": "/home/u"}
    parsed = 0
    for file in files:
        servers = load_config(file, ask=lambda spec: f"<{spec.id}>", environ=environ)
        assert servers, file
        parsed += len(servers)
    print(f"\nMCP config corpus: {len(files)} files, {parsed} servers")
    assert len(files) >= 17


def test_the_cli_asks_and_hides_a_password(monkeypatch: pytest.MonkeyPatch) -> None:
    import getpass
    import io
    import sys

    from toolweave.cli.agent_tools import ask_input

    hidden: list[str] = []

    def fake_getpass(prompt: str = "", stream: object = None) -> str:
        hidden.append(prompt)
        return "s3cret"

    monkeypatch.setattr(getpass, "getpass", fake_getpass)
    assert ask_input(InputSpec("key", "API key", password=True)) == "s3cret"
    assert hidden == [""]  # read without echo, through getpass (rich prints the label itself)
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n工作区\n"))
    assert ask_input(InputSpec("vault", "Vault", default="notes")) == "notes"
    assert ask_input(InputSpec("name", "Name")) == "工作区"


async def test_self_management_edits_a_jsonc_file_with_a_spaced_name(tmp_path: Path) -> None:
    import sys

    from tests.mcp.client.mcp_peers import RAW_SERVER
    from toolweave.mcp.client.manager import MCPManager
    from toolweave.mcp.toolset.self_tools import self_management_tools
    from toolweave.tools import ToolContext

    path = tmp_path / ".vscode" / "mcp.json"
    path.parent.mkdir()
    entry = json.dumps({"command": sys.executable, "args": [RAW_SERVER]})
    path.write_text(f'{{\n  // mine\n  "servers": {{"Raw Server": {entry},}},\n}}\n', "utf-8")
    async with MCPManager.from_config(path) as manager:
        assert await manager.start() == {}
        assert "Raw_Server__echo" in {t.name for t in manager.tools()}
        tools = {t.name: t for t in self_management_tools(manager)}
        removed = await tools["mcp_remove"].execute({"name": "Raw_Server"}, ToolContext())
    assert not removed.is_error, removed.text
    assert json.loads(path.read_text("utf-8")) == {"servers": {}}
