"""The official MCP conformance suite (@modelcontextprotocol/conformance on Node 22) drives our
client through every client scenario it has (`--suite all`): the 2025 specs, auth included, the
draft and back-compat auth scenarios and the auth extensions.

One check is graded by wall-clock time: `sse-retry`'s `client-sse-retry-timing` measures, in the
runner's own Node event loop, from the moment it closes a stream to the moment it handles our
reconnecting GET (at least 450 ms, at most 1000, for a `retry:` of 500). `--suite all` runs every
scenario at once in that one Node process, so on a loaded machine the runner itself reads our
GET late: traced on 2 cores at load 27, the client saw the close 25 ms after it, put its GET on
the socket 521 ms after that, and the runner handled it 584 ms later still. So `sse-retry` is
graded on its own run, where the runner serves only it, and every other check of the suite run
is graded as it stands.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.mcp.client.mcp_peers import NODE, PEERS, requires_node

CONFORMANCE = str(PEERS / ".bin" / "conformance")
RUNNER = str(Path(__file__).parent / "conformance_client.py")
TIMED_SCENARIO = "sse-retry"
TIMED_CHECK = "client-sse-retry-timing"
pytestmark = requires_node


def run_conformance(
    selector: list[str], cwd: Path, *, graded_alone: str | None = None
) -> tuple[str, list[dict[str, Any]]]:
    """The suite summary and every check of the run; fails on any failure or warning, except
    the timing check of `graded_alone` (a scenario graded by its own run) and a reconnect that
    is only "slightly late" (a WARNING the suite itself calls acceptable)."""
    results = cwd / "results"
    command = f"{sys.executable} {RUNNER}"
    completed = subprocess.run(
        [NODE, CONFORMANCE, "client", "--command", command, *selector, "-o", str(results)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=240,
    )
    output = completed.stdout + completed.stderr
    summary = (
        output[output.rfind("=== SUITE SUMMARY ===") :] if "SUITE SUMMARY" in output else output
    )
    checks = [
        {
            **check,
            "scenario": re.sub(
                r"-\d{4}-\d\d-\d\dT[\d-]+Z$", "", path.parent.relative_to(results).as_posix()
            ),
        }
        for path in results.glob("**/checks.json")
        for check in json.loads(path.read_text())
    ]
    timed_alone = [c for c in checks if c["id"] == TIMED_CHECK and c["scenario"] == graded_alone]
    failed = [c for c in checks if c["status"] == "FAILURE" and c not in timed_alone]
    assert not failed, failed
    warnings = [c for c in checks if c["status"] == "WARNING" and c["id"] != TIMED_CHECK]
    assert not warnings, warnings
    # Every scenario the summary lists failed nothing but what is graded alone (a scenario
    # that could not run leaves no checks.json, only its line here).
    excused = len([c for c in timed_alone if c["status"] == "FAILURE"])
    for name, count in re.findall(r"[✓✗] (\S+): \d+ passed, (\d+) failed", summary):
        assert int(count) == (excused if name == graded_alone else 0), output[-4000:]
    assert (
        completed.returncode == 0 or timed_alone or any(c["status"] == "WARNING" for c in checks)
    ), output[-4000:]
    return summary, checks


def test_conformance_client_suite_all_passes(tmp_path: Path) -> None:
    """`all` is every client scenario: initialize, tools_call, elicitation defaults, SSE retry,
    the whole OAuth family in every era, the draft scenarios and the extensions
    (client credentials with a secret and with a private-key JWT, enterprise-managed
    authorization), and the 2026-07-28 client scenarios (input-required results, custom
    headers, schema preservation, per-request `_meta`)."""
    alone, suite = tmp_path / "alone", tmp_path / "suite"
    alone.mkdir()
    suite.mkdir()
    _, timed = run_conformance(["--scenario", TIMED_SCENARIO], alone)
    (timing,) = [c for c in timed if c["id"] == TIMED_CHECK]
    assert timing["status"] in ("SUCCESS", "WARNING"), timing  # neither early nor very late
    assert timing["details"]["actualDelayMs"] >= timing["details"]["minAcceptableMs"]
    output, checks = run_conformance(["--suite", "all"], suite, graded_alone=TIMED_SCENARIO)
    assert f"{TIMED_SCENARIO}:" in output  # it ran in the suite too, every other check graded
    for scenario in (
        "auth/client-credentials-basic",
        "auth/client-credentials-jwt",
        "sep-2322-client-request-state",
        "http-custom-headers",
        "http-invalid-tool-headers",
        "json-schema-2020-12-preservation",
        "request-metadata",
        "auth/enterprise-managed-authorization",
        "auth/wif-jwt-bearer",
        "auth/dpop-nonce",
        "auth/authorization-server-migration",
        "auth/iss-normalized",
    ):
        assert f"✓ {scenario}:" in output
    assert len(checks) > 300
