"""Scheduler: @every and cron firings, restarts, run-once, misfires, two schedulers, clock tools."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.support import store_args
from toolweave.agent import Agent
from toolweave.llm import FunctionModel, Message, ModelRequest
from toolweave.scheduler import Scheduler
from toolweave.tools import ExecutionFailed, ToolContext

__all__ = ["store_args"]

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC).timestamp()


class Clock:
    def __init__(self, now: float = START) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def echo_agent() -> Agent:
    def answer(request: ModelRequest) -> Message:
        return Message.assistant(f"done: {request.messages[-1].text}")

    return Agent(FunctionModel(answer))


class Inbox:
    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []
        self.arrived = asyncio.Event()

    def __call__(self, target: str, text: str) -> None:
        self.items.append((target, text))
        self.arrived.set()


async def test_every_task_fires_delivers_and_logs(store_args: dict[str, Any]) -> None:
    clock, inbox = Clock(), Inbox()
    scheduler = Scheduler(echo_agent(), deliver=inbox, clock=clock, **store_args)
    try:
        task_id = scheduler.create("@every 1s", "提醒我喝水", "chat-1")
        assert await scheduler.tick() == []  # not due yet
        clock.now += 1
        (run,) = await scheduler.tick()
        assert (run.status, run.output) == ("success", "done: 提醒我喝水")
        assert inbox.items == [("chat-1", "done: 提醒我喝水")]
        assert await scheduler.tick() == []  # the same firing never runs twice
        clock.now += 1
        assert len(await scheduler.tick()) == 1
        runs = scheduler.log(task_id)
        assert [r.status for r in runs] == ["success", "success"]
        assert runs[0].fire_time == START + 2 and runs[1].fire_time == START + 1
        (task,) = scheduler.list()
        assert task.id == task_id and task.next_fire == START + 3
    finally:
        await scheduler.close()


async def test_run_once_tasks_are_deleted_after_firing(store_args: dict[str, Any]) -> None:
    clock = Clock()
    scheduler = Scheduler(echo_agent(), clock=clock, **store_args)
    try:
        once = scheduler.create("@every 5s", "once", "t", run_once=True)
        kept = scheduler.create("@every 5s", "kept", "t")
        clock.now += 5
        assert len(await scheduler.tick()) == 2
        assert [t.id for t in scheduler.list()] == [kept]
        assert [r.status for r in scheduler.log(once)] == ["success"]
    finally:
        await scheduler.close()


async def test_misfire_after_downtime_runs_once(store_args: dict[str, Any]) -> None:
    clock = Clock()
    scheduler = Scheduler(echo_agent(), clock=clock, **store_args)
    try:
        task_id = scheduler.create("@every 10s", "p", "t")
        clock.now += 95  # nine slots passed while nothing ran
        assert len(await scheduler.tick()) == 1
        assert await scheduler.tick() == []
        (task,) = scheduler.list()
        assert task.next_fire == START + 100  # back on its regular slots
        assert len(scheduler.log(task_id)) == 1
    finally:
        await scheduler.close()


async def test_cron_spec_and_validation(tmp_path: Path) -> None:
    clock = Clock(datetime(2026, 3, 2, 9, 29, tzinfo=UTC).timestamp())  # a Monday
    scheduler = Scheduler(echo_agent(), tmp_path / "s.db", clock=clock)
    try:
        scheduler.create("30 9 * * 1-5", "standup", "t")
        (task,) = scheduler.list()
        assert task.next_fire == datetime(2026, 3, 2, 9, 30, tzinfo=UTC).timestamp()
        with pytest.raises(ValueError, match="5-field cron"):
            scheduler.create("every day", "p", "t")
        with pytest.raises(ValueError, match="not a valid cron expression"):
            scheduler.create("61 * * * *", "p", "t")
        with pytest.raises(ValueError, match="at least 1s"):
            scheduler.create("@every 10ms", "p", "t")
        with pytest.raises(ValueError, match="timeout"):
            scheduler.create("@hourly", "p", "t", timeout=0)
        updated = scheduler.update(task.id, spec="@daily", prompt="new")
        assert updated.prompt == "new"
        assert updated.next_fire == datetime(2026, 3, 3, tzinfo=UTC).timestamp()
        assert scheduler.delete(task.id) and not scheduler.list()
        with pytest.raises(ValueError, match="no scheduled task"):
            scheduler.update(task.id, prompt="x")
    finally:
        await scheduler.close()


async def test_tasks_survive_a_restart_and_interrupted_runs_are_marked(
    store_args: dict[str, Any],
) -> None:
    clock = Clock()
    started, release = asyncio.Event(), asyncio.Event()

    async def slow(request: ModelRequest) -> Message:
        started.set()
        await release.wait()
        return Message.assistant("late")

    first = Scheduler(Agent(FunctionModel(slow)), clock=clock, **store_args)
    task_id = first.create("@every 1s", "work", "t")
    clock.now += 1
    await first.start()
    await started.wait()
    await first.close()  # the process "dies" mid-run (cancelled, recorded as interrupted)
    # A crash leaves the row running; simulate that and let the next start mark it.
    second = Scheduler(echo_agent(), clock=clock, **store_args)
    try:
        assert [t.id for t in second.list()] == [task_id]  # the task survived
        assert [r.status for r in second.log(task_id)] == ["interrupted"]
        clock.now += 1
        (run,) = await second.tick()
        assert run.status == "success"
    finally:
        await second.close()


async def test_a_crashed_running_row_is_marked_interrupted_on_start(tmp_path: Path) -> None:
    clock = Clock()
    crashed = Scheduler(echo_agent(), tmp_path / "s.db", clock=clock, name="node-a")
    task_id = crashed.create("@every 1s", "work", "t")
    clock.now += 1
    claimed = await crashed._claim()  # claimed, then the process died before finishing
    assert len(claimed) == 1
    await crashed.tasks.store.close()
    restarted = Scheduler(echo_agent(), tmp_path / "s.db", clock=clock, name="node-a")
    try:
        assert [r.status for r in restarted.log(task_id)] == ["running"]
        await restarted.start()
        assert [r.status for r in restarted.log(task_id)] == ["interrupted"]
    finally:
        await restarted.close()


async def test_two_schedulers_on_one_store_fire_each_slot_exactly_once(
    store_args: dict[str, Any],
) -> None:
    clock = Clock()
    a = Scheduler(echo_agent(), clock=clock, name="a", **store_args)
    b = Scheduler(echo_agent(), clock=clock, name="b", **store_args)
    try:
        ids = [a.create("@every 1s", f"job {i}", "t") for i in range(8)]
        for _ in range(3):
            clock.now += 1
            await asyncio.gather(a.tick(), b.tick(), a.tick(), b.tick())
        for task_id in ids:
            runs = a.log(task_id)
            assert sorted(r.fire_time for r in runs) == [START + 1, START + 2, START + 3]
        owners = {r.owner for task_id in ids for r in a.log(task_id)}
        assert owners <= {"a", "b"}
    finally:
        await a.close()
        await b.close()


async def test_timeout_is_recorded_and_the_target_told(tmp_path: Path) -> None:
    clock, inbox = Clock(), Inbox()
    never = asyncio.Event()

    async def hang(request: ModelRequest) -> Message:
        await never.wait()
        raise AssertionError("unreachable")

    scheduler = Scheduler(Agent(FunctionModel(hang)), tmp_path / "s.db", deliver=inbox, clock=clock)
    try:
        task_id = scheduler.create("@every 1s", "slow", "chat", timeout=0.05)
        clock.now += 1
        (run,) = await scheduler.tick()
        assert run.status == "timeout"
        assert inbox.items == [("chat", f"Scheduled task {task_id} did not finish within 0.05s.")]
    finally:
        await scheduler.close()


async def test_background_loop_fires_every_second_tasks(tmp_path: Path) -> None:
    """The real loop with the real clock: wait on delivery events, never on sleeps."""
    inbox = Inbox()
    scheduler = Scheduler(echo_agent(), tmp_path / "s.db", deliver=inbox)
    await scheduler.start()
    try:
        scheduler.create("@every 1s", "tick", "chat")
        for _ in range(2):
            inbox.arrived.clear()
            await asyncio.wait_for(inbox.arrived.wait(), 10)
        assert inbox.items[:2] == [("chat", "done: tick")] * 2
    finally:
        await scheduler.close()


async def test_clock_tools_are_scoped_to_the_session(tmp_path: Path) -> None:
    clock = Clock()
    scheduler = Scheduler(echo_agent(), tmp_path / "s.db", clock=clock)
    tools = {t.name: t for t in scheduler.tools()}
    assert sorted(tools) == [
        "clock_create",
        "clock_delete",
        "clock_list",
        "clock_log",
        "clock_update",
    ]
    mine, other = ToolContext(session_id="chat-1"), ToolContext(session_id="chat-2")
    try:
        created = await tools["clock_create"].execute(
            {"spec": "@every 1m", "prompt": "喝水", "run_once": True}, mine
        )
        task_id = created.structured["id"]  # type: ignore[index]
        listed = await tools["clock_list"].execute({}, mine)
        assert [t["id"] for t in listed.structured] == [task_id]  # type: ignore[index]
        assert (await tools["clock_list"].execute({}, other)).structured == []  # type: ignore[index]
        with pytest.raises(ExecutionFailed, match="no scheduled task"):
            await tools["clock_delete"].execute({"task_id": task_id}, other)
        with pytest.raises(ExecutionFailed, match="5-field cron"):
            await tools["clock_create"].execute({"spec": "nope", "prompt": "p"}, mine)
        changed = await tools["clock_update"].execute(
            {"task_id": task_id, "prompt": "喝茶", "timeout_sec": 30}, mine
        )
        assert changed.structured["prompt"] == "喝茶"  # type: ignore[index]
        clock.now += 60
        await scheduler.tick()
        with pytest.raises(ExecutionFailed):  # a run-once task is gone after firing
            await tools["clock_log"].execute({"task_id": task_id}, mine)
        assert scheduler.log(task_id)[0].output == "done: 喝茶"
    finally:
        await scheduler.close()


async def test_a_firing_delivers_tool_media_and_logs_its_tool_calls(
    store_args: dict[str, Any],
) -> None:
    """Seed 004: tools' images and files reach the target; the run log keeps the call details
    (issue 37: `deliver` took text only and `TaskRun` had no tool calls)."""
    from toolweave.llm import ScriptedModel, ToolCallPart
    from toolweave.tools import tool
    from toolweave.tools.context import UserOutput

    @tool
    async def chart(ctx: ToolContext, city: str) -> str:
        """Draw the weather chart.

        Args:
            city: Which city.
        """
        await ctx.send_image(b"\x89PNG chart of " + city.encode(), "image/png")
        return "chart sent"

    @tool
    def broken() -> str:
        """Always fails."""
        raise ExecutionFailed("the sensor is offline")

    model = ScriptedModel(
        [
            Message.assistant(
                tool_calls=[
                    ToolCallPart("c1", "chart", {"city": "北京"}),
                    ToolCallPart("c2", "broken", {}),
                ]
            ),
            Message.assistant("今日天气图已发送"),
        ]
    )
    clock, inbox = Clock(), Inbox()
    media: list[tuple[str, UserOutput]] = []
    scheduler = Scheduler(
        Agent(model, [chart, broken]),
        deliver=inbox,
        deliver_output=lambda target, output: media.append((target, output)),
        clock=clock,
        **store_args,
    )
    try:
        task_id = scheduler.create("@every 1s", "发天气图", "group-7")
        clock.now += 1
        (run,) = await scheduler.tick()
        assert [(t, o.kind, o.data) for t, o in media] == [
            ("group-7", "image", b"\x89PNG chart of \xe5\x8c\x97\xe4\xba\xac")
        ]
        assert inbox.items == [("group-7", "今日天气图已发送")]
        assert [(c.name, c.ok) for c in run.tool_calls] == [("chart", True), ("broken", False)]
        (logged,) = scheduler.log(task_id)
        assert logged.tool_calls == run.tool_calls
        assert "the sensor is offline" in logged.tool_calls[1].error
        clock_log = {t.name: t for t in scheduler.tools()}["clock_log"]
        shown = await clock_log.execute({"task_id": task_id}, ToolContext(session_id="group-7"))
        calls = shown.structured[0]["tool_calls"]  # type: ignore[index]
        assert [(c["name"], c["ok"]) for c in calls] == [("chart", True), ("broken", False)]
        assert "sensor is offline" in calls[1]["error"]
    finally:
        await scheduler.close()
