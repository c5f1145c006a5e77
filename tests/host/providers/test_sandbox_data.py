"""The host's data out of the served shell's sight (issue 32, item 6).

The review's attack: with the workspace at `<data_dir>/workspace` (the old default), a served
`bash` read `../memory.db`, `../query_log.db` and the config with its `console_token`, all mode
0644. Now the default workspace lies beside `data_dir`, the data folder and the config are
covered inside the sandbox (even for a workspace an operator puts inside `data_dir`), and the
databases are created 0600 in a 0700 folder. Real `toolweave.toml`, real SQLite, real
bubblewrap.
"""

from __future__ import annotations

import stat
from pathlib import Path

from toolweave.host.config import load_host_config
from toolweave.host.providers.builtins import BuiltinsProvider
from toolweave.storage.sqlite import SQLiteDatabase
from toolweave.tools import Tool, ToolContext

SECRET = "alice-私密-memory"
TOKEN = "console-token-0123456789"


def host_config(tmp_path: Path, builtins: str) -> Path:
    config = tmp_path / "toolweave.toml"
    config.write_text(
        f'[serve]\ndata_dir = "{tmp_path / "data"}"\nconsole_token = "{TOKEN}"\n'
        f'[builtins]\nshell = true\nshell_allow = ["Bash(*)"]\n{builtins}',
        encoding="utf-8",
    )
    return config


async def served_bash(tmp_path: Path, builtins: str = "") -> Tool:
    config = load_host_config(host_config(tmp_path, builtins), env={})
    memory = SQLiteDatabase(config.data_dir / "memory.db", schema="CREATE TABLE m(t TEXT);")
    await memory.run(lambda db: db.execute("INSERT INTO m VALUES (?)", (SECRET,)))
    await memory.close()
    tools = await BuiltinsProvider(config).tools()
    return next(t for t in tools if t.name == "bash")


async def run(tool: Tool, command: str) -> str:
    result = await tool.execute({"command": command}, ToolContext(tool_call_approved=True))
    return result.text


async def test_the_default_workspace_is_outside_the_data_folder(tmp_path: Path) -> None:
    bash = await served_bash(tmp_path)
    said = await run(bash, "pwd; grep -ra alice ../data ../toolweave.toml ~/.toolweave 2>&1")
    assert str(tmp_path / "toolweave-workspace") in said
    assert SECRET not in said and TOKEN not in said, said


async def test_a_workspace_inside_the_data_folder_still_cannot_read_it(tmp_path: Path) -> None:
    root = tmp_path / "data" / "workspace"
    bash = await served_bash(tmp_path, f'root = "{root}"')
    said = await run(
        bash,
        "echo ok > mine.txt; ls -a ..; cat ../memory.db ../toolweave.toml ../../toolweave.toml; "
        "grep -ra console ../.. 2>/dev/null | head -3; touch ../planted",
    )
    assert SECRET not in said and TOKEN not in said, said
    assert (root / "mine.txt").read_text() == "ok\n"  # the workspace itself is writable
    assert not (tmp_path / "data" / "planted").exists()


async def test_data_files_are_private(tmp_path: Path) -> None:
    await served_bash(tmp_path)
    data = tmp_path / "data"
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert stat.S_IMODE((data / "memory.db").stat().st_mode) == 0o600
