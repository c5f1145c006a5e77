"""`bash`: run a shell command behind the governance rules, in its own process group.

The tool's own lists (`allow`, `deny`; `[builtins] shell_allow` / `shell_deny` in
toolweave.toml) are Claude Code `Bash(...)` rules, carried as `permission_rules`: governance
adds them to whatever rule set decides the call (a Claude Code settings file, `[serve.rules]`,
`Rules(...)`), so one decider (`toolweave.governance.Rules`) answers for every shell command,
wherever its rules came from. `DEFAULT_DENY` holds in every permission mode, `bypassPermissions`
included; it is matched by the command's bare name and normalised flags, so `/bin/rm --recur`,
`rm -{r,f}` and `R=-rf; rm $R` are refused as `rm -r` is.

The tool runs only a call governance cleared (`ctx.tool_call_cleared`) or a person approved;
called any other way it raises `ApprovalRequired` before anything runs. No pattern over command
text sees everything a command does, so what runs runs under the OS sandbox
(`toolweave.tools.sandbox`): the host read-only but for the workspace and a private /tmp, no
network unless allowed, its own PID namespace (no process outlives the call), a minimal
environment. Where no sandbox can be made the tool refuses with the reason and the fix; with
`sandbox="off"` (the operator's explicit choice) every command asks a person first, whatever the
rules cleared. Output is read with a byte bound and truncated to `max_output_chars`.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable, Mapping

from toolweave.builtins._output import check_positive, untrusted
from toolweave.errors import ConfigError
from toolweave.tools.base import Tool
from toolweave.tools.context import ToolContext
from toolweave.tools.errors import ApprovalRequired, InvalidArguments, ToolCancelled
from toolweave.tools.function_tool import FunctionTool
from toolweave.tools.permissions import Permission
from toolweave.tools.result import ToolResult
from toolweave.tools.sandbox import (
    DEFAULT_LIMITS,
    DEFAULT_NETWORK,
    DEFAULT_SANDBOX_MODE,
    Sandbox,
    SandboxLimits,
    SandboxMode,
)

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
_CAPTURE_FACTOR = 8  # bytes read per output character kept, head and tail together


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
    sandbox: SandboxMode = DEFAULT_SANDBOX_MODE,
    network: bool = DEFAULT_NETWORK,
    protected: Iterable[str | os.PathLike[str]] = (),
    hidden: Iterable[str | os.PathLike[str]] = (),
    limits: SandboxLimits = DEFAULT_LIMITS,
) -> Tool:
    """The `bash` tool running in `cwd`. `allow` and `deny` are Claude Code Bash patterns
    (`git status`, `ls *`, `Bash(npm run test:*)`); `deny` defaults to `DEFAULT_DENY`, `allow`
    to nothing (every command asks). `env` adds variables to the minimal `PASSED_ENV` set.
    Commands run under bubblewrap with `cwd` the only writable directory (besides a private
    /tmp) and no network unless `network`; `sandbox="off"` runs them unsandboxed, each only after
    a person approved it. Inside `cwd`, what the host executes or loads stays read-only (`.git`,
    `.claude`, `.agents`, MCP and toolweave configs, and the `protected` paths: hooks files,
    their scripts, skill roots); the `hidden` paths (the host's data folder) are not visible.
    Each call is bounded by `limits` (memory, processes, the private /tmp, file size)."""
    check_positive("timeout", timeout)
    check_positive("max_output_chars", max_output_chars)
    directory = os.path.realpath(os.fspath(cwd))
    if not os.path.isdir(directory):
        raise ConfigError(f"cwd {os.fspath(cwd)!r} is not an existing directory")
    rules = {
        "deny": shell_rules(DEFAULT_DENY if deny is None else deny, "deny"),
        "allow": shell_rules(allow or (), "allow"),
    }
    box = Sandbox(
        writable=(directory,),
        protected=tuple(os.path.abspath(p) for p in protected),
        hidden=tuple(os.path.abspath(p) for p in hidden),
        limits=limits,
        network=network,
        mode=sandbox,
    )
    environment = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
    environment.update(env or {})

    async def bash(command: str, ctx: ToolContext) -> ToolResult:
        """Run a bash command in the workspace and return its exit code and output.

        Args:
            command: The command line; commands without an allow rule need approval.
        """
        if not command.strip():
            raise InvalidArguments("command is empty", tool="bash")
        if box.enabled:
            await box.check("bash")  # refuse before asking when no sandbox can be made
        elif not ctx.tool_call_approved:
            raise ApprovalRequired(
                'the sandbox is off (sandbox = "off"), so every command asks', tool="bash"
            )
        if not (ctx.tool_call_cleared or ctx.tool_call_approved):
            raise ApprovalRequired(
                "the built-in shell runs only calls its governance rules cleared "
                "(Rules, a Claude Code settings file, or an approval)",
                tool="bash",
            )
        outcome = await box.run(
            [_BASH, "-c", command],
            cwd=directory,
            env=environment,
            timeout=timeout,
            max_bytes=max_output_chars * _CAPTURE_FACTOR,
            tool="bash",
            ctx=ctx,
        )
        if ctx.cancelled:
            raise ToolCancelled("the command was cancelled and its processes killed", tool="bash")
        if outcome.timed_out:
            status = f"killed after {timeout:g} s (timeout)"
        else:
            status = f"exit code {outcome.code}"
        size = outcome.size
        text = f"{status}; {size} bytes of output\n{outcome.output}" if size else status
        result = untrusted(text, "bash", max_output_chars + 100)
        result.is_error = outcome.timed_out or outcome.code != 0
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
