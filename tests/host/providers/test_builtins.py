"""The `builtins` provider in `toolweave serve`, driven by the official MCP SDK client over
stdio: the safe default set, what `[builtins]` switches on, and the shell's fail-closed gate."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from toolweave.host import parse_config

TOOLWEAVE = Path(sys.executable).with_name("toolweave")
SAFE_SET = {
    "edit_file",
    "file_info",
    "list_dir",
    "read_file",
    "search_files",
    "time",
    "todo_write",
    "write_file",
}


def serve(tmp_path: Path, builtins: str = "", rules: str = "") -> StdioServerParameters:
    (tmp_path / "toolweave.toml").write_text(
        f'[serve]\nproviders = ["builtins"]\ndata_dir = "{tmp_path / "data"}"\n'
        f"[serve.rules]\n{rules}\n[builtins]\n{builtins}",
        encoding="utf-8",
    )
    return StdioServerParameters(
        command=str(TOOLWEAVE), args=["serve", "--stdio", "-c", "toolweave.toml"], cwd=tmp_path
    )


def text(result: object) -> str:
    return "\n".join(getattr(c, "text", "") for c in getattr(result, "content", []))


async def test_default_set_is_safe_and_jailed(tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("secret")
    async with Client(serve(tmp_path), mode="auto") as client:
        listed = (await client.list_tools()).tools
        asked = await client.call_tool("write_file", {"path": "笔记.md", "content": "你好 hello"})
    # write_file and edit_file replace what a file held: they say so and ask by default (this
    # client cannot be asked, so the call is refused and names the rule that allows it).
    hints = {t.name: t.annotations.destructive_hint for t in listed if t.annotations}
    assert hints["write_file"] is True and hints["edit_file"] is True
    assert hints["read_file"] is False
    assert asked.is_error and "[serve.rules]" in text(asked)
    assert not (tmp_path / "toolweave-workspace" / "笔记.md").exists()
    allow = 'allow = ["write_file(./**)"]'
    async with Client(serve(tmp_path, rules=allow), mode="auto") as client:
        names = {t.name for t in (await client.list_tools()).tools}
        wrote = await client.call_tool("write_file", {"path": "笔记.md", "content": "你好 hello"})
        read = await client.call_tool("read_file", {"path": "笔记.md"})
        escaped = await client.call_tool("read_file", {"path": "../../outside.txt"})
        todo = await client.call_tool(
            "todo_write", {"todos": [{"content": "ship it", "status": "in_progress"}]}
        )
        now = await client.call_tool("time", {"timezone": "Asia/Shanghai"})
    assert names == SAFE_SET  # no bash, no sql_query, no fetch unless configured
    assert not wrote.is_error and "你好 hello" in text(read)
    assert escaped.is_error and "refused" in text(escaped) and "secret" not in text(escaped)
    assert (tmp_path / "toolweave-workspace" / "笔记.md").read_text() == "你好 hello"
    assert "1 items" in text(todo) and "+08:00" in text(now)


async def test_configured_sql_fetch_and_shell(tmp_path: Path) -> None:
    db = tmp_path / "shop.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE items (name TEXT)")
        conn.execute("INSERT INTO items VALUES ('茶 tea')")
    conn.close()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "victim.txt").write_text("unchanged")
    config = (
        f'root = "{workspace}"\nsql_dsn = "sqlite:///{db}"\nfetch = true\n'
        'shell = true\nshell_allow = ["echo *"]\nwritable = false\n'
    )
    async with Client(serve(tmp_path, config), mode="auto") as client:
        names = {t.name for t in (await client.list_tools()).tools}
        rows = await client.call_tool("sql_query", {"query": "SELECT name FROM items"})
        write = await client.call_tool("sql_query", {"query": "DELETE FROM items"})
        echoed = await client.call_tool("bash", {"command": "echo 你好"})
        removed = await client.call_tool("bash", {"command": "echo hi; rm victim.txt"})
        local = await client.call_tool("fetch", {"url": "http://127.0.0.1:9/"})
    assert {"sql_query", "sql_schema", "fetch", "bash"} <= names
    assert "write_file" not in names and "edit_file" not in names
    assert "茶 tea" in text(rows) and write.is_error
    assert "exit code 0" in text(echoed) and "你好" in text(echoed)
    # No allow rule matches `rm`, and this client cannot be asked: refused, nothing ran.
    assert removed.is_error and "approval" in text(removed)
    assert (workspace / "victim.txt").read_text() == "unchanged"
    assert local.is_error and "private, loopback or reserved" in text(local)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM items").fetchone() == (1,)
    conn.close()


def test_builtins_table_errors_name_the_key(tmp_path: Path) -> None:
    for table, message in [
        ({"shel": True}, r"\[builtins\].shel is not a known key"),
        ({"shell": "yes"}, r"\[builtins\].shell: Input should be a valid boolean"),
        ({"shell_allow": "^ls"}, r"\[builtins\].shell_allow: Input should be a valid list"),
        ({"sql_timeout": 0}, r"\[builtins\].sql_timeout: Input should be greater than 0"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_config({"serve": {"providers": ["builtins"]}, "builtins": table})
    with pytest.raises(ValueError, match=r"\[builtins\] must be a table"):
        parse_config({"builtins": 3})
