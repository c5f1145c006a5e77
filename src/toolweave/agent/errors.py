"""Why a run stopped without an answer.

Tool failures keep their own `ToolError` types (a run ended by a denial raises the
`PermissionDenied` itself); the classes here cover what only the loop can detect.
"""

from __future__ import annotations

from typing import Any

from toolweave.errors import ToolweaveError


class AgentError(ToolweaveError):
    """Base of the loop's own failures."""


class MaxTurnsExceeded(AgentError):
    """The run used `max_turns` model calls without reaching an answer."""

    def __init__(self, max_turns: int) -> None:
        super().__init__(
            f"the run reached max_turns={max_turns} model calls without a final answer; raise "
            "Agent(max_turns=...) or pass output_type=Output(on_max_turns='final_answer') to get "
            "a last answer without tools"
        )
        self.max_turns = max_turns


class OutputValidationError(AgentError):
    """The model's final answer did not match `output_type`, even after one correction."""

    def __init__(self, message: str, raw: str) -> None:
        super().__init__(message)
        self.raw = raw


class SessionBusy(AgentError):
    """Two runs tried to use one session at the same time; histories would interleave."""


class PromptBlocked(AgentError):
    """A UserPromptSubmit hook blocked the prompt; the model was never called."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"the prompt was blocked by a UserPromptSubmit hook: {reason}")
        self.reason = reason


class RunPaused(AgentError):
    """The run stopped to wait for answers (an approver deferred, `defer_approval`). `state` is
    the `RunState` to save (`state.to_json()`) and finish later with `Agent.resume` (typed
    `Any` here only because `toolweave.agent.run_state` imports this module)."""

    def __init__(self, state: Any) -> None:
        names = ", ".join(p.tool_name for p in state.pending)
        super().__init__(
            f"the run paused for {len(state.pending)} approval(s) ({names}); save "
            "`error.state.to_json()` and finish it with `agent.resume(state, approvals=...)`"
        )
        self.state: Any = state

    def __reduce__(self) -> tuple[type[RunPaused], tuple[Any]]:
        """Pickled with its state (DBOS stores a durable run's error this way)."""
        return (RunPaused, (self.state,))


class RunStateError(AgentError):
    """A saved `RunState` cannot be resumed here: it was changed after it was saved, or it
    belongs to another agent configuration; the message names what differs."""
