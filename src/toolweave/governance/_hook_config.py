"""Reading a Claude Code hooks configuration the way Claude Code reads it, and never rejecting a
whole file for what toolweave does not run.

- Events toolweave fires are parsed (`HOOK_EVENTS`); any other event (`Setup`,
  `UserPromptExpansion`, `StopFailure`, ...) is skipped with one warning naming it.
- Hook types `command` and `http` run; `prompt` and `agent` hooks (a model judges) are skipped
  with a warning, as is any other type.
- Per hook: `if` (a permission rule such as `Bash(git commit:*)`: the hook runs only for calls
  it matches), `async` (run in the background; its answer is ignored), `shell` (the program
  that runs `command`), `timeout`, `failClosed`, `url`, `headers`. Other keys
  (`statusMessage`, `once`, ...) are ignored with one warning each.
- Matchers are case-sensitive, as in Claude Code: `Bash`, `Edit|Write`, `mcp__github__.*`;
  empty, missing or `*` match everything.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolweave.governance._hook_runners import HookSpec
from toolweave.governance.errors import HookConfigError

logger = logging.getLogger("toolweave.hooks")

HOOK_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PermissionDenied",
    "PostToolUse",
    "PostToolUseFailure",
    "Notification",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "SessionEnd",
)
"""The events toolweave fires (the rest of Claude Code's are skipped with a warning)."""
DEFAULT_HOOK_TIMEOUT = 10.0
MAX_HOOK_TIMEOUT = 60.0
SKIPPED_TYPES = frozenset({"prompt", "agent"})
"""Hook types Claude Code runs through a model; toolweave skips them with a warning."""
_HOOK_KEYS = frozenset(
    {"type", "command", "timeout", "failClosed", "url", "headers", "if", "async", "shell"}
)
_GROUP_KEYS = frozenset({"matcher", "hooks"})
_warned: set[tuple[str, str]] = set()


def warn_once(source: str, what: str, message: str) -> None:
    """Log `message` once per (source, what) for the life of the process."""
    if (source, what) in _warned:
        return
    _warned.add((source, what))
    logger.warning("%s: %s", source, message)


@dataclass(frozen=True)
class ConfiguredHook:
    """One hook to run: the `spec`, its `if` rule (None: always), and `background` (`async`)."""

    spec: HookSpec
    condition: str | None = None
    background: bool = False


@dataclass(frozen=True)
class Group:
    matcher: re.Pattern[str] | None
    hooks: tuple[Any, ...]
    """`ConfiguredHook`s, or in-process async functions."""


def compile_matcher(matcher: Any, where: str) -> re.Pattern[str] | None:
    if matcher is None or matcher in ("", "*"):
        return None
    if not isinstance(matcher, str):
        raise HookConfigError(f"{where}: `matcher` must be a string (a regex of tool names)")
    try:
        return re.compile(matcher)
    except re.error as exc:
        raise HookConfigError(
            f"{where}: `matcher` {matcher!r} is not a valid regex: {exc}"
        ) from exc


def parse_hooks(
    config: Mapping[str, Any], source: str, *, plugin_root: str | None = None
) -> dict[str, list[Group]]:
    """The groups of every event toolweave runs; raises `HookConfigError` on a malformed file
    (its message starts with `source`, so the file is named once)."""
    events = config.get("hooks", config) if "hooks" in config else config
    if not isinstance(events, Mapping):
        raise HookConfigError(f"{source}: `hooks` must be an object of event -> matcher groups")
    parsed: dict[str, list[Group]] = {}
    for event, groups in events.items():
        if event not in HOOK_EVENTS:
            runs = ", ".join(HOOK_EVENTS)
            warn_once(source, f"event:{event}", f"hook event {event!r} is not run by toolweave; "
                      f"its hooks are skipped (toolweave runs {runs})")  # fmt: skip
            continue
        if not isinstance(groups, list):
            raise HookConfigError(f"{source}: `hooks.{event}` must be a list of matcher groups")
        for index, group in enumerate(groups):
            where = f"{source}: hooks.{event}[{index}]"
            if not isinstance(group, Mapping) or not isinstance(group.get("hooks"), list):
                raise HookConfigError(f'{where} must be {{"matcher": ..., "hooks": [...]}}')
            for key in set(group) - _GROUP_KEYS:
                warn_once(source, f"group:{key}", f"{where}: key {key!r} is ignored")
            hooks = [_hook(h, f"{where}.hooks[{i}]", source, plugin_root)
                     for i, h in enumerate(group["hooks"])]  # fmt: skip
            matcher = compile_matcher(group.get("matcher"), where)
            kept = tuple(h for h in hooks if h is not None)
            if kept:
                parsed.setdefault(event, []).append(Group(matcher, kept))
    return parsed


def _hook(hook: Any, where: str, source: str, plugin_root: str | None) -> ConfiguredHook | None:
    if not isinstance(hook, Mapping):
        raise HookConfigError(f"{where} must be an object with `type`")
    kind = hook.get("type", "command")
    if kind in SKIPPED_TYPES or kind not in ("command", "http"):
        warn_once(source, f"type:{kind}", f"{where}: hook type {kind!r} is not run by "
                  "toolweave (it runs 'command' and 'http' hooks); skipped")  # fmt: skip
        return None
    for key in set(hook) - _HOOK_KEYS:
        warn_once(source, f"key:{key}", f"{where}: key {key!r} is ignored by toolweave")
    timeout = hook.get("timeout", DEFAULT_HOOK_TIMEOUT)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
        raise HookConfigError(f"{where}.timeout must be a positive number of seconds")
    if timeout > MAX_HOOK_TIMEOUT:
        logger.warning("%s.timeout %ss is capped at %ss", where, timeout, MAX_HOOK_TIMEOUT)
        timeout = MAX_HOOK_TIMEOUT
    fail_closed = hook.get("failClosed", False)
    if not isinstance(fail_closed, bool):
        raise HookConfigError(f"{where}.failClosed must be true or false")
    condition = hook.get("if")
    if condition is not None and (not isinstance(condition, str) or not condition.strip()):
        raise HookConfigError(f"{where}.if must be a permission rule such as 'Bash(git *)'")
    background = hook.get("async", False)
    if not isinstance(background, bool):
        raise HookConfigError(f"{where}.async must be true or false")
    if kind == "command":
        spec = _command_spec(hook, where, float(timeout), fail_closed, plugin_root)
    else:
        spec = _http_spec(hook, where, float(timeout), fail_closed)
    return ConfiguredHook(spec, condition, background)


def _command_spec(
    hook: Mapping[str, Any], where: str, timeout: float, fail_closed: bool,
    plugin_root: str | None,
) -> HookSpec:  # fmt: skip
    command = hook.get("command")
    if not isinstance(command, str) or not command.strip():
        raise HookConfigError(f"{where}: a command hook needs `command` (a shell command)")
    shell = hook.get("shell")
    if shell is not None:
        if not isinstance(shell, str) or not shell.strip():
            raise HookConfigError(f"{where}.shell must name a program, e.g. 'bash'")
        name = os.path.basename(shell)
        flag = "-Command" if name.lower() in ("pwsh", "powershell", "pwsh.exe") else "-c"
        command = f"{shlex.quote(shell)} {flag} {shlex.quote(command)}"
    if plugin_root is not None:  # the plugin's own scripts are named ${CLAUDE_PLUGIN_ROOT}/...
        command = f"CLAUDE_PLUGIN_ROOT={shlex.quote(plugin_root)}; export CLAUDE_PLUGIN_ROOT; " + (
            command
        )
    return HookSpec("command", command=command, timeout=timeout, fail_closed=fail_closed)


def _http_spec(hook: Mapping[str, Any], where: str, timeout: float, fail_closed: bool) -> HookSpec:
    url = hook.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise HookConfigError(f"{where}: an http hook needs `url` (http:// or https://)")
    headers = hook.get("headers", {})
    if not isinstance(headers, Mapping):
        raise HookConfigError(f"{where}.headers must be an object of header -> value")
    pairs = tuple((str(k), os.path.expandvars(str(v))) for k, v in headers.items())
    return HookSpec("http", url=url, headers=pairs, timeout=timeout, fail_closed=fail_closed)
