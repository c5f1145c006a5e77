"""`bash`: run a shell command behind the three-stage gate, in its own process group.

The line is split by the one shared parser (`toolweave.tools.shell_syntax`) into every simple
command it would run, including those inside substitutions, pipes, lists, newlines, subshells and
`bash -c` strings, with wrappers such as `env` and `nohup` stripped. Then, per command:

1. any `deny` pattern matches -> refused, whatever else the line contains;
2. every command matches an `allow` pattern (and writes no file through a redirection) -> run;
3. otherwise the tool raises `ApprovalRequired` before anything runs: the gate pipeline asks a
   person and re-runs the call approved, or refuses it when nobody can be asked (fail closed).

A line the parser cannot understand is refused. The command runs in a new session (its own
process group) with a minimal environment; the whole group is killed on timeout, on
cancellation and when the command exits (so a background `sleep &` cannot outlive it), and the
output is truncated to `max_output_chars`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
from collections.abc import Iterable, Mapping
from typing import Any

from toolweave.builtins._output import check_positive, untrusted
from toolweave.errors import ConfigError
from toolweave.tools.base import Tool
from toolweave.tools.context import ToolContext
from toolweave.tools.errors import (
    ApprovalRequired,
    InvalidArguments,
    PermissionDenied,
    ToolCancelled,
)
from toolweave.tools.function_tool import FunctionTool
from toolweave.tools.permissions import Permission
from toolweave.tools.result import ToolResult
from toolweave.tools.shell_syntax import ShellParseError, SimpleCommand, parse_commands

DEFAULT_TIMEOUT = 30.0
"""Seconds a command may run before its process group is killed."""
DEFAULT_MAX_OUTPUT_CHARS = 8000
"""Characters of combined stdout and stderr returned (head and tail kept)."""
DEFAULT_DENY = (
    r"^rm\s+(\S+\s+)*(-[a-zA-Z]*[rR]|--recursive)",  # recursive delete
    r"^(mkfs(\.\w+)?|fdisk|wipefs|shutdown|reboot|halt|poweroff)\b",
    r"^dd\s.*\bof=",
    r"^chmod\s+(\S+\s+)*-[a-zA-Z]*R",
    r"^git\s+push\s+(\S+\s+)*(-f|--force)\b",
)
"""Deny patterns used when `deny` is not given: always refused, even with an approver."""
PASSED_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "USER", "LOGNAME", "TERM")
"""Environment variables a command inherits; secrets in the host's environment stay there."""
_PLAIN_NAME = re.compile(r"^[A-Za-z0-9_./+-]+$")
"""A command name an allow rule can vouch for: no expansion, glob or brace inside."""
_BASH = shutil.which("bash") or "/bin/bash"
"""The shell that runs commands: the one whose grammar the parser follows."""
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_CAPTURE_FACTOR = 4  # bytes kept per output character, head and tail each


def _compile(patterns: Iterable[str], setting: str) -> tuple[re.Pattern[str], ...]:
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern))
        except re.error as exc:
            raise ConfigError(
                f"{setting}: {pattern!r} is not a valid regular expression: {exc}"
            ) from None
    return tuple(compiled)


def _text(command: SimpleCommand) -> str:
    return " ".join(command.argv)


class ShellGate:
    """The three stages, reusable without running anything (`decide`)."""

    def __init__(self, deny: Iterable[str], allow: Iterable[str]) -> None:
        self.deny = _compile(deny, "deny")
        self.allow = _compile(allow, "allow")

    def decide(self, command: str) -> tuple[str, str]:
        """("deny" | "allow" | "ask", reason) for a command line."""
        try:
            commands = parse_commands(command)
        except ShellParseError as exc:
            return "deny", exc.message
        for simple in commands:
            text = _text(simple)
            for pattern in self.deny:
                if pattern.search(text):
                    return "deny", f"`{text}` matches the deny rule {pattern.pattern!r}"
        for simple in commands:
            text = _text(simple)
            unsafe = [t for t in simple.writes if t not in _HARMLESS_TARGETS and not t.isdigit()]
            if unsafe:
                return "ask", f"`{text}` writes to {', '.join(unsafe)} through a redirection"
            if not simple.argv:
                continue
            if not _PLAIN_NAME.match(simple.argv[0]):  # `ls$X` may run `lsblk`
                return "ask", f"the command name {simple.argv[0]!r} is only known at run time"
            if not any(p.search(text) for p in self.allow):
                return "ask", f"`{text}` is not matched by an allow rule"
        return "allow", "every command matches an allow rule"


def shell_tool(
    cwd: str | os.PathLike[str],
    deny: Iterable[str] | None = None,
    allow: Iterable[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
    *,
    env: Mapping[str, str] | None = None,
) -> Tool:
    """The `bash` tool running in `cwd`. `deny` defaults to `DEFAULT_DENY`; `allow` to nothing
    (every command asks). `env` adds variables to the minimal `PASSED_ENV` set."""
    check_positive("timeout", timeout)
    check_positive("max_output_chars", max_output_chars)
    directory = os.path.realpath(os.fspath(cwd))
    if not os.path.isdir(directory):
        raise ConfigError(f"cwd {os.fspath(cwd)!r} is not an existing directory")
    gate = ShellGate(DEFAULT_DENY if deny is None else deny, allow or ())
    environment = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
    environment.update(env or {})

    async def bash(command: str, ctx: ToolContext) -> ToolResult:
        """Run a bash command in the workspace and return its exit code and output.

        Args:
            command: The command line; commands without an allow rule need approval.
        """
        if not command.strip():
            raise InvalidArguments("command is empty", tool="bash")
        decision, reason = gate.decide(command)
        if decision == "deny":
            refused = PermissionDenied(f"command refused: {reason}", tool="bash")
            refused.recoverable = True  # the model can choose a different command
            raise refused
        if decision == "ask" and not ctx.tool_call_approved:
            raise ApprovalRequired(reason, tool="bash")
        code, output, size, timed_out = await run_command(
            command, directory, environment, timeout, max_output_chars, ctx
        )
        if ctx.cancelled:
            raise ToolCancelled("the command was cancelled and its processes killed", tool="bash")
        status = f"killed after {timeout:g} s (timeout)" if timed_out else f"exit code {code}"
        text = f"{status}; {size} bytes of output\n{output}" if size else status
        result = untrusted(text, "bash", max_output_chars + 100)
        result.is_error = timed_out or code != 0
        return result

    shell = _ShellTool(bash, permissions=[Permission.SHELL], primary_arg="command", open_world=True)
    shell.gate = gate
    return shell


class _ShellTool(FunctionTool):
    """`bash` asks for approval itself (ApprovalRequired, before running anything) for every
    command its allow list does not cover, so governance does not ask first by default; its
    rules (`bash(git *)`, deny lists) still apply."""

    asks_itself = True
    gate: ShellGate

    def own_decision(self, args: dict[str, Any]) -> tuple[str, str]:
        """What the tool itself decides for `args` before running anything (its gate)."""
        return self.gate.decide(str(args.get("command", "")))


async def run_command(
    command: str,
    cwd: str,
    env: Mapping[str, str],
    timeout: float,
    max_chars: int,
    ctx: ToolContext,
) -> tuple[int | None, str, int, bool]:
    """(exit code, output, its size in bytes, timed out) of `command` in its own process group."""
    process = await asyncio.create_subprocess_exec(
        _BASH,
        "-c",
        command,
        cwd=cwd,
        env=dict(env),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    assert process.stdout is not None
    reader = asyncio.ensure_future(_capture(process.stdout, max_chars * _CAPTURE_FACTOR))
    waiter = asyncio.ensure_future(_exited(process))
    cancelled = asyncio.ensure_future(ctx.wait_cancelled())
    try:
        done, _ = await asyncio.wait(
            {waiter, cancelled}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
    except BaseException:
        reader.cancel()
        raise
    finally:
        cancelled.cancel()
        _kill_group(process.pid)  # also stops background jobs that would hold the pipe open
        waiter.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(process.wait())
    output, size = await reader
    timed_out = not done
    code = None if timed_out or ctx.cancelled else process.returncode
    return code, output, size, timed_out


async def _exited(process: asyncio.subprocess.Process) -> None:
    """Return when the shell itself exits. `process.wait()` also waits for the pipes to close,
    which a background job (`sleep 100 &`) would delay; a pidfd signals the exit alone."""
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is None:  # not Linux: the pipes close once the group is killed
        await process.wait()
        return
    loop = asyncio.get_running_loop()
    fd = pidfd_open(process.pid)
    exited: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not exited.done():
            exited.set_result(None)

    loop.add_reader(fd, readable)
    try:
        await exited
    finally:
        loop.remove_reader(fd)
        os.close(fd)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def _capture(stream: asyncio.StreamReader, limit: int) -> tuple[str, int]:
    """All of `stream`, keeping at most `limit` bytes of its head and of its tail, and how many
    bytes it had in all."""
    head = bytearray()
    tail = bytearray()
    dropped = total = 0
    while chunk := await stream.read(65536):
        total += len(chunk)
        room = limit - len(head)
        if room > 0:
            head += chunk[:room]
            chunk = chunk[room:]
        tail += chunk
        if len(tail) > limit:
            dropped += len(tail) - limit
            del tail[: len(tail) - limit]
    text = head.decode("utf-8", "replace")
    if dropped:
        text += f"\n[... {dropped} bytes of output dropped ...]\n"
    return text + tail.decode("utf-8", "replace"), total
