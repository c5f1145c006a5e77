"""`toolweave serve`'s skills provider publishing its skills by the MCP skills extension
(SEP-2640): refereed by the official conformance suite's skills scenarios, read by the official
SDK client in its default (2026) and legacy modes, switched off by `[skills] mcp_extension`, and
listed by `toolweave skills list --mcp` as remote skills.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import types
from mcp.client import Client
from pydantic import RootModel

from tests.host.serving import serving_skills
from tests.mcp.server.test_peers import NODE, PEERS, needs_node
from toolweave.mcp.shared.constants import SKILLS_EXTENSION

TOOLWEAVE = Path(sys.executable).with_name("toolweave")
SKILL_SCENARIOS = (
    "sep-2640-skills-enumeration",
    "sep-2640-skills-manifest",
    "sep-2640-skills-directory",
)


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[str]:
    async with serving_skills(tmp_path) as url:
        yield url


async def run_scenario(url: str, scenario: str, tmp_path: Path) -> str:
    """The conformance suite's server `scenario` against `url` (HOME in `tmp_path`): its output."""
    suite = str(PEERS / ".bin" / "conformance")
    env = {**os.environ, "HOME": str(tmp_path), "PATH": f"{NODE.parent}:{os.environ['PATH']}"}
    proc = await asyncio.create_subprocess_exec(
        str(NODE),
        suite,
        "server",
        "--url",
        url,
        "--scenario",
        scenario,
        cwd=tmp_path,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out = (await asyncio.wait_for(proc.communicate(), 120))[0].decode()
    assert proc.returncode == 0, out[-4000:]
    return out


@needs_node
@pytest.mark.parametrize("scenario", SKILL_SCENARIOS)
async def test_conformance_skills_scenarios(served: str, tmp_path: Path, scenario: str) -> None:
    out = await run_scenario(served, scenario, tmp_path)
    summary = [line for line in out.splitlines() if line.startswith("Passed:")]
    assert summary and summary[-1].endswith(", 0 failed, 0 warnings"), out[-4000:]
    if scenario != "sep-2640-skills-directory":  # directoryRead is optional: skipped
        assert "SKIPPED" not in out, out[-4000:]


class _Raw(RootModel[dict[str, Any]]):
    """Any result, as the official client received it."""


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_official_client_reads_skills_from_toolweave_serve(served: str, mode: str) -> None:
    async with Client(served, mode=mode) as client:
        capabilities = client.server_capabilities
        listed = await client.session.send_request(
            types.Request[dict[str, Any], str](method="skills/list", params={}), _Raw
        )
        entries = {e["frontmatter"]["name"]: e for e in listed.root["skills"]}
        research = entries["web-research"]
        files = {}
        for item in research["resources"]:
            contents = (await client.read_resource(item["uri"])).contents[0]
            files[item["uri"]] = contents.text.encode()  # type: ignore[union-attr]
    assert SKILLS_EXTENSION in (capabilities.extensions or {})
    assert sorted(entries) == ["code-review", "release-notes", "web-research"]
    assert research["frontmatter"]["metadata"]["version"] == "1.0.0"
    for item in research["resources"]:
        data = files[item["uri"]]
        assert item["digest"] == "sha256:" + hashlib.sha256(data).hexdigest()
        assert item["size"] == len(data)
    assert sorted(files) == [
        "skill://web-research/SKILL.md",
        "skill://web-research/advanced.md",
        "skill://web-research/data/source_policy.json",
    ]


async def test_listing_rehashes_only_skills_whose_files_changed(tmp_path: Path) -> None:
    async with (
        serving_skills(tmp_path, watch_interval=0) as url,
        Client(url, mode="legacy") as client,
    ):
        request = types.Request[dict[str, Any], str](method="skills/list", params={})
        first = (await client.session.send_request(request, _Raw)).root["skills"]
        policy = tmp_path / "skills" / "web-research" / "data" / "source_policy.json"
        policy.write_text(policy.read_text().replace("high", "HIGH"))  # same size
        second = (await client.session.send_request(request, _Raw)).root["skills"]
    assert first[0] == second[0]  # code-review: unchanged
    digests = [
        {r["uri"]: r["digest"] for r in entries[2]["resources"]} for entries in (first, second)
    ]
    changed = [uri for uri in digests[0] if digests[0][uri] != digests[1][uri]]
    assert changed == ["skill://web-research/data/source_policy.json"]


async def test_the_extension_can_be_switched_off(tmp_path: Path) -> None:
    async with (
        serving_skills(tmp_path, mcp_extension=False) as url,
        Client(url, mode="legacy") as client,
    ):
        extensions = client.server_capabilities.extensions or {}
        resources = (await client.list_resources()).resources
    assert SKILLS_EXTENSION not in extensions
    assert any(str(r.uri) == "skill://web-research/SKILL.md" for r in resources)


async def toolweave(tmp_path: Path, *args: str) -> str:
    """Run the `toolweave` CLI (HOME in `tmp_path`) while this loop keeps serving; its stdout."""
    (tmp_path / "home").mkdir(exist_ok=True)
    proc = await asyncio.create_subprocess_exec(
        str(TOOLWEAVE),
        *args,
        cwd=tmp_path,
        env={**os.environ, "HOME": str(tmp_path / "home")},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    return out.decode()


async def test_cli_lists_and_trusts_remote_skills(served: str, tmp_path: Path) -> None:
    mcp = tmp_path / "mcp.json"
    mcp.write_text(json.dumps({"mcpServers": {"docs": {"url": served}}}))
    listing = ["skills", "list", "--root", str(tmp_path / "none"), "--mcp", str(mcp), "--json"]
    rows = json.loads(await toolweave(tmp_path, *listing))
    said = await toolweave(tmp_path, "skills", "trust", "docs__code-review", "--mcp", str(mcp))
    after = {r["name"]: r["trusted"] for r in json.loads(await toolweave(tmp_path, *listing))}
    assert [r["name"] for r in rows] == [
        "docs__code-review",
        "docs__release-notes",
        "docs__web-research",
    ]
    assert rows[2]["uri"] == "skill://web-research/SKILL.md" and rows[2]["server"] == "docs"
    assert rows[2]["allowed_tools"] == ["tavily_search", "skill_resource", "skill_data"]
    assert not any(r["trusted"] for r in rows)
    assert said.startswith("trusted docs__code-review (skill://code-review/SKILL.md on MCP")
    assert after == {
        "docs__code-review": True,
        "docs__release-notes": False,
        "docs__web-research": False,
    }
