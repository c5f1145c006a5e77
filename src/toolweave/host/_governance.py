"""Governance for `toolweave serve`: `[serve.rules]`, `[serve].hooks` and approval by MCP
elicitation.

A call whose decision is `ask` (or whose tool raises `ApprovalRequired`) is put to the person
through `elicitation/create` when the connected client declared the elicitation capability;
accepting approves, declining or cancelling denies. A client without elicitation gets a refusal
that says how to allow the call in toolweave.toml.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace
from typing import Any

from toolweave.governance.approvals import (
    ApprovalAnswer,
    ApprovalAudit,
    ApprovalRequest,
    ApprovalState,
    Approver,
    audited,
)
from toolweave.governance.hooks import Hooks
from toolweave.governance.middleware import GovernanceMiddleware
from toolweave.governance.pipeline import GateContext, Governance
from toolweave.governance.rules import Explanation
from toolweave.governance.visibility import denied_outright
from toolweave.host.config import HostConfig
from toolweave.mcp.server.context import Context
from toolweave.tools.base import Tool
from toolweave.tools.calls import ToolCall, call_rounds
from toolweave.tools.clients import client_key
from toolweave.tools.context import ToolContext
from toolweave.tools.registry import ToolRegistry

MAX_REMEMBERED_SESSIONS = 1024
"""Sessions whose "always" answers the host remembers (oldest forgotten first)."""

ALWAYS_FIELD = "always"
_APPROVAL_SCHEMA = {
    "type": "object",
    "properties": {
        ALWAYS_FIELD: {
            "type": "boolean",
            "title": "Always allow this tool in this session",
            "default": False,
        }
    },
}
_HINT = (
    "Connect with an MCP client that supports elicitation to be asked, or allow it in "
    'toolweave.toml with the line: [serve.rules] allow = [{rule}] (or default = "allow" to '
    "stop asking for shell, delete and destructive calls)."
)


class HostGovernance:
    """The host's pipeline: one `Governance` from toolweave.toml, asked per call with that
    call's client as the approver. `approver` (the web console's queue, with
    `[serve].console_approvals`) answers what no client can be asked, and admin-only calls.
    With `audit` (the host's accounting: its query log), every decision of the console or of
    a client's person is recorded, who decided included ("console", "elicitation:<client>")."""

    def __init__(
        self,
        config: HostConfig,
        approver: Approver | None = None,
        audit: ApprovalAudit | None = None,
    ) -> None:
        self.audit = audit
        if approver is not None and audit is not None:
            approver = audited(approver, audit, "console")
        hooks = Hooks.from_file(config.hooks, cwd=config.root) if config.hooks is not None else None
        self.governance = Governance(
            rules=config.rule_set(),
            hooks=hooks,
            approver=approver,
            admin_approver=approver,
            approval_hint=_HINT,
        )
        self._states: OrderedDict[str, ApprovalState] = OrderedDict()

    def denied_outright(self, name: str, tool: Tool) -> str | None:
        """The deny rule that refuses every call of `name` whatever its arguments (`bash`,
        `mcp__files`), or None: such a tool is not listed at all."""
        return denied_outright(self.governance.rules, name, tool)

    def middleware(self, registry: ToolRegistry) -> GovernanceMiddleware:
        """The host's governance stage of the call chain: each call decided with its own
        client as the approver (where it can be asked) and its MCP session's memory."""
        return GovernanceMiddleware(self._resolve, registry)

    def _resolve(self, call: ToolCall) -> tuple[Governance, GateContext]:
        governance = self.governance
        ctx = call.ctx
        approver = elicitation_approver(ctx)
        if approver is not None and self.audit is not None:
            approver = audited(approver, self.audit, _elicited_by)
        if approver is not None:
            governance = replace(governance, approver=approver)
        mode = governance.mode or "default"  # the mode every MCP session starts in
        # The requester is the client (its principal, else its address): the console's queue
        # caps what one client may have waiting.
        rounds = call_rounds(ctx)  # a retried input-required round goes on with the same call
        gate = GateContext(
            ctx.session_id,
            mode,
            self._state(ctx.session_id),
            requester=client_key(ctx),
            memo=rounds.memo if rounds is not None else None,
        )
        return governance, gate

    def _state(self, session_id: str | None) -> ApprovalState:
        if session_id is None:
            return ApprovalState()  # a stateless request: nothing to remember across calls
        state = self._states.pop(session_id, None) or ApprovalState()
        self._states[session_id] = state
        while len(self._states) > MAX_REMEMBERED_SESSIONS:
            self._states.popitem(last=False)
        return state

    def explain(self, name: str, tool: Tool, args: dict[str, Any]) -> Explanation:
        """What serving this call does, without running it: the decision `clear` acts on (the
        built-in shell's own lists are rules in the same set). `toolweave policy explain
        --config` prints exactly this."""
        return self.governance.decide(name, args, tool, GateContext(None))


def _elicited_by(request: ApprovalRequest) -> str:
    return f"elicitation:{request.requester or 'client'}"


def elicitation_approver(ctx: ToolContext) -> Approver | None:
    """An approver that asks the person behind this call's MCP client, or None when the client
    cannot be asked (it did not declare elicitation, or this is not an MCP call). A 2025 session
    gets an `elicitation/create` request; a 2026-07-28 request an input-required result, and
    its retry brings the answer."""
    if not isinstance(ctx, Context) or "elicitation" not in ctx.client_capabilities:
        return None
    elicit = ctx.elicit

    async def ask(request: ApprovalRequest) -> ApprovalAnswer:
        answer = await elicit(request.prompt(), _APPROVAL_SCHEMA)
        if not isinstance(answer, dict) or answer.get("action") != "accept":
            return False
        content = answer.get("content") or {}
        return "always" if content.get(ALWAYS_FIELD) is True else True

    return ask
