"""Read rules reach what a walk opens and a listing shows; a bare Edit allow reaches the project.

Replays of the second review (class 9: `search_files` returned lines of Read-denied files) and
of issue 37's Claude Code checks (16: a `Read(secrets/**)` deny did not cover searching inside
the folder; 17: `echo hi > /etc/passwd` was allowed by a bare `Edit` allow), with real Claude
Code settings, the jailed filesystem tools and the agent loop.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolweave import Agent
from toolweave.builtins import filesystem_tools, shell_tool
from toolweave.governance import CallBlocked, GateContext, Governance, Rules
from toolweave.llm import Message, ScriptedModel, ToolCallPart
from toolweave.tools import Tool, ToolContext

SETTINGS = {
    "permissions": {
        "allow": ["Read", "Bash(echo:*)", "Edit", "Write"],
        "deny": ["Read(secrets/**)", "Read(./.env)", "Read(**/id_rsa)"],
    }
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    (root / ".claude").mkdir(parents=True)
    (root / ".claude" / "settings.json").write_text(json.dumps(SETTINGS))
    (root / "secrets" / "prod").mkdir(parents=True)
    (root / "secrets" / "prod" / "db.txt").write_text("password=hunter2 口令\n")
    (root / ".env").write_text("API_KEY=password-in-env\n")
    (root / "keys").mkdir()
    (root / "keys" / "id_rsa").write_text("password: PRIVATE KEY\n")
    (root / "notes.md").write_text("the password policy is in the wiki\n")
    (root / "alias.txt").symlink_to(root / "secrets" / "prod" / "db.txt")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the process's cwd is not the project
    return root


def settings(project: Path) -> Rules:
    return Rules.from_settings(project / ".claude" / "settings.json", cwd=project)


def tools(project: Path) -> dict[str, Tool]:
    return {t.name: t for t in filesystem_tools(project)}


async def governed(project: Path, name: str, **args: Any) -> str:
    """One call as the agent loop runs it: cleared, then run in the same task."""
    tool = tools(project)[name]
    gov = Governance(rules=settings(project))
    cleared = await gov.clear(name, "c", args, tool, GateContext(session_id="s"))
    return (await tool.execute(cleared.args, ToolContext(tool_call_cleared=True))).text


async def test_a_search_never_returns_lines_of_read_denied_files(project: Path) -> None:
    text = await governed(project, "search_files", contains="password")
    assert "notes.md:1" in text
    for leaked in ("hunter2", "password-in-env", "PRIVATE KEY", "alias.txt", "secrets/"):
        assert leaked not in text, leaked
    names = await governed(project, "search_files", pattern="*")
    assert "notes.md" in names and "db.txt" not in names and ".env" not in names


async def test_searching_inside_the_denied_folder_is_refused(project: Path) -> None:
    for path in ("secrets/prod", "secrets/prod/"):
        with pytest.raises(CallBlocked, match=r"Read\(secrets/\*\*\)"):
            await governed(project, "search_files", path=path, contains="password")
    # the folder itself is not matched by `secrets/**`, but nothing below it is shown
    assert "hunter2" not in await governed(project, "search_files", path="secrets", contains="pw")
    assert "db.txt" not in await governed(project, "search_files", path="secrets")


async def test_list_dir_shows_no_name_a_read_rule_refuses(project: Path) -> None:
    top = await governed(project, "list_dir", path=".")
    assert "notes.md" in top and "secrets/" in top and ".env" not in top
    inner = await governed(project, "list_dir", path="secrets")
    assert "prod" not in inner and "(empty directory)" in inner
    assert "id_rsa" not in await governed(project, "list_dir", path="keys")


async def test_without_governance_the_jail_alone_decides(project: Path) -> None:
    tool = tools(project)["search_files"]
    result = await tool.execute({"contains": "hunter2"}, ToolContext())
    assert "hunter2" in result.text  # no rules were given: nothing to hide


async def test_the_agent_loop_applies_the_read_rules_to_the_walk(project: Path) -> None:
    model = ScriptedModel(
        [
            Message("assistant", [ToolCallPart("1", "search_files", {"contains": "password"})]),
            Message.assistant("done"),
        ]
    )
    agent = Agent(model, list(tools(project).values()), governance=settings(project))
    result = await agent.run("find passwords")
    texts = [p.text for m in result.new_messages for p in m.tool_results]
    assert "notes.md:1" in texts[0] and "hunter2" not in texts[0]
    assert "password-in-env" not in texts[0] and "PRIVATE KEY" not in texts[0]


@pytest.mark.parametrize("builtin", [False, True])
async def test_a_redirect_outside_the_project_asks_under_a_bare_edit_allow(
    builtin: bool, project: Path
) -> None:
    rules = settings(project)
    own: Tool | None = shell_tool(project) if builtin else None
    for target in ("/etc/passwd", "../outside.txt", str(project.parent / "x.txt")):
        explanation = rules.explain("bash", {"command": f"echo hi > {target}"}, tool=own)
        assert explanation.decision == "ask", target
        assert "outside the project" in explanation.reason
    inside = rules.explain("bash", {"command": "echo hi > notes/new.txt"}, tool=own)
    assert inside.decision == "allow"  # the working directory and below


def test_a_rule_that_names_the_outside_path_allows_it(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    rules = Rules(allow=["Bash(echo:*)", "Edit", f"Edit(/{out}/**)"], cwd=tmp_path / "p")
    assert rules.decide("bash", {"command": f"echo hi > {out}/a.txt"}) == "allow"
    assert rules.decide("bash", {"command": f"echo hi > {tmp_path}/b.txt"}) == "ask"


async def test_the_user_shell_redirect_outside_is_not_run_unasked(project: Path) -> None:
    victim = project.parent / "victim.txt"
    victim.write_text("unchanged")
    bash = shell_tool(project, sandbox="off")
    gov = Governance(rules=settings(project))
    with pytest.raises(CallBlocked) as blocked:
        await gov.clear("bash", "c", {"command": f"echo hi > {victim}"}, bash,
                        GateContext(session_id="s"))  # fmt: skip
    assert blocked.value.stage == "approval" and "outside the project" in blocked.value.message
    assert victim.read_text() == "unchanged"
