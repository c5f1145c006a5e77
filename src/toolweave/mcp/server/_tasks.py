"""Running tool calls as tasks (SEP-2663) and the `tasks/*` methods.

A call to a tool declared with `task="optional"` or `"required"`, from a client that declared
the tasks extension, starts the tool at once. If it is still running `task_after` seconds later
(0: at its first pause) the server stores a task and answers with it (`resultType: "task"`); the
tool runs on in the background and its outcome lands in the store. A call that ends sooner is
answered directly, like any call. Questions the tool asks before it becomes a task end the call
with an input-required result (the client retries with the answers); questions asked later park
the task in `input_required` until `tasks/update` brings the answers (one at a time is fine).
`tasks/cancel` marks the task cancelled and cancels the tool. A client that did not declare the
extension calls an optional tool synchronously and gets -32021 for a required one.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolweave.mcp.server._input import RetryInputs
from toolweave.mcp.server._run_tool import run_tool
from toolweave.mcp.server.results import result_to_wire
from toolweave.mcp.server.tasks import SQLiteTaskStore, TaskRecord, TaskStore, new_task_id
from toolweave.mcp.shared.errors import INTERNAL_ERROR, INVALID_PARAMS, JSONRPCError, MCPError
from toolweave.tools.calls import CallRounds

if TYPE_CHECKING:
    from toolweave.mcp.server._tools import ToolEntry
    from toolweave.mcp.server.context import Context
    from toolweave.tools.result import ToolResult

logger = logging.getLogger("toolweave.mcp.server")
#: Default lifetime of a task record (`task_ttl_ms`): an hour to collect a result.
DEFAULT_TASK_TTL_MS = 3_600_000
#: Default polling interval suggested to clients (`task_poll_interval_ms`).
DEFAULT_TASK_POLL_INTERVAL_MS = 1_000


class TaskInputs(RetryInputs):
    """A task call's questions: answered from the retry until the call becomes a task, then
    parked in the store until `tasks/update` answers them."""

    def __init__(self, answers: dict[str, Any], rounds: CallRounds | None = None) -> None:
        super().__init__(answers, rounds)
        self.manager: TaskManager | None = None
        self.task_id = ""
        self.waiting: dict[str, tuple[dict[str, Any], asyncio.Future[dict[str, Any]]]] = {}

    async def ask(
        self, key: str, method: str, params: dict[str, Any], timeout: float
    ) -> dict[str, Any]:
        if self.manager is None or key in self.answers:
            return await super().ask(key, method, params, timeout)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[key] = ({"method": method, "params": params}, future)
        await self.manager.park(self.task_id, self.questions())
        try:
            async with asyncio.timeout(timeout):
                return await future
        finally:
            self.waiting.pop(key, None)

    def questions(self) -> dict[str, Any]:
        return {key: request for key, (request, _) in self.waiting.items()}

    def deliver(self, responses: dict[str, Any]) -> None:
        for key, response in responses.items():
            pending = self.waiting.pop(key, None)
            if pending is not None and not pending[1].done() and isinstance(response, dict):
                self.answers[key] = response
                pending[1].set_result(response)


class TaskManager:
    """The server's tasks: the store (opened on first use) and the runs of this process."""

    def __init__(
        self,
        store: TaskStore | None,
        *,
        ttl_ms: int = DEFAULT_TASK_TTL_MS,
        poll_interval_ms: int = DEFAULT_TASK_POLL_INTERVAL_MS,
        on_change: Callable[[str], None] = lambda task_id: None,
    ) -> None:
        if ttl_ms < 1 or poll_interval_ms < 1:
            raise ValueError("task_ttl_ms and task_poll_interval_ms must be positive integers")
        self._store = store
        self._on_change = on_change  # tells the listen streams following the task
        self._recovered = False
        self._closed = False  # set by close(): runs cancelled by a stop leave their task active
        self.ttl_ms = int(ttl_ms)
        self.poll_interval_ms = int(poll_interval_ms)
        self.runs: dict[str, tuple[asyncio.Task[ToolResult], TaskInputs]] = {}
        self._settling: dict[str, asyncio.Future[None]] = {}

    async def store(self) -> TaskStore:
        if self._store is None:
            self._store = SQLiteTaskStore()
        if not self._recovered:
            self._recovered = True
            failed = await self._store.recover()
            if failed:
                logger.warning("%d task(s) of an earlier run failed: host restarted", failed)
        return self._store

    async def call(
        self, entry: ToolEntry, args: dict[str, Any], ctx: Context, answers: dict[str, Any]
    ) -> dict[str, Any] | ToolResult:
        """Run a task-capable call: its result if it ends soon (an `InputRequired` propagates),
        else the CreateTaskResult of the task it became."""
        store = await self.store()  # open now: from the first pause on, nothing may wait here
        before = ctx.inputs
        inputs = TaskInputs(answers, before.rounds if isinstance(before, RetryInputs) else None)
        ctx.inputs = inputs
        run = asyncio.ensure_future(run_tool(entry, entry.tool(), args, ctx))
        try:
            await asyncio.sleep(0)  # let the tool reach its first pause
            if not run.done() and entry.task_after > 0:
                await asyncio.wait({run}, timeout=entry.task_after)
            if not run.done() and inputs.pending:
                await asyncio.wait({run})  # it asked the client: it ends with InputRequired
        except asyncio.CancelledError:
            run.cancel()
            raise
        if run.done():
            return run.result()
        task = TaskRecord(
            new_task_id(),
            ctx.principal or "",
            entry.name,
            ttl_ms=self.ttl_ms,
            poll_interval_ms=self.poll_interval_ms,
        )
        inputs.manager, inputs.task_id = self, task.task_id
        ctx.detach(lambda progress, total, message: self._progress(task, progress, total, message))
        self.runs[task.task_id] = (run, inputs)
        await store.create(task)  # durable before the client learns the id
        settle = asyncio.ensure_future(self._settle(task.task_id, run, entry.wrap_structured))
        self._settling[task.task_id] = settle
        settle.add_done_callback(lambda _: self._settling.pop(task.task_id, None))
        return {"resultType": "task", **task.wire(detailed=False)}

    async def wait(self, task_id: str) -> None:
        """Return once a task this process runs has ended and its outcome is stored (at once
        for a task that is not running here)."""
        settling = self._settling.get(task_id)
        if settling is not None:
            await asyncio.shield(settling)

    async def _change(self, task_id: str, changes: dict[str, Any]) -> None:
        if self._closed:
            return
        store = await self.store()
        if await store.update(task_id, changes) is not None:
            self._on_change(task_id)

    async def snapshot(self, task_id: str, owner: str) -> dict[str, Any] | None:
        """The task as `tasks/get` shows it to `owner`; None when it is not theirs (or gone)."""
        task = await (await self.store()).get(task_id, owner)
        return None if task is None else task.wire()

    async def owned(self, task_ids: list[str], owner: str) -> list[str]:
        """The ids among `task_ids` of tasks `owner` may follow."""
        store = await self.store() if task_ids else None
        return [t for t in task_ids if store is not None and await store.get(t, owner)]

    async def close(self) -> None:
        """Cancel the tasks this process runs (a restart reads them as failed) and close the
        store if it was opened."""
        self._closed = True
        runs = [run for run, _ in self.runs.values()]
        for run in runs:
            run.cancel()
        await asyncio.gather(*runs, return_exceptions=True)  # their cleanup runs before ours
        if self._recovered and self._store is not None:
            await self._store.close()

    async def park(self, task_id: str, questions: dict[str, Any]) -> None:
        await self._change(task_id, {"status": "input_required", "input_requests": questions})

    async def _progress(
        self, task: TaskRecord, progress: float, total: float | None, message: str | None
    ) -> None:
        done = f"{progress:g}/{total:g}" if total else f"{progress:g}"
        await self._change(task.task_id, {"status_message": f"{done} {message or ''}".strip()})

    async def _settle(self, task_id: str, run: asyncio.Task[ToolResult], wrap: bool) -> None:
        """Record how the run ended (a cancelled task was recorded by `cancel`)."""
        changes: dict[str, Any]
        try:
            result = await run
            changes = {
                "status": "completed",
                "result": result_to_wire(result, wrap_structured=wrap),
            }
        except asyncio.CancelledError:
            changes = {"status": "cancelled"}
        except JSONRPCError as exc:
            changes = {"status": "failed", "error": exc.to_dict()}
        except MCPError as exc:
            changes = {"status": "failed", "error": {"code": exc.code or INTERNAL_ERROR}}
            changes["error"]["message"] = exc.message
        except Exception as exc:  # never reached by tools (run_tool maps their errors)
            logger.exception("task %s failed", task_id)
            changes = {"status": "failed", "error": {"code": INTERNAL_ERROR, "message": str(exc)}}
        finally:
            self.runs.pop(task_id, None)
        await self._change(task_id, {**changes, "input_requests": None})

    # -- the tasks/* methods -------------------------------------------------------------------

    async def _owned(self, params: dict[str, Any], owner: str) -> TaskRecord:
        task_id = params.get("taskId")
        if not isinstance(task_id, str):
            raise JSONRPCError(INVALID_PARAMS, "params.taskId must be the task's id (a string)")
        task = await (await self.store()).get(task_id, owner)
        if task is None:
            raise JSONRPCError(
                INVALID_PARAMS, f"Unknown task {task_id!r} (never created, expired, or not yours)"
            )
        return task

    async def get(self, params: dict[str, Any], owner: str) -> dict[str, Any]:
        return (await self._owned(params, owner)).wire()

    async def update(self, params: dict[str, Any], owner: str) -> dict[str, Any]:
        task = await self._owned(params, owner)
        responses = params.get("inputResponses")
        if not isinstance(responses, dict):
            raise JSONRPCError(
                INVALID_PARAMS, "tasks/update needs params.inputResponses, an object by key"
            )
        running = self.runs.get(task.task_id)
        if running is not None and not task.terminal:
            inputs = running[1]
            inputs.deliver(responses)
            left = inputs.questions()
            status = "input_required" if left else "working"
            await self._change(task.task_id, {"status": status, "input_requests": left or None})
        return {}

    async def cancel(self, params: dict[str, Any], owner: str) -> dict[str, Any]:
        task = await self._owned(params, owner)
        if not task.terminal:
            await self._change(task.task_id, {"status": "cancelled", "input_requests": None})
            running = self.runs.get(task.task_id)
            if running is not None:
                running[0].cancel()
        return {}
