"""The gateway republishes its downstream servers' skills (issue 34, SEP-2640): `toolweave serve`
with two `[mcpServers]` entries running `examples/mcp_skills_server.py` (toolkit servers over
stdio, the same three example skills each, so every skill name clashes) answers `skills/list`,
`skills/get` and every file read with the downstream entries and bytes, each server's skills
under `skill://<server>/...`, refereed by the conformance suite's skills scenarios. Read by
the official SDK client in its default (2026) and legacy
modes, checking every digest and size against the bytes it read and against the files the
downstream hashed; by toolweave's own agent through `SkillLibrary.add_remote`; and a server the
host policy refuses has its skills neither listed nor read."""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import types
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from pydantic import RootModel

from tests.host.providers.test_skills_extension import SKILL_SCENARIOS, run_scenario
from tests.host.serving import serving_gateway
from tests.mcp.server.test_peers import needs_node
from tests.skills.test_agent import call
from toolweave.agent import Agent
from toolweave.llm import Message, ScriptedModel
from toolweave.mcp import MCPManager
from toolweave.mcp.client.config import ServerConfig
from toolweave.mcp.shared.constants import SKILLS_EXTENSION
from toolweave.skills import SkillLibrary

EXAMPLES = Path(__file__).parents[2] / "examples"
SERVER = {"command": sys.executable, "args": [str(EXAMPLES / "mcp_skills_server.py")]}
SERVERS = {"docs": SERVER, "notes": SERVER}
SKILLS = ("code-review", "release-notes", "web-research")


class _Raw(RootModel[dict[str, Any]]):
    """Any result, as the official client received it."""


def on_disk(uri: str) -> bytes:
    """The bytes the downstream hashed for a republished `skill://<server>/<skill>/<path>`."""
    _server, skill, path = uri.removeprefix("skill://").split("/", 2)
    return (EXAMPLES / "skills" / skill / path).read_bytes()


async def _request(client: Client, method: str, params: dict[str, Any]) -> dict[str, Any]:
    request = types.Request[dict[str, Any], str](method=method, params=params)
    return (await client.session.send_request(request, _Raw)).root


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_official_client_reads_downstream_skills_through_the_gateway(
    tmp_path: Path, mode: str
) -> None:
    async with (
        serving_gateway(tmp_path, SERVERS, []) as url,
        Client(url, mode=mode) as client,
    ):
        extensions = client.server_capabilities.extensions or {}
        listed = (await _request(client, "skills/list", {}))["skills"]
        got = await _request(client, "skills/get", {"uri": "skill://notes/web-research/SKILL.md"})
        read = {}
        for entry in listed:
            for item in entry["resources"]:
                contents = (await client.read_resource(item["uri"])).contents[0]
                assert str(contents.uri) == item["uri"]
                read[item["uri"]] = contents.text.encode()  # type: ignore[union-attr]
        resources = {str(r.uri): r.name for r in (await client.list_resources()).resources}
        with pytest.raises(MCPError):  # the downstream's own URI is not served: whose would it be?
            await client.read_resource("skill://web-research/SKILL.md")
    assert SKILLS_EXTENSION in extensions
    assert [e["uri"] for e in listed] == [
        f"skill://{server}/{skill}/SKILL.md" for server in SERVERS for skill in SKILLS
    ]
    assert got["skill"] == listed[5]
    for entry in listed:  # the frontmatter as the downstream parsed it: the name is unchanged
        assert entry["uri"].endswith(f"/{entry['frontmatter']['name']}/SKILL.md")
        for item in entry["resources"]:
            data = read[item["uri"]]
            assert data == on_disk(item["uri"])  # the downstream's bytes, unchanged
            assert item["digest"] == "sha256:" + hashlib.sha256(data).hexdigest()
            assert item["size"] == len(data)
    assert resources["skill://docs/web-research/SKILL.md"] == "web-research"
    assert "skill://docs/web-research/data/source_policy.json" in resources


async def test_a_refused_server_s_skills_are_neither_listed_nor_read(tmp_path: Path) -> None:
    policy = {"policy": {"denied": ["mcp:notes"]}}
    async with (
        serving_gateway(tmp_path, SERVERS, [], policy) as url,
        Client(url, mode="auto") as client,
    ):
        listed = (await _request(client, "skills/list", {}))["skills"]
        with pytest.raises(MCPError):
            await client.read_resource("skill://notes/web-research/SKILL.md")
        with pytest.raises(MCPError):
            await _request(client, "skills/get", {"uri": "skill://notes/web-research/SKILL.md"})
    assert [e["uri"] for e in listed] == [f"skill://docs/{skill}/SKILL.md" for skill in SKILLS]


async def test_an_agent_reads_downstream_skills_through_the_gateway(tmp_path: Path) -> None:
    async with (
        serving_gateway(tmp_path, SERVERS, []) as url,
        MCPManager({"gw": ServerConfig("gw", url=url)}) as manager,
    ):
        library = SkillLibrary([])
        library.add_remote(manager)
        model = ScriptedModel(
            [
                call("skill_read", "1", name="gw__notes__web-research"),
                call("skill_resource", "2", name="gw__docs__web-research", path="advanced.md"),
                Message.assistant("read"),
            ]
        )
        result = await Agent(model, skills=library).run("research the MCP spec")
        names = sorted(library.remote)
    assert names == [f"gw__{server}__{skill}" for server in SERVERS for skill in SKILLS]
    outputs = [inv.result.content[0].text for inv in result.invocations]  # type: ignore[union-attr]
    heading = "# Skill: gw__notes__web-research (from MCP server 'gw', verified)"
    assert outputs[0].startswith(heading)
    assert "# Web Research Skill" in outputs[0] and "- advanced.md" in outputs[0]
    assert "来源优先级" in outputs[1]


@needs_node
@pytest.mark.parametrize("scenario", SKILL_SCENARIOS)
async def test_the_conformance_suite_referees_the_republished_skills(
    tmp_path: Path, scenario: str
) -> None:
    async with serving_gateway(tmp_path / "gw", SERVERS, []) as url:
        out = await run_scenario(url, scenario, tmp_path)
    summary = [line for line in out.splitlines() if line.startswith("Passed:")]
    # Two servers serve the same three skills: names unchanged (the bytes are), URIs apart. The
    # one warning is the extension's SHOULD that names be unique ("not guaranteed to be").
    warned = sorted(set(re.findall(r"\[(sep-[\w-]+)\s*\]\S* \S*WARNING", out)))
    assert summary and ", 0 failed, " in summary[-1], out[-4000:]
    unique = ["sep-2640-names-should-be-unique"] if scenario.endswith("enumeration") else []
    assert warned == unique, out[-4000:]
    if scenario != "sep-2640-skills-directory":  # directoryRead is optional: skipped
        assert "SKIPPED" not in out, out[-4000:]
