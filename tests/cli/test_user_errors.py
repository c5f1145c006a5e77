"""A person's mistake gets one line naming the file and the fix, exit 2, never a traceback:
a file that is not SQLite, a folder where a file belongs, a directory that cannot be made."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolweave.cli import app

JUNK = "这不是数据库 not a database\n".encode() * 200


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stderr


@pytest.fixture
def junk(tmp_path: Path) -> Path:
    path = tmp_path / "junk.db"
    path.write_bytes(JUNK)
    return path


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


def test_log_of_a_file_that_is_not_a_query_log(junk: Path) -> None:
    code, err = run("log", "--path", str(junk))
    line = one_line(err)
    assert code == 2 and str(junk) in line and "not a toolweave query log" in line
    assert "pass --path" in line


def test_memory_of_a_file_that_is_not_a_store(junk: Path) -> None:
    code, err = run("memory", "--db", str(junk), "stats")
    line = one_line(err)
    assert code == 2 and str(junk) in line and "not a toolweave memory store" in line
    assert "pass --db" in line


def test_kb_stats_with_a_corrupt_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolweave.toml").write_text('[serve]\ndata_dir = "data"\n', encoding="utf-8")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "kb.db").write_bytes(JUNK)
    code, err = run("kb", "stats")
    line = one_line(err)
    assert code == 2 and "kb.db" in line and "not a toolweave knowledge base" in line
    assert "pass --config" in line


def test_trace_show_of_a_folder_and_of_binary(tmp_path: Path) -> None:
    code, err = run("trace", "show", str(tmp_path))
    line = one_line(err)
    assert code == 2 and f"{tmp_path} is a folder, not a trace file" in line
    assert "toolweave run --trace" in line
    binary = tmp_path / "trace.bin"
    binary.write_bytes(b"\xff\xfe\x00" * 100)
    code, err = run("trace", "show", str(binary))
    assert code == 2 and "not UTF-8 text" in one_line(err)


def test_mcp_new_where_no_folder_can_be_made(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    code, err = run("mcp", "new", "x", "--dir", str(blocker / "nope"))
    line = one_line(err)
    assert code == 2 and "a-file" in line and "pass --dir" in line


def test_a_read_command_never_creates_a_store(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "dir"
    code, err = run("memory", "--db", str(missing / "m.db"), "stats")
    line = one_line(err)
    assert code == 2 and str(missing) in line and "does not exist" in line
    assert not (tmp_path / "no").exists()
