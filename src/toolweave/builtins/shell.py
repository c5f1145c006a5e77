"""`bash`: run a shell command behind the governance rules, in its own process group.

The tool's own lists (`allow`, `deny`; `[builtins] shell_allow` / `shell_deny` in
toolweave.toml) are Claude Code `Bash(...)` rules, carried as `permission_rules`: governance
adds them to whatever rule set decides the call (a Claude Code settings file, `[serve.rules]`,
`Rules(...)`), so one decider (`toolweave.governance.Rules`) answers for every shell command,
wherever its rules came from. `DEFAULT_DENY` holds in every permission mode, `bypassPermissions`
included; it is matched by the command's bare name and normalised flags, so `/bin/rm --recur`,
`rm -{r,f}` and `R=-rf; rm $R` are refused as `rm -r` is.

The tool runs only a call governance cleared (`ctx.tool_call_cleared`) or a person approved;
called any other way it raises `ApprovalRequired` before anything runs. The command runs in a
new session (its own process group) with a minimal environment; the whole group is killed on
timeout, on cancellation and when the command exits (so a background `sleep &` cannot outlive
it), and the output is truncated to `max_output_chars`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
from collections.abc import Iterable, Mapping

from toolweave.builtins._output import check_positive, untrusted
from toolweave.errors import ConfigError
from toolweave.tools.base import Tool
from toolweave.tools.context import ToolContext
from toolweave.tools.errors import ApprovalRequired, InvalidArguments, ToolCancelled
from toolweave.tools.function_tool import FunctionTool
from toolweave.tools.permissions import Permission
from toolweave.tools.result import ToolResult

DEFAULT_TIMEOUT = 30.0
"""Seconds a command may run before its process group is killed."""
DEFAULT_MAX_OUTPUT_CHARS = 8000
"""Characters of combined stdout and stderr returned (head and tail kept)."""
DEFAULT_DENY = (
    "Bash(rm -r *)",  # recursive delete, in any spelling: -R, -rf, --recursive, --recur
    "Bash(mkfs *)",
    "Bash(mkfs.* *)",
    "Bash(fdisk *)",
    "Bash(wipefs *)",
    "Bash(shutdown *)",
    "Bash(reboot *)",
    "Bash(halt *)",
    "Bash(poweroff *)",
    "Bash(systemctl poweroff *)",
    "Bash(systemctl reboot *)",
    "Bash(systemctl halt *)",
    "Bash(dd * of=*)",
    "Bash(chmod -R *)",
    "Bash(git push -f *)",  # also --force, -qf, --force-with-lease and a `+ref`
)
"""Rules used when `deny` is not given: always refused, in every permission mode."""
PASSED_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "USER", "LOGNAME", "TERM")
"""Environment variables a command inherits; secrets in the host's environment stay there."""
_BASH = shutil.which("bash") or "/bin/bash"
"""The shell that runs commands: the one whose grammar the parser follows."""
_REGEX_MARKS = re.compile(r"^\^|\$$|\\[bsdwS]")
"""What only a regular expression would contain: refused in the rule lists, with the fix."""
_CAPTURE_FACTOR = 4  # bytes kept per output character, head and tail each


def shell_rules(patterns: Iterable[str], setting: str) -> tuple[str, ...]:
    """`patterns` as `Bash(...)` rules: `git status`, `npm run test:*` and `Bash(echo *)` are
    accepted; a regular expression (the older spelling) is refused with the fix."""
    rules: list[str] = []
    for pattern in patterns:
        text = pattern.strip()
        if not text:
            raise ConfigError(f"{setting}: an empty entry; write a command pattern such as 'ls *'")
        if _REGEX_MARKS.search(text):
            raise ConfigError(
                f"{setting}: {pattern!r} looks like a regular expression; entries are Claude "
                "Code Bash rules, e.g. 'git status', 'ls *', 'npm run test:*' or 'Bash(echo *)'"
            )
        rules.append(text if text.startswith("Bash(") and text.endswith(")") else f"Bash({text})")
    return tuple(rules)


def shell_tool(
    cwd: str | os.PathLike[str],
    deny: Iterable[str] | None = None,
    allow: Iterable[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
    *,
    env: Mapping[str, str] | None = None,
) -> Tool:
    """The `bash` tool running in `cwd`. `allow` and `deny` are Claude Code Bash patterns
    (`git status`, `ls *`, `Bash(npm run test:*)`); `deny` defaults to `DEFAULT_DENY`, `allow`
    to nothing (every command asks). `env` adds variables to the minimal `PASSED_ENV` set."""
    check_positive("timeout", timeout)
    check_positive("max_output_chars", max_output_chars)
    directory = os.path.realpath(os.fspath(cwd))
    if not os.path.isdir(directory):
        raise ConfigError(f"cwd {os.fspath(cwd)!r} is not an existing directory")
    rules = {
        "deny": shell_rules(DEFAULT_DENY if deny is None else deny, "deny"),
        "allow": shell_rules(allow or (), "allow"),
    }
    environment = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
    environment.update(env or {})

    async def bash(command: str, ctx: ToolContext) -> ToolResult:
        """Run a bash command in the workspace and return its exit code and output.

        Args:
            command: The command line; commands without an allow rule need approval.
        """
        if not command.strip():
            raise InvalidArguments("command is empty", tool="bash")
        if not (ctx.tool_call_cleared or ctx.tool_call_approved):
            raise ApprovalRequired(
                "the built-in shell runs only calls its governance rules cleared "
                "(Rules, a Claude Code settings file, or an approval)",
                tool="bash",
            )
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

    tool = _ShellTool(bash, permissions=[Permission.SHELL], primary_arg="command", open_world=True)
    tool.permission_rules = rules
    tool.permission_cwd = directory
    return tool


class _ShellTool(FunctionTool):
    """`bash`, with its allow and deny lists as Claude Code rules for governance to add."""

    permission_rules: Mapping[str, tuple[str, ...]] = {}
    permission_cwd: str | None = None
    """Where the commands run: redirections and paths are resolved from here."""


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
