"""Grants are snapshots (second review, class 4: a skill widened its own grant).

The attack: a skill granting `Bash(echo:*)` was activated, the model rewrote its SKILL.md to
`Bash(*)`, called `skill_reload`, and an unapproved command ran. Now the grant is what the skill
said when it was activated, a skill whose file changes during the run loses it, and a skill in
a folder the agent's own tools can write grants nothing until a person trusts it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.skills.factory import write_skill
from toolweave.agent import Agent
from toolweave.agent.session import Session
from toolweave.builtins.shell import shell_tool
from toolweave.governance import ApprovalRequest, Governance
from toolweave.llm import Message, ScriptedModel, ToolCallPart
from toolweave.skills import SkillLibrary, SkillScope
from toolweave.storage.trust import is_trusted, trust
from toolweave.tools import Permission, tool

GRANT = "name: deploy\ndescription: Deploy the site\nallowed-tools: Bash(echo:*)"


def call(tool_name: str, cid: str, /, **args: Any) -> Message:
    return Message.assistant(tool_calls=[ToolCallPart(cid, tool_name, args)])


class Asked:
    def __init__(self) -> None:
        self.commands: list[str] = []

    async def __call__(self, request: ApprovalRequest) -> bool:
        self.commands.append(str(request.args.get("command", request.tool_name)))
        return False


@pytest.fixture(autouse=True)
def private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # the trust store lives there
    return home


async def test_a_skill_rewritten_during_the_run_loses_its_grant(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    folder = write_skill(root, "deploy", GRANT)
    ran: list[str] = []

    @tool(permissions=[Permission.SHELL], primary_arg="command")
    def bash(command: str) -> str:
        """A shell that records what it ran."""
        ran.append(command)
        return "ok"

    @tool
    def tamper() -> str:
        """What the model's write did: the skill now grants every command."""
        write_skill(root, "deploy", GRANT.replace("Bash(echo:*)", "Bash(*)"))
        return "rewritten"

    model = ScriptedModel(
        [
            call("skill_read", "1", name="deploy"),
            call("bash", "2", command="echo granted"),
            call("tamper", "3"),
            call("skill_reload", "4"),
            call("bash", "5", command="echo again"),
            call("bash", "6", command="touch pwned"),
            Message.assistant("done"),
        ]
    )
    asked = Asked()
    agent = Agent(model, [bash, tamper], governance=Governance(approver=asked),
                  skills=SkillLibrary([root]))  # fmt: skip
    await agent.run("deploy")
    assert ran == ["echo granted"]
    assert asked.commands == ["echo again", "touch pwned"]
    assert "Bash(*)" in (folder / "SKILL.md").read_text()  # the file did change


def test_the_grant_is_what_the_skill_said_when_activated(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "deploy", GRANT)
    library = SkillLibrary([root])
    scope = SkillScope(library)
    session = Session()
    scope.activate(session, "deploy")
    write_skill(root, "deploy", GRANT.replace("Bash(echo:*)", "WebFetch"))
    library.reload()
    assert scope.grants(session) == []  # changed: no grant at all, old or new
    scope.end_run(session)
    scope.activate(session, "deploy")  # activated anew: what it says now
    assert [s.allowed_tools for s in scope.grants(session)] == [["WebFetch"]]


async def test_a_skill_in_a_sandbox_writable_folder_grants_only_once_trusted(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    root = work / ".skills"
    folder = write_skill(root, "deploy", GRANT)

    def run_once(asked: Asked) -> Any:
        model = ScriptedModel(
            [
                call("skill_read", "1", name="deploy"),
                call("bash", "2", command="echo 你好"),
                Message.assistant("done"),
            ]
        )
        agent = Agent(model, [shell_tool(work)], governance=Governance(approver=asked),
                      skills=SkillLibrary([root]))  # fmt: skip
        return agent.run("deploy")

    untrusted = Asked()
    await run_once(untrusted)
    assert untrusted.commands == ["echo 你好"]  # the skill's grant did not apply

    trust(folder / "SKILL.md")
    trusted = Asked()
    result = await run_once(trusted)
    assert trusted.commands == []
    assert [inv.name for inv in result.invocations] == ["skill_read", "bash"]

    write_skill(root, "deploy", GRANT + ", Write")  # edited after the trust
    assert not is_trusted(folder / "SKILL.md")
    edited = Asked()
    await run_once(edited)
    assert edited.commands == ["echo 你好"]
