"""`toolweave serve` matches path rules on what the filesystem tools open, and hides what a rule
denies outright; driven by the official MCP SDK client over Streamable HTTP and over stdio.

The jail is not the server's working directory, so a rule checked against the working
directory would miss `<jail>/secret.txt` (absolute) and a link to it: both must be denied.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import types
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.host.test_governance import _serve as serve_http

SECRET = "机密 SECRET"
SRC = Path(__file__).resolve().parents[2] / "src"
TOOLWEAVE = Path(sys.executable).with_name("toolweave")
RULES = {"deny": ["read_file(secret.txt)", "write_file", "file_info"]}


@pytest.fixture
def jail(tmp_path: Path) -> Path:
    root = tmp_path / "工作区"
    (root / "docs").mkdir(parents=True)
    (root / "secret.txt").write_text(SECRET, encoding="utf-8")
    (root / "docs" / "ok.md").write_text("公开 public", encoding="utf-8")
    (root / "alias").symlink_to("secret.txt")
    (root / "docs" / "abs_alias").symlink_to(root / "secret.txt")
    return root


def attempts(jail: Path) -> list[str]:
    return ["secret.txt", str(jail / "secret.txt"), "alias", "docs/abs_alias", "docs/../secret.txt"]


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def check(client: Client, jail: Path) -> None:
    names = {t.name for t in (await client.list_tools()).tools}
    assert {"read_file", "edit_file", "list_dir"} <= names
    assert "write_file" not in names and "file_info" not in names  # denied outright: hidden
    for path in attempts(jail):
        refused = await client.call_tool("read_file", {"path": path})
        assert refused.is_error and SECRET not in _text(refused), path
        assert "read_file(secret.txt)" in _text(refused), _text(refused)
    fine = await client.call_tool("read_file", {"path": str(jail / "docs" / "ok.md")})
    assert not fine.is_error and "公开 public" in _text(fine)


async def test_rules_see_the_opened_path_over_http(tmp_path: Path, jail: Path) -> None:
    assert not str(jail).startswith(os.getcwd())  # the jail is not the working directory
    serve = {"providers": ["builtins"], "rules": RULES, "data_dir": str(tmp_path / "data")}
    async for url in serve_http(tmp_path, serve, {"builtins": {"root": str(jail)}}):
        async with Client(url, mode="legacy") as client:
            await check(client, jail)


async def test_rules_see_the_opened_path_over_stdio(tmp_path: Path, jail: Path) -> None:
    config = tmp_path / "toolweave.toml"
    config.write_text(
        f'[serve]\nproviders = ["builtins"]\ndata_dir = {json.dumps(str(tmp_path / "data"))}\n'
        f"[serve.rules]\ndeny = {json.dumps(RULES['deny'])}\n"
        f"[builtins]\nroot = {json.dumps(str(jail), ensure_ascii=False)}\n",
        encoding="utf-8",
    )
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    params = StdioServerParameters(
        command=str(TOOLWEAVE),
        args=["serve", "--stdio", "--config", str(config)],
        cwd=elsewhere,
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PYTHONPATH": str(SRC)},
    )
    async with Client(params, mode="auto") as client:
        await check(client, jail)
