"""The typed events `Agent.run_stream` yields, in the order a run produces them.

A run is `RunStarted`, then per turn the model's `ModelTextDelta`s / `ModelThinkingDelta`s
(and `OutputDelta`s with partial structured output), a `ToolCallRequested` per call, a
`ToolCallBlocked` for each call the gate pipeline stopped, then
`ToolExecutionStarted` / `ToolExecutionCompleted` per executed call (completions arrive as calls
finish; all calls of a turn run concurrently) with any `UserOutputSent`s tools send meanwhile,
then `TurnCompleted(reason)`; finally exactly one `RunCompleted` or `RunFailed`.

The model deltas are named apart from `toolweave.llm.TextDelta` / `ThinkingDelta` (what a
`Model` streams, without a turn) so an import never picks the wrong one. Every event has a
`kind` literal (`"run_started"`, `"model_text_delta"`, ...), so a stream serialises to a UI as
a tagged union: `{"kind": "tool_call_requested", ...}`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from toolweave.llm import ProviderToolPart, ToolCallPart, ToolResultPart, Usage
from toolweave.tools import ToolError, UserOutput

if TYPE_CHECKING:
    from toolweave.agent.result import RunResult

TurnReason = Literal["tool_calls", "stop", "length", "content_filter", "error", "retry"]


@dataclass(frozen=True, slots=True)
class RunStarted:
    run_id: str
    session_id: str
    prompt: str
    kind: Literal["run_started"] = field(default="run_started", init=False)


@dataclass(frozen=True, slots=True)
class ModelTextDelta:
    """A fragment of the model's answer text."""

    text: str
    turn: int
    kind: Literal["model_text_delta"] = field(default="model_text_delta", init=False)


@dataclass(frozen=True, slots=True)
class ModelThinkingDelta:
    """A fragment of the model's visible reasoning (providers that expose it)."""

    text: str
    turn: int
    kind: Literal["model_thinking_delta"] = field(default="model_thinking_delta", init=False)


@dataclass(frozen=True, slots=True)
class ProviderToolActivity:
    """A tool the provider ran itself (web search, code execution, ...): its call, result or
    citations. Shown, never gated: governance sees only the tools toolweave runs."""

    part: ProviderToolPart
    turn: int
    kind: Literal["provider_tool_activity"] = field(default="provider_tool_activity", init=False)


@dataclass(frozen=True, slots=True)
class OutputDelta:
    """The structured output parsed so far (partial JSON, completed leniently)."""

    partial: Any
    turn: int
    kind: Literal["output_delta"] = field(default="output_delta", init=False)


@dataclass(frozen=True, slots=True)
class ToolCallRequested:
    call: ToolCallPart
    turn: int
    kind: Literal["tool_call_requested"] = field(default="tool_call_requested", init=False)


@dataclass(frozen=True, slots=True)
class ToolCallBlocked:
    """The gate pipeline blocked a call before it ran: `stage` is which one ("plan", "rules",
    "hook", "admin", "approval", or "gate" for a custom gate) and `reason` what the model reads
    as the call's result."""

    call: ToolCallPart
    stage: str
    reason: str
    turn: int
    kind: Literal["tool_call_blocked"] = field(default="tool_call_blocked", init=False)


@dataclass(frozen=True, slots=True)
class ToolExecutionStarted:
    call: ToolCallPart
    turn: int
    kind: Literal["tool_execution_started"] = field(default="tool_execution_started", init=False)


@dataclass(frozen=True, slots=True)
class ToolExecutionCompleted:
    """A call finished; `result` is exactly what the model will read (shaped, wrapped)."""

    call: ToolCallPart
    result: ToolResultPart
    error: ToolError | None
    duration: float
    turn: int
    kind: Literal["tool_execution_completed"] = field(
        default="tool_execution_completed", init=False
    )

    @property
    def is_error(self) -> bool:
        return self.result.is_error


@dataclass(frozen=True, slots=True)
class UserOutputSent:
    """Text, an image or a file a tool sent to the user while it ran (`ctx.send_*`)."""

    output: UserOutput
    tool: str | None
    kind: Literal["user_output_sent"] = field(default="user_output_sent", init=False)


@dataclass(frozen=True, slots=True)
class TurnCompleted:
    """One model call and its tool calls are done and committed to the session.

    `reason`: "tool_calls" (the loop goes on), "stop" / "length" / "content_filter" (the final
    answer and why it ended), "retry" (the answer failed validation and the model is asked
    again), "error" (a tool failure ends the run).
    """

    turn: int
    reason: TurnReason
    usage: Usage
    kind: Literal["turn_completed"] = field(default="turn_completed", init=False)


@dataclass(frozen=True, slots=True)
class RunCompleted:
    result: RunResult
    kind: Literal["run_completed"] = field(default="run_completed", init=False)


@dataclass(frozen=True, slots=True)
class RunFailed:
    """The run ended without an answer; the stream raises `error` right after this event."""

    error: BaseException
    kind: Literal["run_failed"] = field(default="run_failed", init=False)


AgentEvent: TypeAlias = (
    RunStarted
    | ModelTextDelta
    | ModelThinkingDelta
    | ProviderToolActivity
    | OutputDelta
    | ToolCallRequested
    | ToolCallBlocked
    | ToolExecutionStarted
    | ToolExecutionCompleted
    | UserOutputSent
    | TurnCompleted
    | RunCompleted
    | RunFailed
)
