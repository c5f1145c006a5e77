"""The governed `bash` tool: the bypass table decided by the one rule set, and process groups.

The shell's own allow and deny lists are Claude Code rules that governance adds to its rule
set. Every attack asserts the victim file is unchanged and no file appeared: a refused or
approval-pending command must not have run at all.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from tests.builtins.processes import (
    announcing_sleeper,
    gone,
    marker,
    pidfd_of,
    pidfd_unless_ended,
)
from toolweave.builtins import shell_tool
from toolweave.governance import CallBlocked, GateContext, Governance, PermissionMode
from toolweave.tools import (
    ApprovalRequired,
    Tool,
    ToolCancelled,
    ToolContext,
    ToolError,
    ToolResult,
)

ALLOW = ["ls *", "echo *", "cat *", "pwd", "printenv *", "seq *", "sleep *", "git status"]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "victim.txt").write_text("unchanged")
    return tmp_path


def files(directory: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in directory.iterdir() if p.is_file()}


def bash(workdir: Path, **options: object) -> Tool:
    return shell_tool(workdir, allow=ALLOW, **options)  # type: ignore[arg-type]


def cleared() -> ToolContext[Any]:
    return ToolContext(tool_call_cleared=True)


async def governed(
    tool: Tool, command: str, *, mode: PermissionMode = "default", approve: bool = False
) -> ToolResult:
    """One call as the agent loop runs it: governance clears it, then the tool runs."""

    async def approver(request: object) -> bool:
        return approve

    gov = Governance(approver=approver)
    gate = GateContext(session_id="s1", mode=mode)
    args = (await gov.clear(tool.name, "c1", {"command": command}, tool, gate)).args
    return await tool.execute(args, cleared())


ASKED = [
    "ls; rm victim.txt",
    "ls && rm victim.txt",
    "ls || rm victim.txt",
    "ls | rm victim.txt",
    "ls\nrm victim.txt",
    "echo $(rm victim.txt)",
    "echo `rm victim.txt`",
    "cat <(rm victim.txt)",
    "(rm victim.txt)",
    "{ rm victim.txt; }",
    "env rm victim.txt",
    "env X=1 rm victim.txt",
    "nohup rm victim.txt",
    "timeout 5 rm victim.txt",
    "xargs rm < victim.txt",
    "bash -c 'rm victim.txt'",
    "sh -c 'ls; rm victim.txt'",
    "eval 'rm victim.txt'",
    "r''m victim.txt",
    '"r"m victim.txt',
    "\\rm victim.txt",
    "find . -delete",
    "find . -exec rm {} ;",
    "echo pwned > victim.txt",
    "echo pwned >> victim.txt",
    "echo pwned > 5",  # a file named 5, not a descriptor
    "cat victim.txt > copy.txt",
    "ls &> listing.txt",
    "python3 -c 'import os; os.remove(\"victim.txt\")'",
    "perl -e 'unlink \"victim.txt\"'",
    'node -e \'require("fs").unlinkSync("victim.txt")\'',
    "git status; git push",
    "cp victim.txt copy.txt",
    "X=blk; ls$X",  # the command name is only known at run time
    "ls${X} victim.txt",
    "/bin/l? victim.txt",
    "echo ${x:-$(rm victim.txt)}",  # cannot be checked
    "case x in x) rm victim.txt;; esac",  # cannot be parsed
    "cat victim.txt | bash",  # a shell fed on stdin
    "bash <<< 'rm victim.txt'",
    "source <(echo rm victim.txt)",
    "sudo -s",
    "GIT_EXTERNAL_DIFF=./x git status",  # an environment prefix is part of the command
]

DENIED = [
    "rm -rf .",
    "ls; rm -rf .",
    "echo $(rm -r .)",
    "bash -c 'rm -fr .'",
    "env rm -R .",
    "rm --recursive .",
    "rm --recur .",
    "rm -{r,f} .",
    "R=-rf; rm $R .",
    "rm . -fR",
    "/bin/rm -rf .",
    "/usr/bin/../bin/rm -rf .",
    "$'\\x72m' -rf .",
    "sudo rm -rf .",
    "xargs rm -rf < victim.txt",
    "setsid rm -rf .",
    "flock /tmp/l rm -rf .",
    "su -c 'rm -rf .'",
    "script -qc 'rm -rf .' /dev/null",
    "dd if=/dev/zero of=victim.txt",
    "/bin/dd if=/dev/zero of=victim.txt",
    "/sbin/mkfs.ext4 victim.txt",
    "chmod --recursive 777 .",
    "chmod -R 777 .",
    "git push --force",
    "git push -qf",
    "git push origin +main",
    "systemctl poweroff",
    "sudo shutdown -h now",
]


@pytest.mark.parametrize("command", ASKED)
async def test_unmatched_commands_need_approval_and_do_not_run(command: str, workdir: Path) -> None:
    before = files(workdir)
    with pytest.raises(CallBlocked) as blocked:
        await governed(bash(workdir), command)
    assert blocked.value.stage == "approval" and blocked.value.recoverable
    with pytest.raises(ApprovalRequired):  # ungoverned, the tool itself refuses to run
        await bash(workdir).execute({"command": command}, ToolContext())
    assert files(workdir) == before


@pytest.mark.parametrize("mode", ["default", "bypassPermissions"])
@pytest.mark.parametrize("command", DENIED)
async def test_denied_commands_are_refused_even_approved_or_bypassed(
    command: str, mode: PermissionMode, workdir: Path
) -> None:
    before = files(workdir)
    with pytest.raises(CallBlocked) as blocked:
        await governed(bash(workdir), command, mode=mode, approve=True)
    assert blocked.value.stage == "rules" and "denied by 'Bash(" in blocked.value.message
    assert files(workdir) == before


async def test_allowed_commands_run_and_approved_ones_too(workdir: Path) -> None:
    tool = bash(workdir)
    result = await governed(tool, "echo 你好 world && ls | cat")
    assert "exit code 0" in result.text and "你好 world" in result.text
    assert "victim.txt" in result.text and not result.is_error
    failed = await governed(tool, "cat missing.txt")
    assert failed.is_error and "exit code 1" in failed.text and "No such file" in failed.text
    approved = await governed(tool, "echo approved > out.txt", approve=True)
    assert "exit code 0" in approved.text and (workdir / "out.txt").read_text() == "approved\n"
    assert tool.primary_arg == "command" and "shell" in {str(p) for p in tool.permissions}


def test_lists_are_claude_code_rules_and_regexes_are_refused(workdir: Path) -> None:
    tool = shell_tool(workdir, allow=["git status", "Bash(npm run test:*)"], deny=["rm *"])
    assert tool.permission_rules == {  # type: ignore[attr-defined]
        "deny": ("Bash(rm *)",),
        "allow": ("Bash(git status)", "Bash(npm run test:*)"),
    }
    with pytest.raises(ValueError, match=r"looks like a regular expression.*'ls \*'"):
        shell_tool(workdir, allow=[r"^ls\b"])


async def test_no_allow_rules_means_everything_asks(workdir: Path) -> None:
    with pytest.raises(CallBlocked):
        await governed(shell_tool(workdir), "ls")


async def test_minimal_environment_keeps_secrets(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLWEAVE_TEST_SECRET", "s3cret")
    tool = bash(workdir, env={"GREETING": "你好"})
    leaked = await governed(tool, "printenv TOOLWEAVE_TEST_SECRET")
    passed = await governed(tool, "printenv GREETING")
    assert "s3cret" not in leaked.text and leaked.is_error
    assert "你好" in passed.text


async def test_output_is_truncated_head_and_tail(workdir: Path) -> None:
    result = await governed(bash(workdir, max_output_chars=600), "seq 1 200000")
    assert len(result.text) < 1200 and "truncated" in result.text
    assert "\n1\n2\n" in result.text and "200000" in result.text
    assert "1288895 bytes of output" in result.text


def _watch(fifo: Path, duration: str) -> int:
    assert fifo.read_text().strip() == "ready"
    return pidfd_of(duration)


def _watch_unless_ended(fifo: Path, duration: str) -> int | None:
    assert fifo.read_text().strip() == "ready"
    return pidfd_unless_ended(duration)


async def test_timeout_kills_the_whole_process_group(workdir: Path) -> None:
    duration, fifo = marker(), workdir / "pid.fifo"
    os.mkfifo(fifo)
    # The 0.5 s timeout may fire before the watcher looks: an ended process is gone too.
    watcher = asyncio.create_task(asyncio.to_thread(_watch_unless_ended, fifo, duration))
    result = await bash(workdir, timeout=0.5).execute(
        {"command": f"{announcing_sleeper(duration, fifo, new_session=False)} wait"},
        ToolContext(tool_call_approved=True),
    )
    assert result.is_error and "killed after 0.5 s (timeout)" in result.text
    assert gone(await watcher)


async def test_background_job_does_not_hold_the_call(workdir: Path) -> None:
    duration, fifo, go = marker(), workdir / "pid.fifo", workdir / "go.fifo"
    os.mkfifo(fifo)
    os.mkfifo(go)

    def watch_then_go() -> int:
        fd = _watch(fifo, duration)
        go.write_text("go\n")
        return fd

    watcher = asyncio.create_task(asyncio.to_thread(watch_then_go))
    sleeper = announcing_sleeper(duration, fifo, new_session=False)
    result = await bash(workdir, timeout=60).execute(
        {"command": f"{sleeper} read _ < {go}; echo ok"},
        ToolContext(tool_call_approved=True),
    )
    assert "exit code 0" in result.text and "ok" in result.text
    assert gone(await watcher)


async def test_cancellation_kills_the_process_group(workdir: Path) -> None:
    duration, fifo = marker(), workdir / "pid.fifo"
    os.mkfifo(fifo)
    ctx = ToolContext(tool_call_approved=True)
    call = asyncio.create_task(
        bash(workdir).execute(
            {"command": f"{announcing_sleeper(duration, fifo, new_session=False)} wait"}, ctx
        )
    )
    fd = await asyncio.to_thread(_watch, fifo, duration)
    ctx.cancel()
    with pytest.raises(ToolCancelled):
        await call
    assert gone(fd)


async def test_bad_settings_fail_at_construction(workdir: Path) -> None:
    with pytest.raises(ValueError, match="timeout"):
        shell_tool(workdir, timeout=0)
    with pytest.raises(ValueError, match="not an existing directory"):
        shell_tool(workdir / "missing")
    with pytest.raises(ToolError, match="command is empty"):
        await bash(workdir).execute({"command": "  "}, cleared())
