"""Typed outcomes of a failed tool call.

`recoverable` tells the agent loop what to do: a recoverable error goes back to the model as
text it can act on (fix the arguments, try again); any other error ends the run. The message of
every error is written for the model: it names what went wrong and how to recover.
"""

from __future__ import annotations

from toolweave.errors import ToolweaveError


class ToolError(ToolweaveError):
    """Base of every tool failure. Subclasses fix `recoverable`; the base defaults to False."""

    recoverable: bool = False

    def __init__(
        self, message: str, *, tool: str | None = None, recoverable: bool | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.tool = tool
        if recoverable is not None:
            self.recoverable = recoverable

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, tool={self.tool!r})"


class ToolNotFound(ToolError):
    """No tool of that name; the message lists what is available."""

    recoverable = False


class InvalidArguments(ToolError):
    """The arguments did not match the schema. The message names the field and what was expected."""

    recoverable = True


class ExecutionFailed(ToolError):
    """The tool raised. Carries the original exception's message (and the exception as cause)."""

    recoverable = True


class PermissionDenied(ToolError):
    """A permission policy or gate refused the call before it ran."""

    recoverable = False

    def __init__(
        self, message: str, *, tool: str | None = None, permission: str | None = None
    ) -> None:
        super().__init__(message, tool=tool)
        self.permission = permission


class SandboxUnavailable(PermissionDenied):
    """No OS sandbox can be made for a command here (bubblewrap missing, namespaces refused);
    the message says why and how to get one (`toolweave.tools.sandbox`)."""


class ApprovalRequired(ToolError):
    """Raised by a tool, before any side effect, to ask a person to approve this call.

    The gate pipeline catches it, asks the approver with `reason`, and on approval runs the call
    again with `ctx.tool_call_approved = True` (the tool then proceeds). Denied, timed out or with
    no approver configured, the call ends as this recoverable error, so the model can change plan.
    """

    recoverable = True

    def __init__(self, reason: str, *, tool: str | None = None) -> None:
        super().__init__(f"this call needs approval: {reason}", tool=tool)
        self.reason = reason


class ToolTimeout(ToolError):
    """The call ran past its timeout and was cancelled."""

    recoverable = True

    def __init__(self, message: str, *, tool: str | None = None, timeout: float) -> None:
        super().__init__(message, tool=tool)
        self.timeout = timeout


class ToolCancelled(ToolError):
    """The caller cancelled the call (the run was stopped)."""

    recoverable = False


class ShellParseError(ToolweaveError, ValueError):
    """The command line could not be parsed into simple commands; treat it as unknown.

    Not a `ToolError`: no tool call failed. The parser raises it to the governance rules, which
    fail closed (a command that cannot be checked is never allowed)."""


class WrapperError(ShellParseError):
    """A wrapper is missing the value one of its options needs."""
