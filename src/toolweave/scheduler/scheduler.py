"""`Scheduler`: tasks created by users or the model that run the agent on a cron or `@every` spec.

Each firing runs a fresh, disposable agent run (no history) with the agent's full tools and the
task's timeout, records a `TaskRun` (with the tool calls the firing made), and hands only the
final answer to `deliver(target, text)` (intermediate text is never delivered); what tools sent
to the user (`ctx.send_image`, `send_file`, `send_text`) goes to `deliver_output(target, output)`
first, in the order it was sent. Tasks persist, so they survive restarts; a run that a
restart cut short is marked `interrupted` when the scheduler starts again. Run-once tasks are
deleted after their firing.

Misfire policy: a task whose slot passed while no scheduler was running fires once when one
starts, then continues on its next regular slot (never once per missed slot).

Several schedulers may share one Postgres store (give each process its own `name`): each
firing runs exactly once (see `schedule_store`).
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolweave.errors import ConfigError
from toolweave.scheduler.store import (
    PausedRun,
    RunStatus,
    ScheduledTask,
    ScheduleStore,
    TaskRun,
    TaskToolCall,
)
from toolweave.storage.sql import ProgramFactory, T

if TYPE_CHECKING:
    from toolweave.agent.agent import Agent
    from toolweave.agent.run_state import RunState
    from toolweave.governance.approvals import ApprovalAnswer
    from toolweave.scheduler.background import ScheduledOutcome
    from toolweave.tools import Tool
    from toolweave.tools.context import UserOutput

    Resume = tuple[RunState, Mapping[str, ApprovalAnswer]]

logger = logging.getLogger("toolweave.scheduler.scheduler")

Deliver = Callable[[str, str], Awaitable[None] | None]
"""`deliver(target, text)`: where a firing's final answer (or its timeout notice) goes."""
DeliverOutput = Callable[[str, "UserOutput"], Awaitable[None] | None]
"""`deliver_output(target, output)`: where an image, file or text a tool sent goes."""

DEFAULT_TASK_TIMEOUT = 120.0
MAX_TASK_TIMEOUT = 3600.0
DEFAULT_POLL_INTERVAL = 1.0
"""Longest sleep between checks for due tasks (tasks other processes add are seen this fast)."""
MAX_CLAIM_BATCH = 20
MAX_OUTPUT_CHARS = 8000


def check_timeout(timeout: object, where: str = "timeout") -> float:
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise ConfigError(f"{where} must be a number of seconds, got {timeout!r}")
    if not 0 < timeout <= MAX_TASK_TIMEOUT:
        raise ConfigError(f"{where} must be between 0 and {MAX_TASK_TIMEOUT:g} seconds")
    return float(timeout)


class Scheduler:
    """Run `agent` on persisted schedules; tasks in SQLite (`path`) or Postgres (`dsn`).

    `state_secret` seals the states of firings paused for approvals (`RunState.to_json`), so
    one edited in the store is refused when answered; give every scheduler of a store the same.
    """

    def __init__(
        self,
        agent: Agent,
        path: str | Path | None = None,
        *,
        dsn: str | None = None,
        deliver: Deliver | None = None,
        deliver_output: DeliverOutput | None = None,
        name: str = "scheduler",
        timezone: str = "UTC",
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        clock: Callable[[], float] = time.time,
        state_secret: str | None = None,
    ) -> None:
        if poll_interval <= 0:
            raise ConfigError("Scheduler(poll_interval=...) must be a positive number of seconds")
        self.agent = agent
        self.name = name
        self.deliver = deliver
        self.deliver_output = deliver_output
        self.poll_interval = poll_interval
        self.tasks = ScheduleStore(path, dsn=dsn, timezone=timezone, state_secret=state_secret)
        self._now = clock
        self._loop_task: asyncio.Task[None] | None = None
        self._firings: dict[asyncio.Task[TaskRun], str] = {}  # each firing's target
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- managing tasks -----------------------------------------------------------------------
    # Synchronous for scripts and the CLI (no event loop needed); the `a`-prefixed twins serve
    # coroutines (the clock tools), which must not block the loop on the store.

    def create(
        self,
        spec: str,
        prompt: str,
        target: str,
        run_once: bool = False,
        timeout: float = DEFAULT_TASK_TIMEOUT,
    ) -> str:
        """Add a task; returns its id. `spec` is 5-field cron or `@every 10s`."""
        task = self._sync(self._create_program(spec, prompt, target, run_once, timeout))
        self._poke()
        return task.id

    async def acreate(
        self,
        spec: str,
        prompt: str,
        target: str,
        run_once: bool = False,
        timeout: float = DEFAULT_TASK_TIMEOUT,
    ) -> ScheduledTask:
        """`create` for coroutines; returns the new task."""
        task = await self._async(self._create_program(spec, prompt, target, run_once, timeout))
        self._poke()
        return task

    def list(self, target: str | None = None) -> builtins.list[ScheduledTask]:
        """Tasks (of one `target`, or all), soonest first."""
        return self._sync(lambda d: self.tasks.list_tasks(target))

    async def alist(self, target: str | None = None) -> builtins.list[ScheduledTask]:
        """`list` for coroutines."""
        return await self._async(lambda d: self.tasks.list_tasks(target))

    async def aget(self, task_id: str) -> ScheduledTask | None:
        """The task with this id, or None."""
        return await self._async(lambda d: self.tasks.get(d, task_id))

    def update(self, task_id: str, **changes: Any) -> ScheduledTask:
        """Change `spec`, `prompt`, `target`, `run_once`, `timeout` or `enabled`."""
        return self._updated(task_id, self._sync(self._update_program(task_id, changes)))

    async def aupdate(self, task_id: str, **changes: Any) -> ScheduledTask:
        """`update` for coroutines."""
        return self._updated(task_id, await self._async(self._update_program(task_id, changes)))

    def delete(self, task_id: str) -> bool:
        return self._sync(lambda d: self.tasks.delete(task_id))

    async def adelete(self, task_id: str) -> bool:
        """`delete` for coroutines."""
        return await self._async(lambda d: self.tasks.delete(task_id))

    def log(self, task_id: str, limit: int = 20) -> builtins.list[TaskRun]:
        """The task's firings, newest first."""
        return self._sync(lambda d: self.tasks.log(task_id, limit))

    async def alog(self, task_id: str, limit: int = 20) -> builtins.list[TaskRun]:
        """`log` for coroutines."""
        return await self._async(lambda d: self.tasks.log(task_id, limit))

    # -- paused firings ------------------------------------------------------------------------

    def paused(self, target: str | None = None) -> builtins.list[PausedRun]:
        """Firings waiting for approvals (of one `target`, or all), oldest first. A scheduled
        run asks only the admin approver: `Governance(admin_approver=defer_approval)` makes
        its questions wait here, however long, instead of being refused."""
        return self._sync(lambda d: self.tasks.paused(target))

    async def apaused(self, target: str | None = None) -> builtins.list[PausedRun]:
        """`paused` for coroutines."""
        return await self._async(lambda d: self.tasks.paused(target))

    async def answer(
        self, task_id: str, fire_time: float, approvals: Mapping[str, ApprovalAnswer]
    ) -> TaskRun:
        """Answer a paused firing (`approvals`: call id to True, False or "always") and run it
        to its end, in this process or any other on the same store; the firing's run record
        is updated and its output delivered as on a normal firing. Raises `ConfigError` when
        no such firing waits (already answered, or never paused)."""
        waiting = await self._async(lambda d: self.tasks.take_paused(task_id, fire_time))
        if waiting is None:
            raise ConfigError(
                f"no paused firing of task {task_id!r} at {fire_time!r}; list them with "
                "Scheduler.paused()"
            )
        state = waiting.state
        task = ScheduledTask(
            task_id, "", state.prompt, waiting.target, waiting.run_once, waiting.timeout, True, 0, 0
        )
        return await self._fire(task, fire_time, (state, approvals))

    def _updated(self, task_id: str, updated: ScheduledTask | None) -> ScheduledTask:
        if updated is None:
            raise ConfigError(f"no scheduled task {task_id!r}; list them with Scheduler.list()")
        self._poke()
        return updated

    def _create_program(
        self, spec: str, prompt: str, target: str, run_once: bool, timeout: float
    ) -> ProgramFactory[ScheduledTask]:
        if not isinstance(prompt, str) or not prompt.strip():
            raise ConfigError("Scheduler.create(prompt=...) must be a non-empty string")
        if not isinstance(target, str) or not target:
            raise ConfigError("Scheduler.create(target=...) must name where answers go")
        seconds = check_timeout(timeout, "Scheduler.create(timeout=...)")
        now = self._now()
        return lambda d: self.tasks.create(spec, prompt, target, bool(run_once), seconds, now)

    def _update_program(
        self, task_id: str, changes: dict[str, Any]
    ) -> ProgramFactory[ScheduledTask | None]:
        allowed = {"spec", "prompt", "target", "run_once", "timeout", "enabled"}
        unknown = set(changes) - allowed
        if unknown:
            raise ConfigError(f"Scheduler.update: unknown field(s) {sorted(unknown)}; {allowed}")
        if "timeout" in changes:
            changes["timeout"] = check_timeout(changes["timeout"], "Scheduler.update(timeout=...)")
        now = self._now()
        return lambda d: self.tasks.update(d, task_id, changes, now)

    def _sync(self, factory: ProgramFactory[T]) -> T:
        return self.tasks.store.transact_sync(factory)

    async def _async(self, factory: ProgramFactory[T]) -> T:
        return await self.tasks.store.transact(factory)

    # -- running ------------------------------------------------------------------------------

    async def start(self) -> None:
        """Mark runs a previous process left unfinished as interrupted, then fire due tasks in
        the background until `stop()`."""
        if self._loop_task is not None:
            raise RuntimeError("Scheduler.start() was already called; call stop() first")
        now = self._now()
        marked = await self._async(lambda d: self.tasks.mark_interrupted(self.name, now))
        if marked:
            logger.warning("scheduler %s: %d interrupted run(s) marked", self.name, marked)
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._loop_task = asyncio.create_task(self._run_loop(), name=f"scheduler:{self.name}")

    async def stop(self) -> None:
        """Stop firing; runs still going are cancelled and recorded as interrupted."""
        task, self._loop_task = self._loop_task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        firings = list(self._firings)
        for firing in firings:
            firing.cancel()
        await asyncio.gather(*firings, return_exceptions=True)
        self._loop = self._wake = None

    async def cancel_runs(self, target: str) -> int:
        """Stop the runs of `target`'s tasks still going (each recorded as interrupted; the
        tasks stay scheduled); returns how many were stopped (`/stop` in a chat)."""
        firings = [firing for firing, of in self._firings.items() if of == target]
        for firing in firings:
            firing.cancel()
        await asyncio.gather(*firings, return_exceptions=True)
        return len(firings)

    async def close(self) -> None:
        await self.stop()
        await self.tasks.store.close()

    async def tick(self) -> builtins.list[TaskRun]:
        """Claim every due firing now and run them to the end (what the background loop does
        each time it wakes; tests with a fake clock call it directly)."""
        claimed = await self._claim()
        return list(await asyncio.gather(*(self._fire(t, f) for t, f in claimed)))

    async def _claim(self) -> builtins.list[tuple[ScheduledTask, float]]:
        now = self._now()
        return await self._async(lambda d: self.tasks.claim(d, self.name, now, MAX_CLAIM_BATCH))

    async def _run_loop(self) -> None:
        assert self._wake is not None
        while True:
            try:
                for task, fire_time in await self._claim():
                    firing = asyncio.create_task(self._fire(task, fire_time))
                    self._firings[firing] = task.target
                    firing.add_done_callback(lambda done: self._firings.pop(done, None))
                due = await self._async(lambda d: self.tasks.next_due())
            except Exception:  # a database hiccup must not end the schedule
                logger.exception("scheduler %s: checking due tasks failed", self.name)
                due = None
            delay = self.poll_interval
            if due is not None:
                delay = min(delay, max(due - self._now(), 0.0))
            self._wake.clear()
            # asyncio.timeout, not wait_for: 3.11's wait_for can swallow a cancellation that
            # arrives as its timeout fires, and stop() would wait on this loop forever.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._wake.wait()

    def _poke(self) -> None:
        """Wake the loop so a new or changed task is considered now (from any thread)."""
        loop, wake = self._loop, self._wake
        if loop is None or wake is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            wake.set()
        else:
            loop.call_soon_threadsafe(wake.set)

    async def _fire(
        self, task: ScheduledTask, fire_time: float, resume: Resume | None = None
    ) -> TaskRun:
        started = time.time()
        status: RunStatus = "success"
        output = error = ""
        tokens = 0
        calls: tuple[TaskToolCall, ...] = ()
        try:
            async with asyncio.timeout(task.timeout):
                outcome = await self._execute(task, resume)
            output, tokens, calls = outcome.output, outcome.tokens, outcome.tool_calls
            if outcome.paused is not None:  # kept until answered; the task stays meanwhile
                status, state = "paused", outcome.paused
                await self._async(lambda d: self.tasks.pause(task, fire_time, state))
            for sent in outcome.user_outputs:
                await self._hand_over(self.deliver_output, task, sent)
        except TimeoutError:
            status = "timeout"
            output = f"Scheduled task {task.id} did not finish within {task.timeout:g}s."
            error = "timeout"
        except asyncio.CancelledError:
            await asyncio.shield(
                self._async(
                    lambda d: self.tasks.finish(
                        task.id, fire_time, "interrupted", "", "scheduler stopped", 0, False
                    )
                )
            )
            raise
        except Exception as exc:
            status, error = "error", f"{type(exc).__name__}: {exc}"
            logger.warning("scheduled task %s failed: %s", task.id, error)
        output = output[:MAX_OUTPUT_CHARS]
        remove = task.run_once and status != "paused"
        await self._async(
            lambda d: self.tasks.finish(
                task.id, fire_time, status, output, error, tokens, remove, calls
            )
        )
        if output:
            await self._hand_over(self.deliver, task, output)
        return TaskRun(
            task.id,
            fire_time,
            status,
            self.name,
            started,
            time.time(),
            output,
            error,
            tokens,
            calls,
        )

    async def _hand_over(
        self, to: Callable[[str, Any], Any] | None, task: ScheduledTask, item: Any
    ) -> None:
        """Give `item` to a delivery callback; its failure is logged, never the firing's."""
        if to is None:
            return
        try:
            delivered = to(task.target, item)
            if inspect.isawaitable(delivered):
                await delivered
        except Exception:
            logger.exception("scheduled task %s: delivering to %s failed", task.id, task.target)

    async def _execute(self, task: ScheduledTask, resume: Resume | None) -> ScheduledOutcome:
        """One disposable run (a fresh session, the agent's full tools, background subagents),
        or a paused one resumed; only its final answer. Usage counts against the target's
        quota."""
        from toolweave.scheduler.background import run_scheduled

        return await run_scheduled(self.agent, task.prompt, task.timeout, task.target, resume)

    # -- tools --------------------------------------------------------------------------------

    def tools(self) -> builtins.list[Tool]:
        """`clock_create`, `clock_list`, `clock_update`, `clock_delete` and `clock_log`, scoped
        to the calling session (its id is the default target)."""
        from toolweave.scheduler.clock_tools import clock_tools

        return clock_tools(self)

    def __repr__(self) -> str:
        return f"Scheduler(name={self.name!r}, store={self.tasks.store!r})"
