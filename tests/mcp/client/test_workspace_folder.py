"""`${workspaceFolder}` is the folder the config belongs to, as in VS Code, not where toolweave
was started: `<folder>/.vscode/mcp.json` gives `<folder>` (`toolweave run --mcp`), a
toolweave.toml its own folder (`toolweave serve` and `run --config`). The downstream server is
the official SDK's, reporting the arguments and environment it was started with."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from typer.testing import CliRunner

from tests.agent.fake_openai import FakeOpenAI, Reply
from toolweave.cli import app
from toolweave.host import load_host_config
from toolweave.host.doctor import DoctorContext, check_mcp_servers

TOOLWEAVE = Path(sys.executable).with_name("toolweave")
SOURCE = {"PYTHONPATH": str(Path(__file__).resolve().parents[3] / "src")}
WHERE_SERVER = """
import os, sys
from mcp.server.mcpserver import MCPServer

server = MCPServer("where")


@server.tool()
def where() -> str:
    \"\"\"The arguments and ROOT this server was started with.\"\"\"
    return "|".join([*sys.argv[1:], os.environ.get("ROOT", ""), os.getcwd()])


server.run()
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "我的项目"
    (folder / ".vscode").mkdir(parents=True)
    (folder / "data").mkdir()
    (tmp_path / "where_server.py").write_text(WHERE_SERVER, encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # started from another directory than the config's
    return folder


def entry(project: Path) -> dict[str, object]:
    return {
        "command": sys.executable,
        "args": [str(project.parent / "where_server.py"), "${workspaceFolder}/data"],
        "env": {"ROOT": "${workspaceFolder}"},
        "cwd": "${workspaceFolder}",
    }


def expected(project: Path) -> str:
    return f"{project}/data|{project}|{project}"


def test_run_with_a_vscode_mcp_json_uses_the_folder_it_belongs_to(project: Path) -> None:
    config = project / ".vscode" / "mcp.json"
    config.write_text(json.dumps({"servers": {"ws": {"type": "stdio", **entry(project)}}}))
    replies = [Reply(None, [("w", "ws__where", {})]), Reply("done")]
    with FakeOpenAI(replies) as server:
        model = f"openai-compat:{server.base_url}#fake"
        args = ["run", "where?", "-m", model, "--tools", "none", "--mcp", str(config), "--eager"]
        result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert expected(project) in server.requests[1]["messages"][-1]["content"]


def toml(project: Path) -> Path:
    config = project / "toolweave.toml"
    server = entry(project)
    config.write_text(
        "[serve]\nproviders = []\n\n[mcpServers.ws]\n"
        f"command = {json.dumps(server['command'])}\n"
        f"args = {json.dumps(server['args'], ensure_ascii=False)}\n"
        'cwd = "${workspaceFolder}"\n'
        '[mcpServers.ws.env]\nROOT = "${workspaceFolder}"\n',
        encoding="utf-8",
    )
    return config


async def test_serve_expands_it_to_the_folder_of_its_toolweave_toml(project: Path) -> None:
    config = toml(project)
    params = StdioServerParameters(
        command=str(TOOLWEAVE),
        args=["serve", "--stdio", "-c", str(config)],
        cwd=project.parent / "elsewhere",
        env=SOURCE,
    )
    async with Client(params, mode="auto") as client:
        answer = await client.call_tool("ws__where", {})
    assert not answer.is_error
    assert answer.content[0].text == expected(project)  # type: ignore[union-attr]
    assert load_host_config(config).workspace == project
    # `toolweave doctor` starts the server the same way.
    doctor = DoctorContext(config, None, 30.0, load_host_config(config))
    findings = await check_mcp_servers(doctor)
    assert [f.status for f in findings] == ["ok"], findings


def test_run_with_a_toolweave_toml_uses_its_folder(project: Path) -> None:
    config = toml(project)
    replies = [Reply(None, [("w", "ws__where", {})]), Reply("done")]
    with FakeOpenAI(replies) as server:
        model = f"openai-compat:{server.base_url}#fake"
        result = CliRunner().invoke(app, ["run", "where?", "-m", model, "--config", str(config)])
    assert result.exit_code == 0, result.output
    assert expected(project) in server.requests[1]["messages"][-1]["content"]
