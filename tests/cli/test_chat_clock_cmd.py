"""`/clock`, `/stop` and `/cmd add|del` in `toolweave chat` (the real chat loop, a real schedule
store and a real command folder): only the session's own tasks, a scheduled run stopped while
the person types, and a command added at run time usable at once."""

from __future__ import annotations

import asyncio
import io
import threading
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from toolweave.agent import Agent, Session
from toolweave.agent.orchestration import Commands, Orchestration
from toolweave.cli.agent_cmd import chat_loop
from toolweave.cli.chat_commands import CLOCK_USAGE, CMD_USAGE, CommandEditor, open_clock
from toolweave.llm import FunctionModel, Message, ModelRequest
from toolweave.scheduler import Scheduler


def _reader(lines: list[Callable[[], str] | str]) -> Callable[[], str]:
    pending = iter(lines)

    def read_line() -> str:
        try:
            item = next(pending)
        except StopIteration:
            raise EOFError from None
        return item if isinstance(item, str) else item()

    return read_line


def _echo(request: ModelRequest) -> Message:
    return Message.assistant(f"echo: {request.messages[-1].text}")


def test_clock_manages_only_this_sessions_tasks(tmp_path: Path) -> None:
    agent = Agent(FunctionModel(_echo))
    scheduler = Scheduler(agent, tmp_path / "clock.db")
    mine = scheduler.create("@every 1h", "汇报今天的天气", "chat-a")
    theirs = scheduler.create("@every 1h", "someone else's", "chat-b")
    lines = [
        "/clock",
        f"/clock pause {mine}",
        "/clock list",
        f"/clock remove {theirs}",
        f"/clock resume {mine}",
        "/clock snooze",
        f"/clock remove {mine}",
        "/clock",
    ]
    out = io.StringIO()
    with asyncio.Runner() as runner:
        chat_loop(
            agent, Session("chat-a"), Console(file=out, width=200), _reader(lines),
            runner=runner, clock=scheduler,
        )  # fmt: skip
        runner.run(scheduler.close())
    text = out.getvalue()
    assert f"{mine}  @every 1h  next " in text and "汇报今天的天气" in text
    assert theirs not in text.replace(f"no scheduled task '{theirs}'", "")  # never listed
    assert f"paused {mine}" in text and f"{mine}  @every 1h  paused" in text
    assert f"no scheduled task '{theirs}' in this session; /clock lists them" in text
    assert f"resumed {mine}" in text and f"removed {mine}" in text
    assert f"unknown /clock 'snooze'; {CLOCK_USAGE}" in text
    assert text.rstrip().endswith("no scheduled tasks in this session")
    check = Scheduler(agent, tmp_path / "clock.db")
    assert [t.id for t in check.list()] == [theirs]  # the other session's task is untouched
    check.tasks.store.close_sync()


def test_stop_stops_the_sessions_scheduled_run_while_the_person_types(tmp_path: Path) -> None:
    started = threading.Event()

    async def slow(request: ModelRequest) -> Message:
        started.set()
        await asyncio.Event().wait()  # a run that would never end by itself
        raise AssertionError("unreachable")

    agent = Agent(FunctionModel(slow))
    out = io.StringIO()
    console = Console(file=out, width=200)
    with asyncio.Runner() as runner:
        scheduler = open_clock(agent, tmp_path / "clock.db", lambda to, text: None)
        assert {"clock_create", "clock_list"} <= set(agent.registry.names())
        task = scheduler.create("@every 1s", "long job", "chat-a")
        runner.run(scheduler.start())
        # The next line is read on a thread while the loop fires the task; it comes once the
        # scheduled run is under way.
        lines: list[Callable[[], str] | str] = [lambda: "/stop" if started.wait(30) else ""]
        chat_loop(agent, Session("chat-a"), console, _reader(lines), runner=runner, clock=scheduler)
        runner.run(scheduler.close())
    assert "stopped 1 scheduled run(s) of this session" in out.getvalue()
    check = Scheduler(agent, tmp_path / "clock.db")
    assert [r.status for r in check.log(task)][:1] == ["interrupted"]
    assert [t.id for t in check.list()] == [task]  # stopped, not removed
    check.tasks.store.close_sync()


def test_without_a_schedule_clock_and_stop_say_how_to_get_one() -> None:
    out = io.StringIO()
    agent = Agent(FunctionModel(_echo))
    chat_loop(agent, Session(), Console(file=out, width=200), _reader(["/clock", "/stop"]))
    text = out.getvalue()
    assert "/clock: this chat has no schedule; start it with --clock FILE" in text
    assert "/stop: this chat has no schedule" in text and "unknown command" not in text


def test_cmd_add_is_usable_at_once_and_del_removes_it(tmp_path: Path) -> None:
    folder = tmp_path / "commands"
    folder.mkdir()
    (folder / "review.md").write_text("Review $ARGUMENTS carefully.\n", encoding="utf-8")
    agent = Agent(FunctionModel(_echo), orchestration=Orchestration(commands=Commands.load(folder)))
    session = Session()
    lines = [
        "/cmd add 问候 用中文向 $ARGUMENTS 问好",
        "/问候 小明",
        "/cmd add help Shadow the help",
        "/cmd del 问候",
        "/问候 again",
        "/cmd add",
    ]
    out = io.StringIO()
    chat_loop(agent, session, Console(file=out, width=200), _reader(lines), command_folder=folder)
    text = out.getvalue()
    assert f"added /问候 ({folder / '问候.md'})" in text
    assert session.messages[0].text == "用中文向 小明 问好"  # expanded by the new command
    assert "echo: 用中文向 小明 问好" in text
    assert "would shadow the built-in /help" in text
    assert f"deleted /问候 ({folder / '问候.md'})" in text and not (folder / "问候.md").exists()
    assert "unknown command /问候" in text and text.rstrip().endswith(CMD_USAGE)
    assert (folder / "review.md").exists()


def test_cmd_is_refused_for_a_non_admin_and_without_a_writable_folder(tmp_path: Path) -> None:
    folder = tmp_path / "commands"
    folder.mkdir()
    visitor = CommandEditor(folder, admin=False)
    assert "for an admin only" in (visitor.handle("/cmd add x hi") or "")
    assert list(folder.iterdir()) == []
    no_folder = CommandEditor(None, admin=True).handle("/cmd add x hi") or ""
    assert "no --commands folder" in no_folder and "--commands DIR" in no_folder
    a_file = tmp_path / "commands.json"
    a_file.write_text("{}", encoding="utf-8")
    assert "is not writable" in (CommandEditor(a_file, admin=True).handle("/cmd del x") or "")
    assert CommandEditor(folder, admin=True).handle("/cmdx") is None
