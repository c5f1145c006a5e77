"""Two ways a call is let through without a question, and what they can never override.

A skill's or command's `allowed-tools` reach the pipeline as `GateContext.preapproved`: allow
rules below every deny and ask rule, named in the explanation. In `acceptEdits`, a shell
redirection into the project is an accepted edit; outside it (`../`, a symlink out, a `cd`
first, a target bash expands) it still asks, and deny rules still win. Fixtures are Claude Code
settings files of the real shape.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from toolweave.agent import Agent
from toolweave.agent.session import Session
from toolweave.builtins import filesystem_tools, shell_tool
from toolweave.governance import GateContext, Governance, Rules
from toolweave.governance.grants import grant_rules, preapproved
from toolweave.llm import Message, ScriptedModel, ToolCallPart
from toolweave.tools import tool

SETTINGS = {
    "permissions": {
        "allow": ["Bash(echo *)", "Bash(cd:*)", "Bash(git status:*)"],
        "deny": ["Edit(./secrets/**)", "Bash(git push:*)", "Read(./.env)"],
        "ask": ["Bash(git commit:*)"],
        "defaultMode": "acceptEdits",
    }
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "项目"
    (root / ".claude").mkdir(parents=True)
    (root / "notes").mkdir()
    (root / "secrets").mkdir()
    (root / ".claude" / "settings.json").write_text(json.dumps(SETTINGS), encoding="utf-8")
    (root / ".env").write_text("TOKEN=x")
    os.symlink(tmp_path, root / "up")  # a link inside the project to the folder above it
    return root


def rules_of(project: Path) -> Rules:
    return Rules.from_settings(project / ".claude" / "settings.json", cwd=project)


def test_a_grant_allows_what_it_lists_and_nothing_a_deny_or_ask_rule_names(
    project: Path,
) -> None:
    shell = shell_tool(project)
    reader = {t.name: t for t in filesystem_tools(project)}["read_file"]
    governance = Governance(rules=rules_of(project))
    entries = ["Bash(git diff:*)", "Bash(git push:*)", "Bash(git commit:*)", "Read", "*", "Bash("]
    grant = preapproved([("skill 'git-review' (allowed-tools)", entries)], str(project))
    assert grant is not None and [r.text for r in grant.allow] == entries[:4]  # `*`, junk: none
    gate = GateContext("s", preapproved=lambda: grant)
    bare = GateContext("s")

    def decide(command: str, context: GateContext = gate) -> tuple[str, str]:
        found = governance.decide("bash", {"command": command}, shell, context)
        return found.decision, found.reason

    assert decide("git diff --stat", bare)[0] == "ask"  # no grant: the rules alone
    decision, reason = decide("git diff --stat")
    assert decision == "allow" and "from skill 'git-review' (allowed-tools)" in reason
    assert decide("git push origin main")[0] == "deny"  # listed, but a deny rule wins
    assert decide("git commit -m 修复")[0] == "ask"  # listed, but an ask rule still asks
    assert decide("git diff; touch x")[0] == "ask"  # every part must be allowed
    assert decide("git log")[0] == "ask"  # unlisted: decided as without the skill
    read = governance.decide("read_file", {"path": ".env"}, reader, gate)
    assert read.decision == "deny" and "Read(./.env)" in read.reason  # `Read` grant loses
    # A child run (a subagent) gets the grant, and its parent's deny still holds.
    child = governance.child(agent_id="a1", agent_type="helper", rules=Rules(cwd=project))
    assert child.decide("bash", {"command": "git diff"}, shell, gate).decision == "allow"
    assert child.decide("bash", {"command": "git push"}, shell, gate).decision == "deny"
    assert grant_rules(("Read",), "x", "/") is grant_rules(("Read",), "x", "/")  # parsed once


@pytest.mark.parametrize(
    ("command", "decision"),
    [
        ("echo hi > notes/a.txt", "allow"),
        ("echo 早上好 >> notes/笔记.md", "allow"),
        ("cd notes && echo hi > a.txt", "ask"),  # after a cd the target is not where it was
        ("echo hi > ../outside.txt", "ask"),
        ("echo hi > up/outside.txt", "ask"),  # through a symlink out of the project
        ("echo hi > $HOME/x", "ask"),  # bash expands it: the real path is unknown
        ("echo hi > ~/x", "ask"),
        ("echo hi > notes/*.txt", "ask"),
        ("echo hi > secrets/key.txt", "deny"),  # the deny rule wins in every mode
        ("ls > notes/a.txt", "ask"),  # the command itself still needs a rule
    ],
)
def test_accept_edits_accepts_redirections_into_the_project(
    project: Path, command: str, decision: str
) -> None:
    shell = shell_tool(project)
    governance = Governance(rules=rules_of(project))
    mode = GateContext("s", "acceptEdits")
    accepting = governance.decide("bash", {"command": command}, shell, mode)
    assert accepting.decision == decision, accepting.reason
    default = governance.decide("bash", {"command": command}, shell, GateContext("s"))
    assert default.decision == ("deny" if decision == "deny" else "ask")  # only acceptEdits


def test_accept_edits_never_trusts_links_this_process_resolves(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)  # /proc/self/cwd is the project here, the shell's may not be
    governance = Governance(rules=rules_of(project))
    mode = GateContext("s", "acceptEdits")
    for target in ("/proc/self/cwd/notes/a.txt", "/dev/fd/0"):
        found = governance.decide(
            "bash", {"command": f"echo hi > {target}"}, shell_tool(project), mode
        )
        assert found.decision == "ask", found.reason
    # A command tool that does not say where it runs (an MCP server's `run(command)`): its
    # redirections are never accepted, whatever the local directory holds.
    remote = tool(lambda command: command, name="mcp__ssh__run", primary_arg="command")
    rules = Rules(allow=["mcp__ssh__run(echo *)"], cwd=project)
    found = Governance(rules=rules).decide(
        "mcp__ssh__run", {"command": "echo hi > notes/a.txt"}, remote, mode
    )
    assert found.decision == "ask", found.reason


async def test_accept_edits_session_writes_inside_and_is_refused_outside(project: Path) -> None:
    model = ScriptedModel(
        [
            Message.assistant(
                tool_calls=[
                    ToolCallPart("1", "bash", {"command": "echo 你好 > notes/a.txt"}),
                    ToolCallPart("2", "bash", {"command": "echo x > ../outside.txt"}),
                ]
            ),
            Message.assistant("done"),
        ]
    )
    agent = Agent(model, [shell_tool(project)], governance=Governance(rules=rules_of(project)))
    result = await agent.run("write notes", Session(permission_mode="acceptEdits"))
    assert (project / "notes" / "a.txt").read_text(encoding="utf-8") == "你好\n"
    assert not (project.parent / "outside.txt").exists()  # no approver: refused, not written
    assert [inv.name for inv in result.invocations] == ["bash"]
    refused = model.requests[1].messages[-1].parts[0]
    assert "outside the project" in str(refused.content)  # type: ignore[union-attr]
