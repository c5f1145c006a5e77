"""One tool call of the agent through the call chain (`toolweave.tools.calls`).

The chain is the run's governance (`GovernanceMiddleware`: plan mode, the agent's gates, rules,
hooks, approvals, `ApprovalRequired`, PostToolUse), then the call's start event, around
`ToolRegistry.run_call`. Each call of a turn runs this concurrently, so a call waiting for a
person never holds up the others. The loop keeps what must see the whole turn (the instant
prechecks, ordering results, ending the run on a non-recoverable refusal).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolweave.agent._run.result_pages import ResultPages
from toolweave.agent._run.shape import error_part, result_part
from toolweave.governance.errors import CallBlocked, GovernanceError
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
from toolweave.tools.calls import CallHandler, ToolCall, chain


@dataclass
class CallOutcome:
    """What one call produced: the result the model reads, the invocation (None when the call
    never ran) and a `refusal` when the run must end (non-recoverable)."""

    part: ToolResultPart
    invocation: ToolInvocation | None = None
    refusal: Exception | None = None


@dataclass(frozen=True)
class CallSetup:
    """The run-wide pieces a call needs."""

    registry: ToolRegistry
    governance: GovernanceMiddleware
    max_chars: int
    pages: ResultPages | None
    on_started: Callable[[ToolCallPart], None]
    on_blocked: Callable[[ToolCallPart, CallBlocked], None]


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
    handler = chain([setup.governance, _Started(setup.on_started, part)], setup.registry.run_call)
    try:
        inv = await handler(call)
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


def _with_notes(part: ToolResultPart, notes: list[str], max_chars: int) -> ToolResultPart:
    """The result with what PostToolUse hooks want the model to read appended."""
    text = truncate_text("\n".join(notes), max_chars)
    content = part.content
    if isinstance(content, str):
        merged: Any = f"{content}\n\n{text}" if content else text
    else:
        merged = [*content, TextPart(text)]
    return ToolResultPart(part.call_id, part.name, merged, is_error=part.is_error)
