"""The gated `bash` tool: the bypass table, the three stages, and process-group handling.

Every attack asserts the victim file is unchanged and no file appeared: a refused or
approval-pending command must not have run at all.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tests.builtins.processes import announcing_sleeper, gone, marker, pidfd_of
from toolweave.builtins import ShellGate, shell_tool
from toolweave.tools import (
    ApprovalRequired,
    PermissionDenied,
    Tool,
    ToolCancelled,
    ToolContext,
    ToolError,
)

ALLOW = [r"^(ls|echo|cat|pwd|printenv|seq|sleep)\b", r"^git status$"]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "victim.txt").write_text("unchanged")
    return tmp_path


def files(directory: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in directory.iterdir() if p.is_file()}


def bash(workdir: Path, **options: object) -> Tool:
    return shell_tool(workdir, allow=ALLOW, **options)  # type: ignore[arg-type]


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
]

DENIED = [
    "rm -rf .",
    "ls; rm -rf .",
    "echo $(rm -r .)",
    "bash -c 'rm -fr .'",
    "env rm -R .",
    "rm --recursive .",
    "dd if=/dev/zero of=victim.txt",
    "git push --force",
    "echo ${x:-$(rm victim.txt)}",  # cannot be checked: refused
    "case x in x) rm victim.txt;; esac",  # cannot be parsed: refused
]


@pytest.mark.parametrize("command", ASKED)
async def test_unmatched_commands_need_approval_and_do_not_run(command: str, workdir: Path) -> None:
    before = files(workdir)
    with pytest.raises(ApprovalRequired) as caught:
        await bash(workdir).execute({"command": command}, ToolContext())
    assert caught.value.recoverable and caught.value.reason
    assert files(workdir) == before


@pytest.mark.parametrize("command", DENIED)
async def test_denied_commands_are_refused_even_when_approved(command: str, workdir: Path) -> None:
    before = files(workdir)
    with pytest.raises(PermissionDenied, match="command refused"):
        await bash(workdir).execute({"command": command}, ToolContext(tool_call_approved=True))
    assert files(workdir) == before


async def test_allowed_commands_run_and_approved_ones_too(workdir: Path) -> None:
    tool = bash(workdir)
    result = await tool.execute({"command": "echo 你好 world && ls | cat"}, ToolContext())
    assert "exit code 0" in result.text and "你好 world" in result.text
    assert "victim.txt" in result.text and not result.is_error
    failed = await tool.execute({"command": "cat missing.txt"}, ToolContext())
    assert failed.is_error and "exit code 1" in failed.text and "No such file" in failed.text
    approved = await tool.execute(
        {"command": "echo approved > out.txt"}, ToolContext(tool_call_approved=True)
    )
    assert "exit code 0" in approved.text and (workdir / "out.txt").read_text() == "approved\n"
    assert tool.primary_arg == "command" and "shell" in {str(p) for p in tool.permissions}


async def test_gate_decisions_name_the_reason() -> None:
    gate = ShellGate(deny=[r"^rm\b"], allow=[r"^ls\b"])
    assert gate.decide("ls -la") == ("allow", "every command matches an allow rule")
    decision, reason = gate.decide("ls; whoami")
    assert decision == "ask" and "`whoami` is not matched" in reason
    decision, reason = gate.decide("ls && sudo rm x")
    assert decision == "deny" and "`rm x`" in reason
    assert gate.decide("ls > /dev/null 2>&1")[0] == "allow"
    with pytest.raises(ValueError, match="allow: '\\(' is not a valid regular expression"):
        ShellGate(deny=[], allow=["("])


async def test_no_allow_rules_means_everything_asks(workdir: Path) -> None:
    with pytest.raises(ApprovalRequired):
        await shell_tool(workdir).execute({"command": "ls"}, ToolContext())


async def test_minimal_environment_keeps_secrets(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLWEAVE_TEST_SECRET", "s3cret")
    tool = bash(workdir, env={"GREETING": "你好"})
    leaked = await tool.execute({"command": "printenv TOOLWEAVE_TEST_SECRET"}, ToolContext())
    passed = await tool.execute({"command": "printenv GREETING"}, ToolContext())
    assert "s3cret" not in leaked.text and leaked.is_error
    assert "你好" in passed.text


async def test_output_is_truncated_head_and_tail(workdir: Path) -> None:
    result = await bash(workdir, max_output_chars=600).execute(
        {"command": "seq 1 200000"}, ToolContext()
    )
    assert len(result.text) < 1200 and "truncated" in result.text
    assert "\n1\n2\n" in result.text and "200000" in result.text
    assert "1288895 bytes of output" in result.text


def _watch(fifo: Path, duration: str) -> int:
    assert fifo.read_text().strip() == "ready"
    return pidfd_of(duration)


async def test_timeout_kills_the_whole_process_group(workdir: Path) -> None:
    duration, fifo = marker(), workdir / "pid.fifo"
    os.mkfifo(fifo)
    watcher = asyncio.create_task(asyncio.to_thread(_watch, fifo, duration))
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
        await bash(workdir).execute({"command": "  "}, ToolContext())
