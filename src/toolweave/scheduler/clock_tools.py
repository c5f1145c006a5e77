"""The `clock_*` tools: the model manages scheduled tasks for the session it is talking to.

Tasks made through these tools target the calling session (its id), and a session sees, changes
and deletes only its own tasks, so one chat cannot read or cancel another's reminders. A session
may hold at most `MAX_TASKS_PER_TARGET` tasks (a model in a loop cannot flood the scheduler).
Listings are sorted so the text the model reads is stable.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from toolweave.scheduler.store import ScheduledTask, TaskRun
from toolweave.tools import FunctionTool, Tool, ToolContext
from toolweave.tools.errors import ExecutionFailed

if TYPE_CHECKING:
    from toolweave.scheduler.scheduler import Scheduler

MAX_TASKS_PER_TARGET = 20
MAX_LOG_ENTRIES = 50


def _scope(ctx: ToolContext) -> str:
    return ctx.session_id or "default"


def _when(stamp: float | None) -> str | None:
    return None if stamp is None else datetime.fromtimestamp(stamp, UTC).isoformat()


def _task_dict(task: ScheduledTask) -> dict[str, Any]:
    return {
        "id": task.id,
        "spec": task.spec,
        "prompt": task.prompt,
        "run_once": task.run_once,
        "timeout_sec": task.timeout,
        "enabled": task.enabled,
        "next_fire": _when(task.next_fire) if task.enabled else None,
    }


def _run_dict(run: TaskRun) -> dict[str, Any]:
    return {
        "fire_time": _when(run.fire_time),
        "status": run.status,
        "finished": _when(run.finished),
        "tokens": run.tokens,
        "output": run.output,
        "error": run.error,
        "tool_calls": [
            {"name": c.name, "ok": c.ok, "seconds": round(c.duration, 3)}
            | ({"error": c.error} if c.error else {})
            for c in run.tool_calls
        ],
    }


def clock_tools(scheduler: Scheduler) -> list[Tool]:
    async def own(ctx: ToolContext, task_id: str) -> ScheduledTask:
        task = await scheduler.aget(task_id)
        if task is None or task.target != _scope(ctx):
            raise ExecutionFailed(f"no scheduled task {task_id!r} here; see clock_list")
        return task

    async def clock_create(
        ctx: ToolContext,
        spec: str,
        prompt: str,
        run_once: bool = False,
        timeout_sec: float = 120.0,
    ) -> dict[str, Any]:
        """Schedule a prompt to run later; its answer is sent to this conversation.

        Args:
            spec: 5-field cron ('30 9 * * 1-5' = 09:30 on weekdays, UTC) or '@every 10m'.
            prompt: What the scheduled run should do, written as a complete instruction.
            run_once: Delete the task after it fires once.
            timeout_sec: Seconds the run may take.
        """
        mine = await scheduler.alist(_scope(ctx))
        if len(mine) >= MAX_TASKS_PER_TARGET:
            raise ExecutionFailed(
                f"this conversation already has {len(mine)} scheduled tasks (the limit is "
                f"{MAX_TASKS_PER_TARGET}); delete one with clock_delete first"
            )
        try:
            task = await scheduler.acreate(spec, prompt, _scope(ctx), run_once, timeout_sec)
        except ValueError as exc:
            raise ExecutionFailed(str(exc)) from None
        return _task_dict(task)

    async def clock_list(ctx: ToolContext) -> list[dict[str, Any]]:
        """List this conversation's scheduled tasks, soonest first."""
        tasks = await scheduler.alist(_scope(ctx))
        return [_task_dict(t) for t in tasks]

    async def clock_update(
        ctx: ToolContext,
        task_id: str,
        spec: str | None = None,
        prompt: str | None = None,
        run_once: bool | None = None,
        timeout_sec: float | None = None,
        enabled: bool | None = None,
    ) -> dict[str, Any]:
        """Change a scheduled task; fields left out keep their value.

        Args:
            task_id: The id from clock_list.
            spec: A new schedule.
            prompt: A new prompt.
            run_once: Whether to delete it after the next firing.
            timeout_sec: A new timeout in seconds.
            enabled: False pauses the task, True resumes it.
        """
        await own(ctx, task_id)
        given = {"spec": spec, "prompt": prompt, "run_once": run_once, "enabled": enabled}
        changes: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
        if timeout_sec is not None:
            changes["timeout"] = timeout_sec
        try:
            task = await scheduler.aupdate(task_id, **changes)
        except ValueError as exc:  # a bad field, or the task was deleted meanwhile
            raise ExecutionFailed(str(exc)) from None
        return _task_dict(task)

    async def clock_delete(ctx: ToolContext, task_id: str) -> str:
        """Delete a scheduled task.

        Args:
            task_id: The id from clock_list.
        """
        await own(ctx, task_id)
        await scheduler.adelete(task_id)
        return f"deleted scheduled task {task_id}"

    async def clock_log(ctx: ToolContext, task_id: str, limit: int = 10) -> list[dict[str, Any]]:
        """Show a scheduled task's recent runs, newest first.

        Args:
            task_id: The id from clock_list.
            limit: How many runs to show.
        """
        await own(ctx, task_id)
        count = max(1, min(limit, MAX_LOG_ENTRIES))
        runs = await scheduler.alog(task_id, count)
        return [_run_dict(r) for r in runs]

    return [
        FunctionTool(clock_create, category="clock"),
        FunctionTool(clock_list, read_only=True, category="clock"),
        FunctionTool(clock_update, category="clock"),
        FunctionTool(clock_delete, destructive=True, category="clock"),
        FunctionTool(clock_log, read_only=True, category="clock"),
    ]
