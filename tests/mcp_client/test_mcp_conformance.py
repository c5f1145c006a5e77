"""The official MCP conformance suite (@modelcontextprotocol/conformance on Node 22) drives our
client through every client scenario of the 2025 specs, auth included, plus the draft and
back-compat auth scenarios and the client-credentials extension."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from mcp_peers import NODE, PEERS, requires_node

CONFORMANCE = str(PEERS / ".bin" / "conformance")
RUNNER = str(Path(__file__).parent / "conformance_client.py")
pytestmark = requires_node


def run_conformance(selector: list[str], cwd: Path) -> str:
    completed = subprocess.run(
        [NODE, CONFORMANCE, "client", "--command", f"{sys.executable} {RUNNER}", *selector],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=240,
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output[-4000:]
    return output


@pytest.mark.parametrize("suite", ["core", "backcompat", "draft"])
def test_conformance_suite_passes(suite: str, tmp_path: Path) -> None:
    """`core` is every 2025-06-18/2025-11-25 client scenario: initialize, tools_call,
    elicitation defaults, SSE retry and the whole OAuth family."""
    output = run_conformance(["--suite", suite], tmp_path)
    assert " 0 failed, 0 warnings" in output
    assert "✗" not in output


def test_conformance_client_credentials_extension(tmp_path: Path) -> None:
    output = run_conformance(["--scenario", "auth/client-credentials-basic"], tmp_path)
    assert "OVERALL: PASSED" in output
