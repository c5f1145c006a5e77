"""Background subagents for scheduled runs.

In a scheduled run nobody waits on the conversation, so `subagent_run` starts the subagent in
the background and returns its id at once; `subagent_list` shows how each is doing and
`subagent_cancel` stops one. When the run's own answer is in, the runner waits for the rest
(keeping `SUBAGENT_RESERVE` seconds of the task's budget for synthesis), feeds their results to
the same disposable agent, and repeats for at most `MAX_SYNTHESIS_ROUNDS` rounds while new
background work appears; only the final synthesis is delivered. A background subagent's
timeout shrinks with the budget that is left. Every round's tool calls and the images, files
and text tools sent to the user (`ctx.send_*`) are kept for the firing's record and delivery.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolweave.agent.orchestration.subagents import (
    SUBAGENT_RESERVE,
    SubagentResult,
    run_subagent,
    scope_of,
)
from toolweave.scheduler.store import TaskToolCall
from toolweave.tools import ExecutionFailed, FunctionTool, Tool, ToolContext
from toolweave.tools.context import UserOutput

if TYPE_CHECKING:
    from toolweave.agent.agent import Agent
    from toolweave.agent.orchestration.settings import RunScope
    from toolweave.agent.run_state import RunState
    from toolweave.governance.approvals import ApprovalAnswer

MAX_SYNTHESIS_ROUNDS = 5
MAX_RECORDED_CALLS = 200
"""Tool calls one firing records at most (a runaway loop must not fill the run log)."""
MAX_BACKGROUND_SUBAGENTS = 10
"""Background subagents one scheduled run may start in all."""


@dataclass(slots=True)
class _Job:
    id: str
    task: str
    future: asyncio.Task[SubagentResult]
    reported: bool = False


@dataclass(slots=True)
class BackgroundSubagents:
    """The background subagents of one scheduled run."""

    jobs: dict[str, _Job] = field(default_factory=dict)

    async def start(
        self, scope: RunScope, ctx: ToolContext, task: str, timeout_sec: float | None
    ) -> str:
        if len(self.jobs) >= MAX_BACKGROUND_SUBAGENTS:
            raise ExecutionFailed(
                f"this run already started {len(self.jobs)} background subagents (the limit is "
                f"{MAX_BACKGROUND_SUBAGENTS}); wait for their results"
            )
        job_id = f"sub-{len(self.jobs) + 1}"
        future = asyncio.create_task(
            run_subagent(scope, ctx, task, name=job_id, timeout_sec=timeout_sec)
        )
        self.jobs[job_id] = _Job(job_id, task, future)
        return (
            f"started background subagent {job_id}; its result is handed to you when this run "
            "ends (subagent_list shows progress)"
        )

    def describe(self) -> builtins.list[dict[str, str]]:
        rows = []
        for job in self.jobs.values():
            if not job.future.done():
                status = "running"
            elif job.future.cancelled():
                status = "cancelled"
            else:
                status = job.future.result().status
            rows.append({"id": job.id, "status": status, "task": job.task[:200]})
        return rows

    def cancel(self, job_id: str) -> str:
        job = self.jobs.get(job_id)
        if job is None:
            raise ExecutionFailed(f"no background subagent {job_id!r}; see subagent_list")
        if job.future.done():
            return f"{job_id} had already finished"
        job.future.cancel()
        return f"cancelled {job_id}"

    def pending(self) -> bool:
        return any(not job.reported for job in self.jobs.values())

    async def drain(self, deadline: float | None, limit: int) -> str:
        """Wait for unreported jobs until `deadline` minus the synthesis reserve; cancel what
        is still running then, and return their results as one message."""
        waiting = [job for job in self.jobs.values() if not job.reported]
        futures = [job.future for job in waiting]
        loop = asyncio.get_running_loop()
        wait_for = None if deadline is None else max(deadline - loop.time() - SUBAGENT_RESERVE, 0)
        if futures:
            _, still_running = await asyncio.wait(futures, timeout=wait_for)
            for future in still_running:
                future.cancel()
            await asyncio.gather(*still_running, return_exceptions=True)
        parts = []
        for job in waiting:
            job.reported = True
            if job.future.cancelled():
                parts.append(f"[subagent {job.id}: cancelled]\n(no result)")
            else:
                parts.append(job.future.result().render(limit))
        return "Results of the background subagents you started:\n\n" + "\n\n".join(parts)

    async def close(self) -> None:
        for job in self.jobs.values():
            job.future.cancel()
        with contextlib.suppress(Exception):
            await asyncio.gather(*(j.future for j in self.jobs.values()), return_exceptions=True)


def background_tools() -> list[Tool]:
    """`subagent_list` and `subagent_cancel`, present in scheduled runs."""

    def jobs(ctx: ToolContext, tool: str) -> BackgroundSubagents:
        scope = scope_of(ctx, tool)
        if not isinstance(scope.background, BackgroundSubagents):
            raise ExecutionFailed(f"{tool} works in scheduled runs only", tool=tool)
        return scope.background

    async def subagent_list(ctx: ToolContext) -> builtins.list[dict[str, str]]:
        """List the background subagents this run started and how each is doing."""
        return jobs(ctx, "subagent_list").describe()

    async def subagent_cancel(ctx: ToolContext, subagent_id: str) -> str:
        """Cancel a background subagent.

        Args:
            subagent_id: The id subagent_run returned, e.g. 'sub-1'.
        """
        return jobs(ctx, "subagent_cancel").cancel(subagent_id)

    return [
        FunctionTool(subagent_list, read_only=True, category="orchestration"),
        FunctionTool(subagent_cancel, category="orchestration"),
    ]


@dataclass(frozen=True, slots=True)
class ScheduledOutcome:
    """What one firing produced: the final answer, the tokens the whole firing used
    (background work included), its tool calls (at most `MAX_RECORDED_CALLS`) and what tools
    sent to the user."""

    output: str
    tokens: int
    tool_calls: tuple[TaskToolCall, ...] = ()
    user_outputs: tuple[UserOutput, ...] = ()
    paused: RunState | None = None
    """Set when the run paused for approvals (`defer_approval`): the state to store."""


async def run_scheduled(
    agent: Agent[Any, Any],
    prompt: str,
    timeout: float,
    quota_key: str,
    resume: tuple[RunState, Mapping[str, ApprovalAnswer]] | None = None,
) -> ScheduledOutcome:
    """One scheduled firing: a disposable run with background subagents, then up to
    `MAX_SYNTHESIS_ROUNDS` rounds that feed their results back. With `resume` (a paused
    firing's state and the answers), the paused run goes on in a session of its own id."""
    from toolweave.agent.errors import RunPaused
    from toolweave.agent.orchestration.settings import RunScope
    from toolweave.agent.session import Session

    registry = agent.registry
    if agent.orchestration.children.subagents:
        registry = registry.overlay()
        for tool in background_tools():
            registry.register(tool)
    # Disposable, and nobody to ask: only an admin approver can approve (or defer).
    session = Session(resume[0].session_id) if resume is not None else Session()
    governance = agent.governance.child(
        agent_id=f"scheduled-{session.id[:8]}", agent_type="scheduled"
    )
    scheduled = agent.replace(registry=registry, governance=governance)
    background = BackgroundSubagents()
    deadline = asyncio.get_running_loop().time() + timeout
    scope = RunScope(
        scheduled,
        session,
        quota_key,
        deadline,
        agent_type="scheduled",
        turns_left=agent.max_turns,
        background=background,
    )
    calls: list[TaskToolCall] = []
    outputs: list[UserOutput] = []
    try:
        if resume is not None:
            result = await scheduled.resume(*resume, scope=scope)
        else:
            result = await scheduled.run_scoped(prompt, scope)
        _collect(result, calls, outputs)
        for _ in range(MAX_SYNTHESIS_ROUNDS):
            if not background.pending():
                break
            limit = agent.orchestration.children.subagent_max_result_chars
            results = await background.drain(deadline, limit)
            scope.turns_left = agent.max_turns
            result = await scheduled.run_scoped(results, scope)
            _collect(result, calls, outputs)
    except RunPaused as paused:
        state: RunState = paused.state
        waiting = "; ".join(p.prompt() for p in state.pending)
        used = scope.total_usage.total_tokens
        return ScheduledOutcome(f"Waiting for approval: {waiting}", used, paused=state)
    finally:
        await background.close()
    return ScheduledOutcome(
        str(result.output),
        scope.total_usage.total_tokens,
        tuple(calls[:MAX_RECORDED_CALLS]),
        tuple(outputs),
    )


def _collect(result: Any, calls: list[TaskToolCall], outputs: list[UserOutput]) -> None:
    for invocation in result.invocations:
        error = "" if invocation.ok else (str(invocation.error or invocation.result.text))[:500]
        calls.append(TaskToolCall(invocation.name, invocation.ok, invocation.duration, error))
    outputs.extend(result.user_outputs)
