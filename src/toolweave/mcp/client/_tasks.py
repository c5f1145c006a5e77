"""Tasks as a client: a tool call that finishes later.

Two wire shapes exist. In 2025-11-25 tasks are core and requestor-driven: a tool whose
`execution.taskSupport` is `required` (or `optional`, when asked) is called with a `task`
param, the server answers `{"task": {...}}`, the client polls `tasks/get` and fetches the
outcome with `tasks/result`. In 2026-07-28 they are the `io.modelcontextprotocol/tasks`
extension (SEP-2663) and server-directed: the client declares the extension and the server may
answer any `tools/call` with `resultType: "task"`; `tasks/get` then carries the outcome itself
(`result` or `error`), or the `inputRequests` of an `input_required` task, answered with
`tasks/update`. Both eras poll at the server's `pollInterval(Ms)` (bounded below and above by
`MIN_POLL_INTERVAL` and `MAX_POLL_INTERVAL`) and cancel with `tasks/cancel`.

`call_tool` runs a task transparently: the caller gets the final `ToolResult`, and each status
change reaches `on_progress` as a progress event (its message the task's status message).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolweave.mcp.client.models import tool_result_from_wire
from toolweave.mcp.shared.errors import JSONRPCError, MCPError
from toolweave.tools.result import ToolResult

if TYPE_CHECKING:
    from toolweave.mcp.client import protocol
    from toolweave.mcp.client._callbacks import ClientCallbacks
    from toolweave.mcp.shared.jsonrpc import ProgressHandler

#: Statuses after which a task never changes again.
TERMINAL = frozenset({"completed", "failed", "cancelled"})
#: Poll interval when the server suggests none, and the bounds on what it may suggest (s).
DEFAULT_POLL_INTERVAL = 1.0
MIN_POLL_INTERVAL = 0.05
MAX_POLL_INTERVAL = 30.0


@dataclass(frozen=True, slots=True)
class MCPTask:
    """One state of a task, as `tasks/get` (or the call that created it) reported it."""

    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None
    ttl_ms: int | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    result: dict[str, Any] | None = None
    """The outcome of a completed 2026 task (a `CallToolResult`); 2025 fetches it apart."""
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] = field(default_factory=dict)

    @property
    def done(self) -> bool:
        return self.status in TERMINAL

    @property
    def poll_interval(self) -> float:
        """Seconds to wait before the next `tasks/get`, as the server asked (bounded)."""
        if self.poll_interval_ms is None:
            return DEFAULT_POLL_INTERVAL
        return min(max(self.poll_interval_ms / 1000, MIN_POLL_INTERVAL), MAX_POLL_INTERVAL)

    @classmethod
    def from_wire(cls, raw: dict[str, Any]) -> MCPTask:
        body = raw.get("task") if isinstance(raw.get("task"), dict) else raw
        assert isinstance(body, dict)
        task_id = body.get("taskId")
        if not isinstance(task_id, str) or not task_id:
            raise MCPError(f"a task answer without a taskId: {str(raw)[:200]}")

        def integer(*keys: str) -> int | None:
            value = next((body.get(k) for k in keys if isinstance(body.get(k), int)), None)
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        def text(key: str) -> str | None:
            return body.get(key) if isinstance(body.get(key), str) else None

        requests = body.get("inputRequests")
        return cls(
            task_id=task_id,
            status=str(body.get("status", "working")),
            status_message=text("statusMessage"),
            poll_interval_ms=integer("pollIntervalMs", "pollInterval"),
            ttl_ms=integer("ttlMs", "ttl"),
            created_at=text("createdAt"),
            last_updated_at=text("lastUpdatedAt"),
            result=body.get("result") if isinstance(body.get("result"), dict) else None,
            error=body.get("error") if isinstance(body.get("error"), dict) else None,
            input_requests=dict(requests) if isinstance(requests, dict) else {},
        )


def is_task_answer(raw: dict[str, Any]) -> bool:
    """Is this `tools/call` answer a created task rather than the result?"""
    return raw.get("resultType") == "task" or (
        isinstance(raw.get("task"), dict) and "content" not in raw
    )


class TaskFeatures:
    """Creating, polling, watching and cancelling tasks, on top of `request()`."""

    name: str
    callbacks: ClientCallbacks

    if TYPE_CHECKING:

        async def request(
            self,
            method: str,
            params: dict[str, Any] | None = None,
            *,
            timeout: float | None = None,
            on_progress: ProgressHandler | None = None,
        ) -> dict[str, Any]: ...

        def _require(self) -> protocol.Negotiated: ...

    async def start_tool_task(
        self, name: str, args: dict[str, Any] | None = None, *, ttl_ms: int | None = None
    ) -> MCPTask | ToolResult:
        """Call a tool as a task: the created task, or the result when the server chose to
        answer at once (2026 servers decide per call)."""
        params: dict[str, Any] = {"name": name, "arguments": args or {}}
        if not self._require().modern:
            params["task"] = {"ttl": ttl_ms} if ttl_ms is not None else {}
        raw = await self.request("tools/call", params)
        return MCPTask.from_wire(raw) if is_task_answer(raw) else tool_result_from_wire(raw)

    async def get_task(self, task_id: str) -> MCPTask:
        return MCPTask.from_wire(await self.request("tasks/get", {"taskId": task_id}))

    async def cancel_task(self, task_id: str) -> MCPTask:
        """Ask the server to stop the task; its state after the request (a 2026 server answers
        with an empty acknowledgment, so the state is read with `tasks/get`)."""
        raw = await self.request("tasks/cancel", {"taskId": task_id})
        return MCPTask.from_wire(raw) if "taskId" in raw else await self.get_task(task_id)

    async def watch_task(self, task: MCPTask) -> AsyncIterator[MCPTask]:
        """Every new state of `task` until it ends, polling at the server's interval; a
        2026 task that needs input has it answered (the client's handlers) on the way."""
        current = task
        while not current.done:
            if current.input_requests and self._require().modern:
                answers = await self.callbacks.answer_inputs(current.input_requests)
                await self.request(
                    "tasks/update", {"taskId": current.task_id, "inputResponses": answers}
                )
            await asyncio.sleep(current.poll_interval)
            polled = await self.get_task(current.task_id)
            if polled != current:
                yield polled
            current = polled

    async def task_result(self, task: MCPTask) -> ToolResult:
        """The outcome of a finished task as a `ToolResult` (a failed or cancelled task raises
        `MCPError`)."""
        if task.status == "completed" and task.result is not None:
            return tool_result_from_wire(task.result)
        if task.status == "completed":  # 2025: the outcome is fetched apart
            return tool_result_from_wire(
                await self.request("tasks/result", {"taskId": task.task_id})
            )
        error = task.error or {}
        reason = error.get("message") or task.status_message or task.status
        if isinstance(error.get("code"), int):
            raise JSONRPCError(error["code"], f"task {task.task_id} failed: {reason}")
        raise MCPError(f"task {task.task_id} on MCP server {self.name!r} {task.status}: {reason}")

    async def run_task(
        self, task: MCPTask, on_progress: ProgressHandler | None = None
    ) -> ToolResult:
        """Follow `task` to its end (cancelling it if the caller is cancelled), reporting each
        status change as progress (the first: the call became a task), and return its
        outcome."""
        steps = 1
        if on_progress is not None:
            await _report(on_progress, steps, task)
        try:
            async for state in self.watch_task(task):
                steps += 1
                task = state
                if on_progress is not None:
                    await _report(on_progress, steps, state)
        except asyncio.CancelledError:
            await asyncio.shield(self._cancel_quietly(task.task_id))
            raise
        return await self.task_result(task)

    async def _cancel_quietly(self, task_id: str) -> None:
        try:
            await self.cancel_task(task_id)
        except MCPError as exc:
            self.callbacks.server_log.debug("tasks/cancel %s failed: %s", task_id, exc)


async def _report(on_progress: ProgressHandler, steps: int, state: MCPTask) -> None:
    outcome = on_progress(float(steps), None, state.status_message or state.status)
    if asyncio.iscoroutine(outcome):
        await outcome
