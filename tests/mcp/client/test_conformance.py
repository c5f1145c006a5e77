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
#: Checks of the pinned suite that this client does not pass yet, by scenario: the work left.
NOT_YET: dict[str, set[str]] = {
    "auth/authorization-server-migration": {
        "sep-837-application-type-present",
        "sep-2352-reregister-on-as-change",
    },
    "auth/dpop": {
        "sep-1932-client-token-request-proof",
        "sep-1932-client-dpop-auth-scheme",
        "sep-1932-client-fresh-proof",
    },
    "auth/dpop-nonce": {
        "sep-1932-client-token-request-proof",
        "sep-1932-client-dpop-auth-scheme",
        "sep-1932-client-fresh-proof",
        "sep-1932-client-as-nonce",
        "sep-1932-client-rs-nonce",
    },
    "auth/enterprise-managed-authorization": {
        "complete-flow-token-exchange",
        "complete-flow-jwt-bearer",
    },
    "auth/iss-normalized": {"sep-837-application-type-present", "sep-2468-client-no-normalization"},
    "auth/iss-not-advertised": {"sep-837-application-type-present"},
    "auth/iss-supported": {"sep-837-application-type-present"},
    "auth/iss-supported-missing": {
        "sep-837-application-type-present",
        "sep-2468-client-reject-missing-iss",
    },
    "auth/iss-unexpected": {
        "sep-837-application-type-present",
        "sep-2468-client-compare-iss-unadvertised",
    },
    "auth/iss-wrong-issuer": {
        "sep-837-application-type-present",
        "sep-2468-client-compare-iss-supported",
    },
    "auth/offline-access-not-supported": {"sep-837-application-type-present"},
    "auth/wif-jwt-bearer": {"wif-grant-type", "wif-grant-fallback"},
}
pytestmark = requires_node


def _pending(check: dict[str, Any]) -> bool:
    return check["id"] in NOT_YET.get(check["scenario"], set())


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
    failed = [
        c for c in checks if c["status"] == "FAILURE" and c not in timed_alone and not _pending(c)
    ]
    assert not failed, failed
    warnings = [
        c for c in checks if c["status"] == "WARNING" and c["id"] != TIMED_CHECK and not _pending(c)
    ]
    assert not warnings, warnings
    # Every scenario the summary lists failed nothing but what is graded alone or pending (a
    # scenario that could not run leaves no checks.json, only its line here).
    excused = len(
        [c for c in checks if c["status"] == "FAILURE" and (c in timed_alone or _pending(c))]
    )
    failures = re.findall(r"[✓✗] (\S+): \d+ passed, (\d+) failed", summary)
    assert sum(int(count) for _, count in failures) == excused, output[-4000:]
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
    ):
        assert f"✓ {scenario}:" in output
    assert len(checks) > 300
