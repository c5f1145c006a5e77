"""The conformance suite's client skills scenarios (SEP-2640: no prefetch, digest, size and
frontmatter verification), each on its own run: quick to rerun after a change to the client's
skill reading, which `--suite all` (test_conformance.py) also covers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mcp.client.mcp_peers import requires_node
from tests.mcp.client.test_conformance import run_conformance

SCENARIOS = (
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
)
pytestmark = requires_node


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_client_skills_scenario_passes(tmp_path: Path, scenario: str) -> None:
    _, checks = run_conformance(["--scenario", scenario], tmp_path)
    assert [c["status"] for c in checks if c["id"].startswith("sep-2640-")] == ["SUCCESS"]
