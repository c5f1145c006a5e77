"""The chat's own commands (`/clear`, `/plan on|off`, `/exit`, `/help`) beside the `--commands`
slash commands, and `/plan`: the session's permission mode switched to plan and back.

`/plan on` puts the session in plan mode (only read-only tools, and `todo_write`, run; writes
are refused with a reason the model sees), `/plan off` returns to the mode the session had
before, and `/plan` alone shows the current mode. The mode is the session's own
(`Session.permission_mode`), so it holds for every later run of this chat.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolweave.agent import Agent, Session
    from toolweave.governance.context import PermissionMode

PLAN_COMMAND = "/plan"
PLAN_USAGE = "usage: /plan on, /plan off, or /plan to show the mode"


def _custom_command(agent: Agent, line: str) -> bool:
    commands = agent.orchestration.commands
    return commands is not None and commands.handles(line)


_COMMAND_LINE = re.compile(r"^/([^\s/]+)(?:\s|$)")
CHAT_COMMANDS = {
    "/clear": "forget this session's history",
    PLAN_COMMAND: "plan mode on|off: only read-only tools run (/plan alone shows the mode)",
    "/exit": "end the chat (or /quit)",
}


def unknown_command(agent: Agent, line: str) -> str | None:
    """The `/name` of a line that reads as a slash command nobody handles (a path such as
    `/etc/hosts` is not one); `run` and `chat` refuse it alike instead of sending it on."""
    match = _COMMAND_LINE.match(line)
    if match is None or _custom_command(agent, line):
        return None
    name = "/" + match.group(1)
    return None if name in CHAT_COMMANDS or name in ("/quit", "/help") else name


def command_help(agent: Agent) -> list[str]:
    """What `/help` lists: the chat's own commands, then the --commands slash commands."""
    lines = [f"{name:12} {what}" for name, what in CHAT_COMMANDS.items()]
    lines.append(f"{'/help':12} this list")
    commands = agent.orchestration.commands
    for command in commands.list() if commands is not None else []:
        hint = f" {command.argument_hint}" if command.argument_hint else ""
        lines.append(f"{'/' + command.name + hint:12} {command.help_description}".rstrip())
    return lines


class PlanSwitch:
    """`/plan` for one chat session; remembers the mode `/plan on` replaced, so `/plan off`
    restores it (`acceptEdits` stays `acceptEdits`)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._before: PermissionMode = "default"

    def handle(self, line: str) -> str | None:
        """What to print for `line`, or None when it is not a `/plan` command."""
        name, _, argument = line.partition(" ")
        if name != PLAN_COMMAND:
            return None
        choice = argument.strip().lower()
        mode = self.session.permission_mode
        if not choice:
            return f"permission mode: {mode}"
        if choice == "on":
            if mode != "plan":
                self._before = mode
                self.session.permission_mode = "plan"
            return "plan mode on: only read-only tools run until /plan off"
        if choice == "off":
            if mode == "plan":
                self.session.permission_mode = self._before
            return f"plan mode off: permission mode {self.session.permission_mode}"
        return f"unknown /plan argument {argument.strip()!r}; {PLAN_USAGE}"
