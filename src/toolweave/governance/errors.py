"""Why governance refused a call or a configuration.

`CallBlocked` and `HookStopped` are `ToolError`s, so a blocked call reaches the model as text
(or ends the run when it is not recoverable); the configuration errors are `ConfigError`s that
name the rule, hook or file at fault.
"""

from __future__ import annotations

from typing import Literal

from toolweave.errors import ConfigError
from toolweave.tools import ToolError

Stage = Literal["plan", "gate", "rules", "hook", "admin", "approval"]
"""Where a call was blocked ("gate" is a custom `ToolGate`)."""


class CallBlocked(ToolError):
    """A gate blocked the call before it ran; the model gets `reason` and may change course."""

    recoverable = True

    def __init__(self, stage: Stage, reason: str, *, tool: str) -> None:
        super().__init__(f"Tool '{tool}' was blocked ({stage}): {reason}", tool=tool)
        self.stage: Stage = stage
        self.reason = reason


class HookStopped(ToolError):
    """A hook answered `continue: false`: the run ends with its `stopReason`."""

    recoverable = False


class HookConfigError(ConfigError):
    """A hooks configuration is malformed; the message names the key and the fix."""


class RuleSyntaxError(ConfigError):
    """A permission rule (or a settings file holding rules) is malformed; the message names the
    rule, its file and the syntax to use."""
