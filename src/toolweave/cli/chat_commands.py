"""The chat's own commands (`/clear`, `/plan on|off`, `/clock`, `/stop`, `/cmd`, `/exit`,
`/help`) beside the `--commands` slash commands.

`/plan on` puts the session in plan mode (only read-only tools, and `todo_write`, run; writes
are refused with a reason the model sees), `/plan off` returns to the mode the session had
before, and `/plan` alone shows the current mode. The mode is the session's own
(`Session.permission_mode`), so it holds for every later run of this chat.

`/clock` lists the session's scheduled tasks (the ones its `clock_*` tools made), `/clock pause
ID`, `/clock resume ID` and `/clock remove ID` change one of them (only this session's);
`/stop` stops the session's scheduled runs still going (a turn in progress is stopped by a
`/stop` typed while it runs: `toolweave.cli.chat_input`).
`/cmd add NAME TEMPLATE` and `/cmd del NAME` write or delete `NAME.md` in the `--commands`
folder, for an admin only and only where that folder is writable; the command works at once
(the folder is re-read when it changes).
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
from collections.abc import Callable
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from toolweave.agent import Agent, Session
    from toolweave.governance.approvals import ApprovalAudit, Approver
    from toolweave.governance.context import PermissionMode
    from toolweave.scheduler import Scheduler

PLAN_COMMAND = "/plan"
PLAN_USAGE = "usage: /plan on, /plan off, or /plan to show the mode"
CLOCK_COMMAND, STOP_COMMAND, CMD_COMMAND = "/clock", "/stop", "/cmd"
CLOCK_USAGE = "usage: /clock, /clock pause ID, /clock resume ID, /clock remove ID"
CMD_USAGE = "usage: /cmd add NAME TEMPLATE ($ARGUMENTS: what follows /NAME), /cmd del NAME"


def _custom_command(agent: Agent, line: str) -> bool:
    commands = agent.orchestration.commands
    return commands is not None and commands.handles(line)


_COMMAND_LINE = re.compile(r"^/([^\s/]+)(?:\s|$)")
CHAT_COMMANDS = {
    "/clear": "forget this session's history",
    PLAN_COMMAND: "plan mode on|off: only read-only tools run (/plan alone shows the mode)",
    CLOCK_COMMAND: "this session's scheduled tasks: list, pause|resume|remove ID",
    STOP_COMMAND: "typed during a turn: stop it; at the prompt: this session's scheduled runs",
    CMD_COMMAND: "admin: add NAME TEMPLATE | del NAME, a slash command in --commands",
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


class SessionClock:
    """`/clock` and `/stop` for one chat session over `scheduler` (None: the chat has no
    schedule, and both say how to get one)."""

    def __init__(self, scheduler: Scheduler | None, session_id: str) -> None:
        self.scheduler = scheduler
        self.session_id = session_id

    async def handle(self, line: str) -> str | None:
        """What to print for `line`, or None when it is neither `/clock` nor `/stop`."""
        name, _, argument = line.partition(" ")
        if name not in (CLOCK_COMMAND, STOP_COMMAND):
            return None
        scheduler = self.scheduler
        if scheduler is None:
            return f"{name}: this chat has no schedule; start it with --clock FILE"
        if name == STOP_COMMAND:
            stopped = await scheduler.cancel_runs(self.session_id)
            return f"stopped {stopped} scheduled run(s) of this session"
        action, _, task_id = argument.strip().partition(" ")
        if action in ("", "list"):
            tasks = await scheduler.alist(self.session_id)
            return "\n".join(_task_line(t) for t in tasks) or "no scheduled tasks in this session"
        if action not in ("pause", "resume", "remove") or not task_id.strip():
            return f"unknown /clock {argument.strip()!r}; {CLOCK_USAGE}"
        task = await scheduler.aget(task_id.strip())
        if task is None or task.target != self.session_id:
            return f"no scheduled task {task_id.strip()!r} in this session; /clock lists them"
        if action == "remove":
            await scheduler.adelete(task.id)
            return f"removed {task.id}"
        await scheduler.aupdate(task.id, enabled=action == "resume")
        return f"{'resumed' if action == 'resume' else 'paused'} {task.id}"


def _task_line(task: object) -> str:
    from toolweave.scheduler.store import ScheduledTask

    assert isinstance(task, ScheduledTask)
    when = datetime.fromtimestamp(task.next_fire, UTC).strftime("%Y-%m-%d %H:%M UTC")
    state = f"next {when}" if task.enabled else "paused"
    return f"{task.id}  {task.spec}  {state}  {task.prompt[:60]}"


class CommandEditor:
    """`/cmd add|del` for slash commands in `directory` (the chat's `--commands` folder):
    refused unless `admin`, and unless `directory` is a writable folder."""

    def __init__(self, directory: Path | None, *, admin: bool) -> None:
        self.directory = directory
        self.admin = admin

    def handle(self, line: str) -> str | None:
        """What to print for `line`, or None when it is not `/cmd`."""
        name, _, argument = line.partition(" ")
        if name != CMD_COMMAND:
            return None
        if not self.admin:
            return "/cmd is for an admin only: slash commands change what every session runs"
        folder = self.directory
        if folder is None or not folder.is_dir() or not os.access(folder, os.W_OK):
            where = "no --commands folder" if folder is None else f"{folder} is not writable"
            return f"/cmd needs a writable command folder ({where}); chat with --commands DIR"
        action, _, rest = argument.strip().partition(" ")
        command, _, template = rest.strip().partition(" ")
        if action not in ("add", "del") or not command or (action == "add" and not template):
            return CMD_USAGE
        from toolweave.agent.orchestration.slash_commands import check_command_name
        from toolweave.errors import ConfigError
        from toolweave.storage.files import atomic_write

        try:
            check_command_name(command, "/cmd")
        except ConfigError as exc:
            return f"{exc}; {CMD_USAGE}"
        file = folder / f"{command}.md"
        if action == "add":
            atomic_write(file, template.strip() + "\n")
            return f"added /{command} ({file})"
        if not file.is_file():
            return f"no command file {file}; /help lists the commands"
        file.unlink()
        return f"deleted /{command} ({file})"


class ChatExtras:
    """The chat's commands that answer with a line (`/plan`, `/cmd`, `/clock`, `/stop`) for one
    session; `clock` is its started schedule, `command_folder` where an admin's `/cmd` writes."""

    def __init__(
        self,
        session: Session,
        clock: Scheduler | None = None,
        command_folder: Path | None = None,
        *,
        admin: bool = True,
    ) -> None:
        self.plan = PlanSwitch(session)
        self.clock = SessionClock(clock, session.id)
        self.editor = CommandEditor(command_folder, admin=admin)

    async def handle(self, line: str) -> str | None:
        """What to print for `line`, or None when none of these commands is it."""
        return self.plan.handle(line) or self.editor.handle(line) or await self.clock.handle(line)


def start_clock(
    runner: asyncio.Runner, cleanup: ExitStack, agent: Agent, path: Path, console: Console
) -> Scheduler:
    """`toolweave chat --clock FILE`: the schedule started on the chat's loop (closed with
    `cleanup`), each firing's answer printed."""
    from rich.markup import escape

    def show(target: str, text: str) -> None:
        console.print(f"[cyan]⏰ {escape(target)}:[/] {escape(text)}")

    schedule = open_clock(agent, path, show)
    runner.run(schedule.start())
    cleanup.callback(lambda: runner.run(schedule.close()))
    return schedule


def open_clock(agent: Agent, path: Path, deliver: Callable[[str, str], None]) -> Scheduler:
    """A schedule in `path` for the chat's agent: its `clock_*` tools join the agent's, and
    each firing's answer goes to `deliver(target, text)`."""
    from toolweave.scheduler import Scheduler

    scheduler = Scheduler(agent, path, deliver=deliver, name="chat")
    for tool in scheduler.tools():
        agent.registry.register(tool)
    return scheduler


async def read_in_thread(read_line: Callable[[], str]) -> str:
    """`read_line()` on a daemon thread while the loop goes on (scheduled runs fire meanwhile);
    end of input and Ctrl-C at the prompt arrive as `EOFError`."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str] = loop.create_future()

    def settle(value: str | None) -> None:
        if not future.done():
            future.set_result(value) if value is not None else future.set_exception(EOFError())

    def read() -> None:
        try:
            value: str | None = read_line()
        except (EOFError, KeyboardInterrupt):
            value = None
        loop.call_soon_threadsafe(settle, value)

    threading.Thread(target=read, name="toolweave-chat-input", daemon=True).start()
    return await future


def audited_terminal(approver: Approver | None, audit: ApprovalAudit | None) -> Approver | None:
    """The terminal's approver, its decisions kept in `audit` (when there is one) as decided by
    `chat:<login name>`."""
    if approver is None or audit is None:
        return approver
    import getpass

    from toolweave.governance.approvals import audited

    try:
        who = getpass.getuser()
    except (KeyError, OSError):  # no login name (a container without a passwd entry)
        who = "terminal"
    return audited(approver, audit, f"chat:{who}")
