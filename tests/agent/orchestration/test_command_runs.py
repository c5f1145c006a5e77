"""A command file's frontmatter and context lines while it runs: `model`, `allowed-tools` (a
pre-approval for the command's run, never above a deny rule), `` !`cmd` `` through the governed
shell, `@path` through the file jail."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from toolweave.agent import Agent
from toolweave.agent.orchestration import Commands, Orchestration
from toolweave.builtins.filesystem import filesystem_tools
from toolweave.builtins.shell import shell_tool
from toolweave.governance import ApprovalRequest, Governance
from toolweave.llm import Message, ScriptedModel, ToolCallPart
from toolweave.storage.trust import trust

REVIEW = """---
description: Review the working tree
argument-hint: [focus]
allowed-tools: Bash(git status:*), Read, Bash(rm -rf:*)
model: fast
---
Working tree:
!`git status --short`
Notes folder: !`ls notes`

Notes: @notes/待办.md

!`rm -rf build`
Review with focus on $ARGUMENTS.
"""


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    (folder / "notes").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    (folder / "notes" / "待办.md").write_text("- 修复登录\n", encoding="utf-8")
    (folder / "app.py").write_text("print('hi')\n", encoding="utf-8")
    commands = tmp_path / "commands" / "dev"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(REVIEW, encoding="utf-8")
    return folder


def call(name: str, cid: str, **args: Any) -> Message:
    return Message.assistant(tool_calls=[ToolCallPart(cid, name, args)])


async def test_model_tools_shell_and_files_apply_while_the_command_runs(work: Path) -> None:
    asked: list[str] = []

    async def approve(request: ApprovalRequest) -> bool:
        asked.append(request.args.get("command", request.tool_name))
        return True

    main = ScriptedModel(
        [call("bash", "9", command="git status --short"), Message.assistant("main model")]
    )
    fast = ScriptedModel(
        [
            call("bash", "1", command="git status"),
            call("bash", "2", command="git log -1"),
            call("write_file", "3", path="out.txt", content="x"),
            call("read_file", "4", path="app.py"),
            Message.assistant("reviewed"),
        ]
    )
    commands = Commands.from_directory(work.parent / "commands", models={"fast": fast})
    tools = [shell_tool(work), *filesystem_tools(work)]
    agent = Agent(
        main,
        tools,
        governance=Governance(approver=approve),
        orchestration=Orchestration(commands=commands),
    )
    result = await agent.run("/dev:review 安全")
    assert result.output == "reviewed" and main.requests == []  # the command's model ran it
    prompt = fast.requests[0].messages[-1].text
    # Each output inside the tool-output boundary (data, not instructions).
    assert '$ git status --short\n<tool_output tool="bash">' in prompt
    assert "?? app.py\n?? notes/" in prompt
    assert 'Notes: @notes/待办.md\n<tool_output tool="read_file">\n- 修复登录' in prompt
    assert "$ ls notes" in prompt and "待办.md" in prompt  # not listed: asked, approved, ran
    # Listed in allowed-tools, but the shell's own deny list wins: a grant is only an allow.
    assert "[`rm -rf build` was not run: Tool 'bash' was blocked (rules)" in prompt
    assert prompt.rstrip().endswith("Review with focus on 安全.")
    # git status and Read are pre-approved (never asked); every call it does not list is
    # decided as without the command: asked (and approved here), never refused for that.
    assert asked == ["ls notes", "git log -1", "write_file"]
    ran = [inv.name for inv in result.invocations]
    assert ran == ["bash", "bash", "read_file", "bash", "bash", "write_file", "read_file"]
    assert (work / "out.txt").read_text() == "x"
    # The grant ends with the command's run: the next prompt asks for git status again.
    assert (await agent.run("hello")).output == "main model"
    assert asked == ["ls notes", "git log -1", "write_file", "git status --short"]


async def test_shell_lines_are_refused_without_approval_never_silently(work: Path) -> None:
    model = ScriptedModel([Message.assistant("ok")])
    commands = Commands.from_directory(work.parent / "commands", models={"fast": model})
    agent = Agent(
        model,
        [shell_tool(work), *filesystem_tools(work)],
        orchestration=Orchestration(commands=commands),
    )
    await agent.run("/review")
    prompt = model.requests[0].messages[-1].text
    assert "$ git status --short" in prompt  # pre-approved by the command: no approver needed
    assert "[`ls notes` was not run:" in prompt  # no rule, no approver: refused
    assert "- 修复登录" in prompt  # reading a file in the jail needs no approval
    no_tools = ScriptedModel([Message.assistant("ok")])
    bare = Commands.from_directory(work.parent / "commands", models={"fast": no_tools})
    await Agent(no_tools, [], orchestration=Orchestration(commands=bare)).run("/review x")
    text = no_tools.requests[0].messages[-1].text
    assert "[`git status --short` was not run: this agent has no 'bash' tool]" in text
    assert "@notes/待办.md [not read: this agent has no 'read_file' tool]" in text


def test_at_references_are_files_not_mentions() -> None:
    from toolweave.agent._run.command_run import _AT

    found = [m.group(1) for m in _AT.finditer(
        "See @src/app.py and @README.md, mail a@b.com, ping @alice, `@decorator`, @./x/y.txt."
    )]  # fmt: skip
    assert found == ["src/app.py", "README.md", "./x/y.txt"]


async def test_a_command_file_the_agents_shell_can_write_grants_only_once_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the trust store lives there
    work = tmp_path / "work"
    folder = work / ".claude" / "commands"
    folder.mkdir(parents=True)
    file = folder / "deploy.md"  # where a sandboxed `bash` call could have written it
    file.write_text("---\nallowed-tools: Bash(echo:*)\n---\nDeploy the site.\n", "utf-8")

    async def run_once() -> list[str]:
        asked: list[str] = []

        async def deny(request: ApprovalRequest) -> bool:
            asked.append(request.args.get("command", request.tool_name))
            return False

        model = ScriptedModel([call("bash", "1", command="echo 你好"), Message.assistant("ok")])
        commands = Orchestration(commands=Commands.from_directory(folder))
        agent = Agent(model, [shell_tool(work)], governance=Governance(approver=deny),
                      orchestration=commands)  # fmt: skip
        await agent.run("/deploy")
        return asked

    assert await run_once() == ["echo 你好"]  # untrusted: its grant did not apply
    trust(file)
    assert await run_once() == []  # a person reviewed it: pre-approved
    file.write_text("---\nallowed-tools: Bash(*)\n---\nDeploy the site.\n", "utf-8")
    assert await run_once() == ["echo 你好"]  # edited after the trust
