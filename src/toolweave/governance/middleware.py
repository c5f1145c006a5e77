"""Governance as one stage of the call chain (`toolweave.tools.calls`).

`GovernanceMiddleware` runs, for every governed call of the agent, a slash command's lines and
the tools `toolweave serve` publishes, in this order: plan mode (`Governance.precheck`), the
governance's own `ToolGate`s (the agent's circuit breaker among them), then `Governance.clear`
(rules, PreToolUse hooks, admin and user approval); then the tool runs (`next`, under the
call's own timeout, which therefore never covers the wait for a person); a tool raising
`ApprovalRequired` is put to the approver and, when approved, run once more; PostToolUse hooks
come last: their context and block reason become `call.notes`, their `continue: false`
becomes `call.stop`.

A refusal before the tool ran raises `CallBlocked` (recoverable: the model reads why),
`HookStopped` or a gate's non-recoverable `ToolError` (the caller's run ends). Arguments that do
not parse skip governance: the terminal answers with the validation error and nothing runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolweave.governance.approvals import ApprovalState
from toolweave.governance.errors import CallBlocked, HookStopped
from toolweave.governance.gates import GateRequest, GovernedSession, clear_call
from toolweave.governance.pipeline import GateContext, Governance, PermissionMode
from toolweave.llm import ToolCallPart
from toolweave.tools import (
    ApprovalRequired,
    InvalidArguments,
    ToolInvocation,
    ToolRegistry,
    parse_arguments,
)
from toolweave.tools.calls import CallHandler, ToolCall

__all__ = ["CallGovernance", "GovernanceMiddleware"]

CallGovernance = Callable[[ToolCall], tuple[Governance, GateContext]]
"""The pipeline and gate context one call is decided with, read when the call arrives (the
session's mode may change during a run; the host asks each call's own MCP client)."""


@dataclass(frozen=True, slots=True)
class _GateSession:
    """What gates read as the session when the caller has no `Session` (the host): the gate
    context's own view."""

    gate: GateContext

    @property
    def id(self) -> str:
        return self.gate.session_id or ""

    @property
    def permission_mode(self) -> PermissionMode:
        return self.gate.mode

    @property
    def approvals(self) -> ApprovalState:
        return self.gate.state

    @property
    def requester(self) -> str | None:
        return self.gate.requester


@dataclass(frozen=True, slots=True)
class GovernanceMiddleware:
    """The governance stage (see the module docstring). The governance's own `gates` read a
    `GateRequest` naming `registry` and the caller's `session` (by default a view of the gate
    context)."""

    resolve: CallGovernance
    registry: ToolRegistry
    session: Callable[[GateContext], GovernedSession] = _GateSession

    async def __call__(self, call: ToolCall, next: CallHandler) -> ToolInvocation:
        governance, gate = self.resolve(call)
        name, tool = call.name, call.tool
        governance.precheck(name, tool, gate, call.args if isinstance(call.args, dict) else None)
        if governance.gates:
            asked = call.args if isinstance(call.args, dict) else {}
            part = ToolCallPart(call.call_id or "", name, asked)
            request = GateRequest(part, tool, self.registry, self.session(gate))
            refusal = await clear_call(governance.gates, request)
            if refusal is not None:
                if refusal.recoverable:
                    raise CallBlocked("gate", refusal.message, tool=name)
                raise refusal
        try:
            args = parse_arguments(call.args, name)
        except InvalidArguments:
            return await next(call)
        args = (await governance.clear(name, call.call_id, args, tool, gate)).args
        call.args = args
        call.ctx.tool_call_cleared = True  # the built-in shell runs only cleared calls
        inv = await next(call)
        if isinstance(inv.error, ApprovalRequired):
            await governance.approve_request(inv.error, name, call.call_id, args, tool, gate)
            call.ctx.tool_call_approved = True
            inv = await next(call)
        error = inv.error.message if inv.error is not None else None
        result = inv.result
        response: Any = result.structured if result.structured is not None else result.text
        outcome = await governance.after(
            name, call.call_id, args, tool, gate, response=response, error=error
        )
        if outcome is not None:
            call.notes.extend(outcome.context)
            if outcome.blocked and outcome.reason:
                call.notes.append(outcome.reason)
            if outcome.stop:
                call.stop = HookStopped(outcome.stop_reason, tool=name)
        return inv
