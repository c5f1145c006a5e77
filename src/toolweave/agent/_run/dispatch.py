"""One tool call's own task: custom gates, the waiting governance stages, execution, the
`ApprovalRequired` round trip and PostToolUse hooks.

Each call of a turn runs this concurrently, so a call waiting for a person never holds up the
others. The loop keeps what must see the whole turn (the instant prechecks, ordering results,
ending the run on a non-recoverable refusal).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from toolweave.agent._run.shape import error_part, result_part
from toolweave.governance.gates import GateRequest, ToolGate, clear_call
from toolweave.governance.pipeline import CallBlocked, GateContext, Governance, HookStopped
from toolweave.llm import TextPart, ToolCallPart, ToolResultPart
from toolweave.tools import (
    ApprovalRequired,
    InvalidArguments,
    Tool,
    ToolContext,
    ToolError,
    ToolInvocation,
    ToolRegistry,
    parse_arguments,
    truncate_text,
)


@dataclass
class CallOutcome:
    """What one call produced: the result the model reads, the invocation (None when the call
    never ran) and a `refusal` when the run must end (non-recoverable)."""

    part: ToolResultPart
    invocation: ToolInvocation | None = None
    refusal: ToolError | None = None


@dataclass(frozen=True)
class CallSetup:
    """The run-wide pieces a call needs."""

    registry: ToolRegistry
    governance: Governance
    gates: Sequence[ToolGate]
    timeout: float | None
    """Per-call seconds; None for tools that keep their own budget (subagent_run, team_run)."""
    max_chars: int
    on_started: Callable[[ToolCallPart], None]
    on_blocked: Callable[[ToolCallPart, CallBlocked], None]


async def dispatch_call(
    setup: CallSetup, call: ToolCallPart, tool: Tool | None, request: GateRequest,
    gate: GateContext, ctx: ToolContext,
) -> CallOutcome:  # fmt: skip
    refusal = await clear_call(setup.gates, request)
    if refusal is not None:
        if refusal.recoverable:
            blocked = CallBlocked("gate", refusal.message, tool=call.name)
            return _blocked(setup, call, blocked, text=refusal.message)
        return CallOutcome(error_part(call, refusal.message, setup.max_chars), refusal=refusal)
    governance = setup.governance
    args = _arguments(call)
    if args is not None:
        try:
            args = (await governance.clear(call.name, call.id, args, tool, gate)).args
            ctx.tool_call_cleared = True  # the built-in shell runs only cleared calls
        except CallBlocked as blocked:
            return _blocked(setup, call, blocked)
        except (HookStopped, ToolError) as stop:
            return CallOutcome(error_part(call, stop.message, setup.max_chars), refusal=stop)
    setup.on_started(call)
    arguments: Any = args if args is not None else call.arguments
    inv = await setup.registry.invoke(
        call.name, arguments, ctx, call_id=call.id, timeout=setup.timeout
    )
    if isinstance(inv.error, ApprovalRequired) and args is not None:
        try:
            await governance.approve_request(inv.error, call.name, call.id, args, tool, gate)
        except CallBlocked as blocked:
            return _blocked(setup, call, blocked, inv)
        ctx.tool_call_approved = True
        inv = await setup.registry.invoke(
            call.name, arguments, ctx, call_id=call.id, timeout=setup.timeout
        )
    part = result_part(call, inv, setup.max_chars)
    if args is None:
        return CallOutcome(part, inv)
    error = inv.error.message if inv.error is not None else None
    response = inv.result.structured if inv.result.structured is not None else inv.result.text
    outcome = await governance.after(
        call.name, call.id, args, tool, gate, response=response, error=error
    )
    if outcome is None:
        return CallOutcome(part, inv)
    notes = [*outcome.context, *([outcome.reason] if outcome.blocked and outcome.reason else [])]
    if notes:
        part = _with_notes(part, notes, setup.max_chars)
    if outcome.stop:
        return CallOutcome(part, inv, refusal=HookStopped(outcome.stop_reason, tool=call.name))
    return CallOutcome(part, inv)


def _arguments(call: ToolCallPart) -> dict[str, Any] | None:
    """The call's arguments as a dict, or None when they do not parse (the registry then
    answers with the validation error, and nothing runs)."""
    try:
        return parse_arguments(call.arguments, call.name)
    except InvalidArguments:
        return None


def _blocked(
    setup: CallSetup, call: ToolCallPart, blocked: CallBlocked,
    inv: ToolInvocation | None = None, *, text: str | None = None,
) -> CallOutcome:  # fmt: skip
    """The block as an event and as the call's result (`text`, else the block's message)."""
    setup.on_blocked(call, blocked)
    return CallOutcome(error_part(call, text or blocked.message, setup.max_chars), inv)


def _with_notes(part: ToolResultPart, notes: list[str], max_chars: int) -> ToolResultPart:
    """The result with what PostToolUse hooks want the model to read appended."""
    text = truncate_text("\n".join(notes), max_chars)
    content = part.content
    if isinstance(content, str):
        merged: Any = f"{content}\n\n{text}" if content else text
    else:
        merged = [*content, TextPart(text)]
    return ToolResultPart(part.call_id, part.name, merged, is_error=part.is_error)
