"""Validators and `toolweave mcp new` scaffolding."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from toolweave.mcp.server.scaffold import scaffold
from toolweave.mcp.server.validators import check_identifier, check_slug, check_url, safe_path

TOOLWEAVE = Path(sys.executable).with_name("toolweave")


def test_safe_path(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    assert safe_path(tmp_path, "docs/a.md") == tmp_path.resolve() / "docs" / "a.md"
    for bad in ("../etc/passwd", "/etc/passwd", "docs/../../x", "", "a\x00b"):
        with pytest.raises(ValueError):
            safe_path(tmp_path, bad)
    (tmp_path / "link").symlink_to("/etc")
    with pytest.raises(ValueError, match="outside"):
        safe_path(tmp_path, "link/passwd")
    with pytest.raises(ValueError, match="does not exist"):
        safe_path(tmp_path, "docs/missing.md", must_exist=True)


def test_check_url() -> None:
    assert check_url("https://example.com/a?b=1") == "https://example.com/a?b=1"
    for bad in ("ftp://example.com", "https://", "http://127.0.0.1:8080", "http://localhost/x"):
        with pytest.raises(ValueError):
            check_url(bad)
    with pytest.raises(ValueError, match="private"):
        check_url("http://10.0.0.7/admin")
    # Legacy IPv4 spellings that HTTP clients still resolve to loopback or private hosts.
    for sneaky in ("http://2130706433/", "http://0x7f.1/", "http://127.1/", "http://10.1/"):
        with pytest.raises(ValueError, match="private"):
            check_url(sneaky)
    assert check_url("http://cafe.be/") == "http://cafe.be/"
    assert check_url("http://127.0.0.1:8080/", allow_private=True) == "http://127.0.0.1:8080/"


def test_identifiers_and_slugs() -> None:
    assert check_identifier("user_id") == "user_id"
    assert check_slug("weather-tools") == "weather-tools"
    for bad in ("1abc", "a-b", "", "x" * 65):
        with pytest.raises(ValueError, match="identifier"):
            check_identifier(bad)
    with pytest.raises(ValueError, match="lowercase"):
        check_slug("Weather Tools")


def test_mcp_new_scaffolds_a_working_project(tmp_path: Path) -> None:
    out = subprocess.run(
        [str(TOOLWEAVE), "mcp", "new", "hello-tool", "--dir", str(tmp_path / "hello-tool")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    project = tmp_path / "hello-tool"
    files = sorted(p.relative_to(project).as_posix() for p in project.rglob("*") if p.is_file())
    assert files == [
        ".github/workflows/ci.yml",
        ".gitignore",
        "README.md",
        "pyproject.toml",
        "src/hello_tool/__init__.py",
        "src/hello_tool/server.py",
        "tests/test_server.py",
    ]
    readme = (project / "README.md").read_text()
    assert '"hello-tool": {' in readme and "claude mcp add hello-tool" in readme
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert tests.returncode == 0, tests.stdout[-2000:]
    assert "3 passed" in tests.stdout
    with pytest.raises(FileExistsError):
        scaffold("hello-tool", project)
    with pytest.raises(ValueError, match="lowercase"):
        scaffold("Bad Name", tmp_path / "x")
    with pytest.raises(ValueError, match="start with a letter"):
        scaffold("2048-tools", tmp_path / "y")
