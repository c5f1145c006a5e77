"""Subagents: a run delegates a self-contained task to a fresh, disposable agent.

A subagent has no history and cannot start subagents or teams (those tools are never in its
set, and depth is capped); its intermediate text is dropped and only its final answer comes
back, prefixed with run metadata (duration, model calls, tokens) and truncated to
`subagent_max_result_chars`, so one delegation cannot flood the parent's context.

Timeout budget (`resolve_subagent_timeout`): the requested seconds are clamped to
[`MIN_SUBAGENT_TIMEOUT`, `MAX_SUBAGENT_TIMEOUT`] before any arithmetic, and when the parent run
has a deadline, `SUBAGENT_RESERVE` (30 s) is kept back so the parent can still answer. A
subagent that runs out of time comes back as a tool result saying so, never as a failure of the
parent. Cancelling the parent cancels the subagent (it runs inside the parent's tool call).
"""

from __future__ import annotations

import asyncio
import inspect
import math
import time
import uuid
from dataclasses import dataclass
from typing import Literal

from toolweave.agent.errors import AgentError
from toolweave.agent.orchestration.children import ORCHESTRATION_TOOLS, SubagentTools
from toolweave.agent.orchestration.errors import SubagentBudgetExhausted
from toolweave.agent.orchestration.settings import (
    MAX_SUBAGENT_DEPTH,
    SCOPE_EXTRA,
    AgentType,
    RunScope,
)
from toolweave.governance import GateContext
from toolweave.governance.errors import GovernanceError
from toolweave.llm import ModelError, Usage
from toolweave.mcp.shared.errors import MCPError
from toolweave.tools import (
    ExecutionFailed,
    Tool,
    ToolContext,
    ToolError,
    ToolRegistry,
    UserOutput,
    truncate_text,
)

SUBAGENT_RESERVE = 30.0
"""Seconds of the parent's deadline a subagent never gets: the parent's time to finish."""
MIN_SUBAGENT_TIMEOUT = 1.0
MAX_SUBAGENT_TIMEOUT = 3600.0
SESSION_TOOL_CATEGORIES = frozenset({"memory", "knowledge", "clock"})
"""Categories a `read_only` subagent keeps even when they write (they write the
session's own notes, memory and schedules, not the world). A tool is in one by the category it
declares (`FunctionTool(category=...)`, a `category` attribute, or `register(category=...)`),
never by its name."""
SUBAGENT_INSTRUCTIONS = (
    "You are a subagent: complete the task below on your own with the tools you have, then "
    "reply with a complete, self-contained final answer. Nobody sees your intermediate "
    "messages; only your final answer is returned to the agent that delegated the task."
)
SubagentStatus = Literal["success", "timeout", "error"]


def resolve_subagent_timeout(
    default: float, requested: float | None, deadline: float | None, now: float
) -> float:
    """The subagent's timeout in seconds (see the module docstring for the rules)."""
    seconds = default if requested is None else requested
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or math.isnan(seconds):
        raise ExecutionFailed(f"timeout_sec must be a number of seconds, got {requested!r}")
    seconds = min(max(float(seconds), MIN_SUBAGENT_TIMEOUT), MAX_SUBAGENT_TIMEOUT)
    if deadline is not None:
        left = deadline - now - SUBAGENT_RESERVE
        if left < MIN_SUBAGENT_TIMEOUT:
            raise SubagentBudgetExhausted(
                f"not enough time left to start a subagent ({max(deadline - now, 0):.0f}s left, "
                f"{SUBAGENT_RESERVE:.0f}s are kept to finish this run); answer with what you have"
            )
        seconds = min(seconds, left)
    return seconds


def subagent_registry(parent: ToolRegistry, tools: SubagentTools) -> ToolRegistry:
    """The tools a subagent gets from its parent's (session) registry.

    "inherit": all of them; "read_only": the read-only ones plus the session tools (memory,
    knowledge, clock); a list: exactly those names. Orchestration tools are always left out.
    """
    registry = ToolRegistry(policy=parent.policy)
    wanted = None if isinstance(tools, str) else set(tools)
    session_tools = {
        tool.name
        for category in SESSION_TOOL_CATEGORIES
        for tool in parent.find_by_category(category)
    }
    for tool in parent.tools():
        if tool.name in ORCHESTRATION_TOOLS:
            continue
        if wanted is not None:
            keep = tool.name in wanted
        elif tools == "read_only":
            keep = tool.annotations.read_only or tool.name in session_tools
        else:
            keep = True
        if keep:
            registry.register(tool)
    return registry


@dataclass(frozen=True, slots=True)
class SubagentResult:
    """A finished subagent: its answer (or why there is none) and what it cost."""

    name: str
    status: SubagentStatus
    output: str
    duration: float
    model_calls: int
    usage: Usage

    def render(self, limit: int) -> str:
        """The text the parent sees: one metadata line, then the answer cut to `limit`."""
        meta = (
            f"[subagent {self.name}: {self.status}, {self.duration:.1f}s, {self.model_calls} "
            f"model calls, {self.usage.total_tokens} tokens]"
        )
        return f"{meta}\n{truncate_text(self.output, limit)}"


def scope_of(ctx: ToolContext, tool: str) -> RunScope:
    scope = ctx.extras.get(SCOPE_EXTRA)
    if not isinstance(scope, RunScope):
        raise ExecutionFailed(f"{tool} can only run inside an agent run", tool=tool)
    if scope.depth >= MAX_SUBAGENT_DEPTH:
        raise ExecutionFailed(
            f"{tool} is not available to a subagent (depth {scope.depth}); do the work yourself",
            tool=tool,
        )
    return scope


async def run_subagent(
    scope: RunScope,
    ctx: ToolContext,
    task: str,
    *,
    name: str = "task",
    role: str | None = None,
    timeout_sec: float | None = None,
    agent_type: AgentType = "subagent",
) -> SubagentResult:
    """Run one subagent for the run described by `scope`. Its usage reaches the parent's as each
    model call finishes, so even a subagent that times out is counted."""
    from toolweave.agent.session import Session

    parent = scope.agent
    settings = parent.orchestration.children
    loop = asyncio.get_running_loop()
    timeout = resolve_subagent_timeout(
        settings.subagent_timeout, timeout_sec, scope.deadline, loop.time()
    )
    source = ctx.registry if ctx.registry is not None else parent.registry
    agent_id = f"{agent_type}-{name}-{uuid.uuid4().hex[:6]}"
    child = parent.child(
        model=settings.subagent_model or parent.model,
        registry=subagent_registry(source, settings.subagent_tools),
        instructions=SUBAGENT_INSTRUCTIONS if not role else f"{SUBAGENT_INSTRUCTIONS}\n\n{role}",
        max_turns=max(1, min(parent.max_turns, scope.turns_left or parent.max_turns)),
        agent_id=agent_id,
        agent_type=agent_type,
    )
    parent_session = scope.session
    # The parent's permission mode (plan mode stays on) and approval memory (its prompts are
    # asked one at a time with the parent's); a background subagent has no requester.
    session = Session(
        f"{parent_session.id}/{agent_id}",
        permission_mode=parent_session.permission_mode,
        requester=parent_session.requester,
    )
    session.approvals = parent_session.approvals
    child_scope = scope.child(child, session, agent_type, loop.time() + timeout, agent_id)
    started = time.perf_counter()
    status: SubagentStatus = "success"
    gate = GateContext.of(parent_session)
    who = {"agent_id": agent_id, "agent_type": agent_type}
    await parent.governance.fire("SubagentStart", gate, **who)
    try:
        async with asyncio.timeout(timeout):
            result = await child.run_scoped(task, child_scope, deps=ctx.deps)
            await _forward(result.user_outputs, ctx)
        output = str(result.output)
    except TimeoutError:
        status = "timeout"
        output = (
            f"The subagent did not finish within {timeout:.0f}s; its partial work is lost. "
            "Narrow the task or continue without it."
        )
    except (ToolError, GovernanceError, MCPError, AgentError, ModelError) as exc:
        status, output = "error", f"The subagent failed: {exc}"
    await parent.governance.fire(
        "SubagentStop", gate, **who, stop_hook_active=False, last_assistant_message=output
    )
    return SubagentResult(
        name,
        status,
        output,
        time.perf_counter() - started,
        child_scope.model_calls,
        child_scope.total_usage,
    )


async def _forward(outputs: list[UserOutput], ctx: ToolContext) -> None:
    """Files and images a subagent sent reach the parent's user."""
    sink = ctx.output_sink
    if sink is None:
        return
    for item in outputs:
        outcome = sink(item)
        if inspect.isawaitable(outcome):
            await outcome


def subagent_tool() -> Tool:
    """`subagent_run`; in a scheduled run it starts the subagent in the background."""
    from toolweave.tools import FunctionTool

    async def subagent_run(ctx: ToolContext, task: str, timeout_sec: float | None = None) -> str:
        """Delegate a self-contained task to a fresh subagent and get its final answer.

        The subagent starts with no memory of this conversation: put everything it needs in
        `task`. Use it for work that would take many tool calls, so they stay out of this
        conversation.

        Args:
            task: The complete task, with all context the subagent needs.
            timeout_sec: Seconds it may take (clamped to the time this run has left).
        """
        scope = scope_of(ctx, "subagent_run")
        if scope.background is not None:
            started: str = await scope.background.start(scope, ctx, task, timeout_sec)
            return started
        result = await run_subagent(scope, ctx, task, timeout_sec=timeout_sec)
        return result.render(scope.agent.orchestration.children.subagent_max_result_chars)

    return FunctionTool(subagent_run, category="orchestration")
