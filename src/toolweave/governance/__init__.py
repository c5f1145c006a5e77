"""Governance: may this tool call run? One pipeline decides, the cheapest stage first.

Plan mode, the permission policy, `Rules` (Claude Code's permission syntax), PreToolUse hooks
(`Hooks`, Claude Code's hooks format) and approvers. It sits below `toolweave.agent`: the agent
loop, the tool host and the CLI all ask the same `Governance`, and nothing here imports them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "PERMISSION_MODES": "toolweave.governance.pipeline",
    "AgentIdentity": "toolweave.governance.pipeline",
    "GateContext": "toolweave.governance.pipeline",
    "Governance": "toolweave.governance.pipeline",
    "PermissionMode": "toolweave.governance.pipeline",
    "CallBlocked": "toolweave.governance.errors",
    "HookConfigError": "toolweave.governance.errors",
    "HookStopped": "toolweave.governance.errors",
    "RuleSyntaxError": "toolweave.governance.errors",
    "ApprovalAudit": "toolweave.governance.approvals",
    "ApprovalRequest": "toolweave.governance.approvals",
    "ApprovalState": "toolweave.governance.approvals",
    "ApprovalDeferred": "toolweave.governance.errors",
    "defer_approval": "toolweave.governance.approvals",
    "Approver": "toolweave.governance.approvals",
    "audited": "toolweave.governance.approvals",
    "GateRequest": "toolweave.governance.gates",
    "ToolGate": "toolweave.governance.gates",
    "HOOK_EVENTS": "toolweave.governance.hooks",
    "HookOutcome": "toolweave.governance.hooks",
    "Hooks": "toolweave.governance.hooks",
    "Explanation": "toolweave.governance.rules",
    "Rules": "toolweave.governance.rules",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from toolweave.governance.approvals import (
        ApprovalAudit,
        ApprovalRequest,
        ApprovalState,
        Approver,
        audited,
        defer_approval,
    )
    from toolweave.governance.errors import (
        ApprovalDeferred,
        CallBlocked,
        HookConfigError,
        HookStopped,
        RuleSyntaxError,
    )
    from toolweave.governance.gates import GateRequest, ToolGate
    from toolweave.governance.hooks import HOOK_EVENTS, HookOutcome, Hooks
    from toolweave.governance.pipeline import (
        PERMISSION_MODES,
        AgentIdentity,
        GateContext,
        Governance,
        PermissionMode,
    )
    from toolweave.governance.rules import Explanation, Rules

__all__ = [
    "HOOK_EVENTS",
    "PERMISSION_MODES",
    "AgentIdentity",
    "ApprovalAudit",
    "ApprovalDeferred",
    "ApprovalRequest",
    "ApprovalState",
    "Approver",
    "CallBlocked",
    "Explanation",
    "GateContext",
    "GateRequest",
    "Governance",
    "HookConfigError",
    "HookOutcome",
    "HookStopped",
    "Hooks",
    "PermissionMode",
    "RuleSyntaxError",
    "Rules",
    "ToolGate",
    "audited",
    "defer_approval",
]
