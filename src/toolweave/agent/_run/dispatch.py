"""One tool call of the agent through the call chain (`toolweave.tools.calls`).

The chain is the run's governance (`GovernanceMiddleware`: plan mode, the agent's gates, rules,
hooks, approvals, `ApprovalRequired`, PostToolUse), then the call's start event, around
`ToolRegistry.run_call`. Each call of a turn runs this concurrently, so a call waiting for a
person never holds up the others. The loop keeps what must see the whole turn (the instant
prechecks, ordering results, ending the run on a non-recoverable refusal).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolweave.agent._run.result_pages import ResultPages
from toolweave.agent._run.shape import error_part, result_part
from toolweave.governance.approvals import ApprovalRequest
from toolweave.governance.errors import ApprovalDeferred, CallBlocked, GovernanceError
from toolweave.governance.middleware import GovernanceMiddleware
from toolweave.llm import TextPart, ToolCallPart, ToolResultPart
from toolweave.tools import (
    Tool,
    ToolContext,
    ToolError,
    ToolInvocation,
    ToolRegistry,
    truncate_text,
)
from toolweave.tools.calls import CallHandler, CallMiddleware, ToolCall, chain


@dataclass
class CallOutcome:
    """What one call produced: the result the model reads, the invocation (None when the call
    never ran), a `refusal` when the run must end (non-recoverable), and `deferred`, the
    question an approver will answer later (the call did not run; the run pauses)."""

    part: ToolResultPart
    invocation: ToolInvocation | None = None
    refusal: Exception | None = None
    deferred: ApprovalRequest | None = None


@dataclass(frozen=True)
class CallSetup:
    """The run-wide pieces a call needs; `traced` is the run's tracing stage (innermost, so the
    tool runs with its span current), None when the run is not traced."""

    registry: ToolRegistry
    governance: GovernanceMiddleware
    max_chars: int
    pages: ResultPages | None
    on_started: Callable[[ToolCallPart], None]
    on_blocked: Callable[[ToolCallPart, CallBlocked], None]
    traced: CallMiddleware | None = None


@dataclass(frozen=True, slots=True)
class _Started:
    """The innermost stage: the call's start event, once, right before the tool first runs."""

    on_started: Callable[[ToolCallPart], None]
    part: ToolCallPart

    async def __call__(self, call: ToolCall, next: CallHandler) -> ToolInvocation:
        if call.invocation is None:
            self.on_started(self.part)
        return await next(call)


async def dispatch_call(
    setup: CallSetup,
    part: ToolCallPart,
    tool: Tool | None,
    ctx: ToolContext,
    timeout: float | None,
) -> CallOutcome:
    """Run `part` through the chain; `timeout` bounds running the tool (None for tools that keep
    their own budget: subagent_run, team_run)."""
    call = ToolCall(part.name, part.id, part.arguments, tool, ctx, timeout)
    stages: list[CallMiddleware] = [setup.governance, _Started(setup.on_started, part)]
    if setup.traced is not None:
        stages.append(setup.traced)
    handler = chain(stages, setup.registry.run_call)
    try:
        inv = await handler(call)
    except ApprovalDeferred as later:
        text = f"Waiting for approval: {later.request.reason}"
        return CallOutcome(error_part(part, text, setup.max_chars), deferred=later.request)
    except CallBlocked as blocked:
        setup.on_blocked(part, blocked)
        text = blocked.reason if blocked.stage == "gate" else blocked.message
        return CallOutcome(error_part(part, text, setup.max_chars), call.invocation)
    except (GovernanceError, ToolError) as stop:
        return CallOutcome(error_part(part, stop.message, setup.max_chars), refusal=stop)
    result = result_part(part, inv, setup.max_chars, setup.pages, ctx.session_id)
    if call.notes:
        result = _with_notes(result, call.notes, setup.max_chars)
    return CallOutcome(result, inv, refusal=call.stop)


async def invoke_all(ctx: ToolContext, tasks: list[asyncio.Task[CallOutcome]]) -> list[CallOutcome]:
    """Await a turn's calls. If that is interrupted (cancellation, or a call failing outside the
    registry's error handling), the tools' signal (`ctx`) fires first and they get one loop
    iteration to notice it (cooperative tools stop cleanly, threads see `ctx.cancelled`);
    then the rest are cancelled and awaited, so nothing outlives the run."""
    try:
        return await asyncio.shield(asyncio.gather(*tasks))
    except BaseException:
        ctx.cancel()
        try:
            await asyncio.sleep(0)
        finally:  # a second cancellation must not leave the tools running
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _with_notes(part: ToolResultPart, notes: list[str], max_chars: int) -> ToolResultPart:
    """The result with what PostToolUse hooks want the model to read appended."""
    text = truncate_text("\n".join(notes), max_chars)
    content = part.content
    if isinstance(content, str):
        merged: Any = f"{content}\n\n{text}" if content else text
    else:
        merged = [*content, TextPart(text)]
    return ToolResultPart(part.call_id, part.name, merged, is_error=part.is_error)
