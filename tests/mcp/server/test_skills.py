"""The server toolkit serving Agent Skills by the skills extension (SEP-2640): `skills/list`,
`skills/get`, the files as `skill://` resources with digests that verify, read by our own
client over loopback HTTP and by the official SDK client in its default (2026) and legacy modes.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from mcp import types
from mcp.client import Client
from pydantic import RootModel

from tests.mcp.server.inprocess import serve_in_process
from tests.skills.factory import write_skill
from toolweave.mcp import MCPClient, MCPManager, MCPServer
from toolweave.mcp.client.config import ServerConfig
from toolweave.mcp.client.skills import list_skills, load_skill, read_skill_file
from toolweave.mcp.server.skills import ServedSkill, SkillFile
from toolweave.mcp.shared.constants import SKILLS_EXTENSION
from toolweave.mcp.shared.errors import INVALID_PARAMS, METHOD_NOT_FOUND, SkillVerificationError

FORMS = "# 表单\n\nFill the form fields in order.\n"


@pytest.fixture
def pdf_skill(tmp_path: Path) -> Path:
    return write_skill(
        tmp_path,
        "pdf-processing",
        "name: pdf-processing\ndescription: 提取、填写 PDF 表单 (extract and fill PDF forms)\n"
        "allowed-tools: Bash(pdftotext:*)",
        body="Read references/FORMS.md before filling a form.",
        files={"references/FORMS.md": FORMS},
    )


def served(folder: Path) -> MCPServer:
    server = MCPServer("skills-demo")
    server.add_skills([ServedSkill.from_folder(folder)])
    return server


async def test_our_client_lists_loads_and_verifies_over_http(pdf_skill: Path) -> None:
    async with (
        serve_in_process(served(pdf_skill)) as url,
        MCPClient.http(url, name="docs") as client,
    ):
        assert SKILLS_EXTENSION in client.capabilities["extensions"]
        assert "resources" in client.capabilities
        (skill,) = await list_skills(client)
        text = await load_skill(client, skill)
        forms = await read_skill_file(client, skill, "skill://pdf-processing/references/FORMS.md")
    assert skill.uri == "skill://pdf-processing/SKILL.md"
    assert skill.frontmatter["allowed-tools"] == "Bash(pdftotext:*)"
    assert [f.uri for f in skill.files] == [
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/references/FORMS.md",
    ]
    raw = (pdf_skill / "SKILL.md").read_bytes()
    assert skill.files[0].digest == "sha256:" + hashlib.sha256(raw).hexdigest()
    assert skill.files[0].size == len(raw)
    assert text == raw.decode() and forms == FORMS


class _Raw(RootModel[dict[str, Any]]):
    """Any result, as the official client received it."""


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_official_sdk_client_reads_the_skills(pdf_skill: Path, mode: str) -> None:
    async with serve_in_process(served(pdf_skill)) as url, Client(url, mode=mode) as client:
        listed = await client.session.send_request(
            types.Request[dict[str, Any], str](method="skills/list", params={}), _Raw
        )
        (entry,) = listed.root["skills"]
        got = await client.session.send_request(
            types.Request[dict[str, Any], str](method="skills/get", params={"uri": entry["uri"]}),
            _Raw,
        )
        resources = (await client.list_resources()).resources
        contents = (await client.read_resource(entry["uri"])).contents
    assert got.root["skill"] == entry
    assert entry["frontmatter"]["name"] == "pdf-processing"
    text = contents[0].text  # type: ignore[union-attr]
    manifest = entry["resources"][0]
    assert manifest["digest"] == "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    assert contents[0].mime_type == "text/markdown"
    by_uri = {r.uri: r for r in resources}
    assert by_uri[entry["uri"]].name == "pdf-processing"  # the extension's SHOULD
    assert by_uri[entry["uri"]].description == entry["frontmatter"]["description"]
    if mode == "auto":  # 2026-07-28 results are cacheable: ttlMs and cacheScope
        assert got.root["ttlMs"] == 0 and got.root["cacheScope"] == "private"


async def test_unknown_skill_and_server_without_skills(pdf_skill: Path) -> None:
    plain = MCPServer("plain")
    async with (
        serve_in_process(served(pdf_skill)) as url,
        serve_in_process(plain) as plain_url,
        MCPClient.http(url) as client,
        MCPClient.http(plain_url) as other,
    ):
        with pytest.raises(Exception) as unknown:
            await client.request("skills/get", {"uri": "skill://nope/SKILL.md"})
        with pytest.raises(Exception) as absent:
            await other.request("skills/list", {})
        assert await list_skills(other) == []  # not declared: never asked
    assert getattr(unknown.value, "code", None) == INVALID_PARAMS
    assert "skills/list names the skills" in str(unknown.value)
    assert getattr(absent.value, "code", None) == METHOD_NOT_FOUND
    assert "extensions" not in plain.capabilities()


def test_from_folder_leaves_out_hidden_files_and_symlinks_out_of_the_folder(
    pdf_skill: Path, tmp_path: Path
) -> None:
    (tmp_path / "secret.txt").write_text("token", encoding="utf-8")
    (pdf_skill / "leak.txt").symlink_to(tmp_path / "secret.txt")
    (pdf_skill / "inside.md").symlink_to(pdf_skill / "references" / "FORMS.md")
    (pdf_skill / ".env").write_text("KEY=1", encoding="utf-8")
    served_files = [f.path for f in ServedSkill.from_folder(pdf_skill).files]
    assert served_files == ["SKILL.md", "inside.md", "references/FORMS.md"]


def test_a_skill_that_breaks_the_extension_is_refused_naming_it(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "x", "name: other-name\ndescription: d")
    skill = ServedSkill.from_folder(folder)
    with pytest.raises(ValueError, match="frontmatter name is 'other-name'"):
        MCPServer("s").add_skills([ServedSkill("x", skill.files)])
    with pytest.raises(ValueError, match="no frontmatter"):
        ServedSkill("y", (SkillFile("SKILL.md", "just text"),)).entry()
    with pytest.raises(TypeError, match="ServedSkill objects"):
        MCPServer("s").add_skills(["not a skill"])  # type: ignore[list-item]


async def test_a_dynamic_source_is_asked_per_request_and_bad_skills_are_left_out(
    pdf_skill: Path,
) -> None:
    good = ServedSkill.from_folder(pdf_skill)
    bad = ServedSkill("bad", (SkillFile("SKILL.md", "---\nname: wrong\ndescription: d\n---\n"),))
    current = [good, bad]

    async def source() -> list[ServedSkill]:
        return list(current)

    server = MCPServer("live", page_size=1)
    server.add_skills(source)
    async with (
        serve_in_process(server) as url,
        MCPManager({"live": ServerConfig("live", url=url)}) as manager,
    ):
        first = [s.name for s in await manager.skills()]  # paginated: one entry per page
        current.pop(0)
        second = [s.name for s in await manager.skills()]
    assert first == ["pdf-processing"] and second == []


async def test_a_file_changed_after_listing_is_refused(pdf_skill: Path) -> None:
    skill = ServedSkill.from_folder(pdf_skill)
    served_skill = [skill]

    async def source() -> list[ServedSkill]:
        return served_skill

    server = MCPServer("tamper")
    server.add_skills(source)
    async with serve_in_process(server) as url, MCPClient.http(url, name="tamper") as client:
        (listed,) = await list_skills(client)
        forms = SkillFile("references/FORMS.md", FORMS.replace("order", "ORDER"), "text/markdown")
        served_skill[0] = ServedSkill(skill.name, (skill.files[0], forms))
        assert await load_skill(client, listed)  # SKILL.md unchanged: verifies
        with pytest.raises(SkillVerificationError, match="does not match digest"):
            await read_skill_file(client, listed, "skill://pdf-processing/references/FORMS.md")
        with pytest.raises(SkillVerificationError, match="over the 10-byte limit"):
            await read_skill_file(client, listed, listed.uri, max_bytes=10)
