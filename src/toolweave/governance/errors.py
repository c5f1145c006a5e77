"""Why governance refused a call or a configuration.

`CallBlocked` and `HookStopped` are `GovernanceError`s, signals of the call chain's governance
stage, not failed tool calls: a blocked call reaches the model as text (`recoverable`), a
stopped one ends the run. The configuration errors are `ConfigError`s that name the rule, hook
or file at fault.
"""

from __future__ import annotations

from typing import Any, Literal

from toolweave.errors import ConfigError, ToolweaveError

Stage = Literal["plan", "policy", "gate", "rules", "hook", "admin", "approval"]
"""Where a call was blocked ("gate" is a custom `ToolGate`; "policy" the `PermissionPolicy` over
a tool's declared permissions, whose refusal ends an agent's run)."""


class GovernanceError(ToolweaveError):
    """Governance refused a call or stopped a run; `message` is written for the model and
    `tool` names the call's tool."""

    recoverable = False

    def __init__(self, message: str, *, tool: str | None = None) -> None:
        super().__init__(message)
        self.message, self.tool = message, tool


class CallBlocked(GovernanceError):
    """A gate blocked the call before it ran; the model gets `reason` and may change course."""

    recoverable = True

    def __init__(self, stage: Stage, reason: str, *, tool: str) -> None:
        super().__init__(f"Tool '{tool}' was blocked ({stage}): {reason}", tool=tool)
        self.stage: Stage = stage
        self.reason = reason


class HookStopped(GovernanceError):
    """A hook answered `continue: false`: the run ends with its `stopReason`."""

    recoverable = False
    stage: Stage = "hook"


class ApprovalDeferred(GovernanceError):
    """The approver will answer later (`defer_approval`): the call waits, unrun, and an agent run
    pauses with a saved `RunState` that `Agent.resume` finishes once the answer is in.
    `request` is the `ApprovalRequest` (typed `Any`: `approvals` imports this module)."""

    def __init__(self, request: Any) -> None:
        super().__init__(
            f"the approval of {request.tool_name!r} was deferred: {request.reason}",
            tool=request.tool_name,
        )
        self.request: Any = request

    def __reduce__(self) -> tuple[type[ApprovalDeferred], tuple[Any]]:
        return (ApprovalDeferred, (self.request,))


class HookConfigError(ConfigError):
    """A hooks configuration is malformed; the message names the key and the fix."""


class RuleSyntaxError(ConfigError):
    """A permission rule (or a settings file holding rules) is malformed; the message names the
    rule, its file and the syntax to use."""
