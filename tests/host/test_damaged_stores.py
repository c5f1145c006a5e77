"""A damaged store (kb.db, memory.db, query_log.db) disables that piece with one line naming the
file and the fix (banner and log); the rest of the host serves, driven by the official MCP SDK
client."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from mcp.client import Client

from tests.host.test_defaults import _text
from tests.host.test_governance import _port
from toolweave.cli import serve_cmd
from toolweave.host import ToolHost, parse_config
from toolweave.host.stores import damaged_store

GARBAGE = b"this is not a SQLite database\n" * 200


async def test_damaged_stores_are_left_out_and_the_rest_serves(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    for name in ("kb.db", "memory.db", "query_log.db"):
        (data / name).write_bytes(GARBAGE)
    port = _port()
    caplog.set_level(logging.WARNING)
    config = parse_config({"serve": {"transport": "http", "port": port, "data_dir": str(data)}})
    host = ToolHost(config)
    names = {p.name for p in host.providers}
    assert "kb" not in names and "memory" not in names and {"builtins", "notes"} <= names
    banner = serve_cmd._banner(host)
    for name in ("kb", "memory"):
        line = next(n for n in host.notes if n.startswith(f"{name} not served:"))
        assert f"{data / (name + '.db')} is damaged (SQLite says: file is not a database)" in line
        assert f"mv {data / (name + '.db')} {data / (name + '.db')}.damaged" in line
        assert line in banner and "\n" not in line
    assert any(
        n.startswith(f"query log off: {data / 'query_log.db'} is damaged") for n in host.notes
    )
    assert {r.getMessage() for r in caplog.records} >= set(host.notes)
    ready = asyncio.Event()
    task = asyncio.ensure_future(host.serve_http(on_ready=lambda _port: ready.set()))
    await ready.wait()
    try:
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            now = await client.call_tool("time", {})
            notes = await client.call_tool("note", {"action": "list"})
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await host.close()
    assert "memory" not in tools and "kb" not in tools and "note" in tools
    assert not now.is_error, _text(now)
    assert not notes.is_error, _text(notes)
    assert (data / "query_log.db").read_bytes() == GARBAGE  # left as it was, for the person


def test_a_healthy_or_missing_store_is_not_damaged(tmp_path: Path) -> None:
    import sqlite3

    healthy = tmp_path / "ok.db"
    sqlite3.connect(healthy).execute("CREATE TABLE t (x)").connection.commit()
    assert damaged_store(healthy) is None
    assert damaged_store(tmp_path / "missing.db") is None
    assert not (tmp_path / "missing.db").exists()
    assert damaged_store(tmp_path) == "a folder where a SQLite file belongs"


def test_every_section_is_validated_at_start_one_line_per_error(tmp_path: Path) -> None:
    """A shell pattern the rules parser refuses used to pass until the built-ins loaded lazily
    (the banner said bash was served; clients never saw it): now `serve` stops at start."""
    from typer.testing import CliRunner

    from toolweave.cli import app

    toml = tmp_path / "toolweave.toml"
    toml.write_text(
        '[builtins]\nshell = true\nshell_allow = ["^(ls|cat)\\\\b"]\n\n[kb]\nmax_docs = 0\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(app, ["serve", "--http", "127.0.0.1:0", "--config", str(toml)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2 and "Traceback" not in result.stderr
    assert "[builtins].shell_allow" in lines[0] and "looks like a regular expression" in lines[0]
    assert "[kb].max_docs" in lines[1]
