"""`toolweave serve` with the `skills` provider: tools, prompts, resources and live reload.

In-process through our test client for the reload paths, and end to end with the official MCP
SDK client over stdio, as Claude Desktop or Cursor would connect.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.skills.factory import write_skill
from toolweave.host import ToolHost, parse_config
from toolweave.host.providers.skills import SkillsProvider, SkillsSection, prompt_name
from toolweave.mcp.server.testing import connect
from toolweave.mcp.shared.errors import JSONRPCError

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "skills"
TOOLWEAVE = Path(sys.executable).with_name("toolweave")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    target = tmp_path / "skills"
    shutil.copytree(EXAMPLES, target)
    return target


def host_for(root: Path, serve: dict[str, object] | None = None, **skills: object) -> ToolHost:
    """A host serving the skills under `root`; `serve` adds [serve] keys (rules, policy)."""
    return ToolHost(
        parse_config(
            {
                "serve": {"providers": ["skills"], **(serve or {})},
                "skills": {"roots": [str(root)], **skills},
            }
        )
    )


async def run_collect(host: ToolHost) -> dict[str, object]:
    """Call the release-notes script without arguments (it prints its usage and exits 2)."""
    try:
        async with connect(host.server) as client:
            return await client.call_tool(
                "skill_run", {"name": "release-notes", "script": "collect.sh"}
            )
    finally:
        await host.close()


def test_config_errors_name_the_field() -> None:
    with pytest.raises(ValueError, match=r"\[skills\].root is not a known key"):
        parse_config({"skills": {"root": "x"}})
    with pytest.raises(ValueError, match=r"\[skills\].scripts: Input should be a valid boolean"):
        parse_config({"skills": {"scripts": "yes"}})
    with pytest.raises(ValueError, match=r"\[skills\].script_timeout: Input should be greater"):
        parse_config({"skills": {"script_timeout": 0}})
    source = Path("/etc/tw/toolweave.toml")
    relative = parse_config({"skills": {"roots": ["sk"]}}, source=source)
    assert relative.section("skills", SkillsSection).root_paths(source) == [Path("/etc/tw/sk")]
    default = parse_config({}).section("skills", SkillsSection)
    assert default.root_paths(None) is None  # the usual places


def test_prompt_names_use_tool_name_characters() -> None:
    assert prompt_name("release-notes") == "skill.release-notes"
    assert prompt_name("翻译 tool") == "skill.___tool"


async def test_tools_prompts_and_resources(root: Path) -> None:
    host = host_for(root)
    try:
        async with connect(host.server) as client:
            tools = {t["name"]: t for t in await client.list_tools()}
            prompts = {p["name"]: p for p in await client.list_prompts()}
            resources = {r["uri"]: r for r in await client.list_resources()}
            prompt = await client.get_prompt("skill.release-notes", {"arguments": "v1.2.0"})
            policy = await client.read_resource("skill://web-research/data/source_policy.json")
            read = await client.call_tool("skill_read", {"name": "web-research"})
            data = await client.call_tool(
                "skill_data",
                {"name": "web-research", "path": "data/source_policy.json", "query": "论文"},
            )
            escape = await client.call_tool(
                "skill_resource", {"name": "web-research", "path": "../../toolweave.toml"}
            )
    finally:
        await host.close()
    # Safe by default: no scripts and no self-management unless [skills] turns them on.
    assert sorted(tools) == ["skill_data", "skill_read", "skill_reload", "skill_resource"]
    enum = tools["skill_read"]["inputSchema"]["properties"]["name"]["enum"]
    assert enum == ["code-review", "release-notes", "web-research"]
    assert sorted(prompts) == ["skill.code-review", "skill.release-notes", "skill.web-research"]
    assert prompts["skill.release-notes"]["arguments"] == [
        {"name": "arguments", "description": "[previous-tag]", "required": False}
    ]
    assert prompts["skill.release-notes"]["description"].startswith("根据 git 提交记录")
    text = prompt["messages"][0]["content"]["text"]
    assert text.startswith("# 发版说明生成") and text.endswith("上个版本：v1.2.0")
    assert sorted(resources) == [
        "skill://code-review/SKILL.md",
        "skill://release-notes/SKILL.md",
        "skill://release-notes/scripts/collect.sh",
        "skill://release-notes/templates/release.md",
        "skill://web-research/SKILL.md",
        "skill://web-research/advanced.md",
        "skill://web-research/data/source_policy.json",
    ]
    assert resources["skill://web-research/advanced.md"]["mimeType"] == "text/markdown"
    assert '"academic_paper"' in policy[0]["text"]
    assert read["content"][0]["text"].startswith("# Skill: web-research")
    assert data["structuredContent"]["result"][0]["source_type"] == "academic_paper"
    assert escape["isError"] is True and "outside the skill folder" in escape["content"][0]["text"]


async def test_reload_tool_sends_list_changed(root: Path) -> None:
    host = host_for(root)
    try:
        async with connect(host.server) as client:
            await client.list_tools()
            write_skill(
                root, "fresh", "name: fresh\ndescription: 新技能 fresh", files={"a.md": "A"}
            )
            reloaded = await client.call_tool("skill_reload")
            await client.wait_for_notification("notifications/prompts/list_changed")
            await client.wait_for_notification("notifications/resources/list_changed")
            await client.wait_for_notification("notifications/tools/list_changed")
            prompts = [p["name"] for p in await client.list_prompts()]
            uris = [r["uri"] for r in await client.list_resources()]
            tools = {t["name"]: t for t in await client.list_tools()}
    finally:
        await host.close()
    assert "fresh" in reloaded["structuredContent"]["skills"]
    assert "skill.fresh" in prompts and "skill://fresh/a.md" in uris
    assert "fresh" in tools["skill_read"]["inputSchema"]["properties"]["name"]["enum"]


async def test_root_watcher_notices_edits(root: Path) -> None:
    host = host_for(root)
    provider = host.providers[0]
    assert isinstance(provider, SkillsProvider)
    try:
        async with connect(host.server) as client:
            await client.list_tools()
            assert await provider.refresh() is False  # nothing changed yet
            shutil.rmtree(root / "code-review")
            assert await provider.refresh() is True  # one poll of the watcher
            await client.wait_for_notification("notifications/prompts/list_changed")
            prompts = [p["name"] for p in await client.list_prompts()]
            (root / "web-research" / "extra.md").write_text("更多")
            assert await provider.refresh() is True  # same skills, one more file
            await client.wait_for_notification("notifications/resources/list_changed", count=2)
            uris = [r["uri"] for r in await client.list_resources()]
    finally:
        await host.close()
    assert prompts == ["skill.release-notes", "skill.web-research"]
    assert "skill://web-research/extra.md" in uris


async def test_scripts_and_self_management_pass_the_governance(root: Path, tmp_path: Path) -> None:
    source = write_skill(tmp_path / "incoming", "new-one", "name: new-one\ndescription: 安装测试")
    host = host_for(root, scripts=True, self_management=True, script_timeout=10)
    try:
        async with connect(host.server) as client:
            tools = {t["name"]: t for t in await client.list_tools()}
            asked = await client.call_tool(
                "skill_run", {"name": "release-notes", "script": "collect.sh"}
            )
            install = await client.call_tool("skill_install", {"source": str(source)})
    finally:
        await host.close()
    assert {"skill_install", "skill_list", "skill_remove", "skill_run"} <= set(tools)
    assert tools["skill_remove"]["annotations"]["destructiveHint"] is True
    # Safe by default: a shell tool is asked about, and with no way to ask it is refused ...
    assert asked["isError"] is True and "blocked (approval)" in asked["content"][0]["text"]
    # ... and self-management needs an admin approver, which a served host does not have.
    assert install["isError"] is True and "admin" in install["content"][0]["text"]
    assert not (root / "new-one").exists()
    allowed = host_for(root, {"rules": {"allow": ["skill_run"]}}, scripts=True)
    usage: Any = await run_collect(allowed)
    assert usage["isError"] is True and "usage: collect.sh" in usage["content"][0]["text"]


async def test_host_policy_can_deny_scripts(root: Path) -> None:
    # What the policy refuses is not published at all (issue 10): no skill_run to call.
    host = host_for(root, {"policy": {"denied": ["shell"]}}, scripts=True)
    try:
        async with connect(host.server) as client:
            names = [t["name"] for t in await client.list_tools()]
            with pytest.raises(JSONRPCError, match="Unknown tool: 'skill_run'"):
                await client.call_tool("skill_run", {"name": "release-notes"})
    finally:
        await host.close()
    assert "skill_run" not in names and "skill_read" in names


async def test_official_sdk_client_over_stdio(root: Path, tmp_path: Path) -> None:
    config = tmp_path / "toolweave.toml"
    config.write_text(
        '[serve]\nproviders = ["skills"]\n\n[skills]\nroots = ["skills"]\nwatch_interval = 0\n',
        encoding="utf-8",
    )
    params = StdioServerParameters(
        command=str(TOOLWEAVE), args=["serve", "--stdio", "--config", str(config)], cwd=tmp_path
    )
    async with Client(params, mode="auto") as client:
        tools = [t.name for t in (await client.list_tools()).tools]
        prompts = [p.name for p in (await client.list_prompts()).prompts]
        prompt = await client.get_prompt("skill.code-review", {"arguments": "#42"})
        resources = [str(r.uri) for r in (await client.list_resources()).resources]
        advanced = await client.read_resource("skill://web-research/advanced.md")
        read = await client.call_tool("skill_read", {"name": "release-notes"})
    assert tools == ["skill_data", "skill_read", "skill_reload", "skill_resource"]
    assert prompts == ["skill.code-review", "skill.release-notes", "skill.web-research"]
    message = prompt.messages[0].content
    assert getattr(message, "text", "").endswith("要审查的 PR：#42")
    assert "skill://web-research/data/source_policy.json" in resources
    assert "来源优先级" in getattr(advanced.contents[0], "text", "")
    assert "scripts/collect.sh" in getattr(read.content[0], "text", "")


async def test_display_names_are_called_by_their_folder_and_paths_percent_encoded(
    root: Path,
) -> None:
    write_skill(
        root,
        "agent-development",
        "name: Agent Development\ndescription: 代理开发 agents",
        files={"references/使用 指南.md": "指南"},
    )
    host = host_for(root)
    try:
        async with connect(host.server) as client:
            uris = [r["uri"] for r in await client.list_resources()]
            encoded = (
                "skill://agent-development/references/%E4%BD%BF%E7%94%A8%20%E6%8C%87%E5%8D%97.md"
            )
            read = await client.read_resource(encoded)
            raw = await client.read_resource("skill://agent-development/SKILL.md")
    finally:
        await host.close()
    assert "skill://agent-development/SKILL.md" in uris and encoded in uris
    assert read[0]["text"] == "指南"
    assert "代理开发" in raw[0]["text"]


async def test_served_skill_install_downloads_only_from_install_domains(root: Path) -> None:
    """`[skills].install_domains` lets `skill_install` download, under the fetch rules (public
    hosts only: a loopback URL is refused even when listed); none listed, no download."""
    from toolweave.skills import SkillError
    from toolweave.tools import PermissionDenied, ToolContext

    for domains, refusal, expected in (
        ([], SkillError, "downloads are off"),
        (["127.0.0.1"], PermissionDenied, "private, loopback or reserved"),
    ):
        host = host_for(root, self_management=True, install_domains=domains)
        try:
            await host.server.load_tool_sources()
            entry = host.server.tool_entry("skill_install")
            assert entry is not None
            inner = getattr(entry.tool(), "inner", None)
            assert inner is not None
            with pytest.raises(refusal, match=expected):
                await inner.execute({"source": "http://127.0.0.1:9/s.zip"}, ToolContext())
        finally:
            await host.close()
