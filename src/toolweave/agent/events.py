"""The typed events `Agent.run_stream` yields, in the order a run produces them.

A run is `RunStarted`, then per turn the model's `TextDelta`s / `ThinkingDelta`s (and
`OutputDelta`s with partial structured output), a `ToolCallRequested` per call, then
`ToolExecutionStarted` / `ToolExecutionCompleted` per executed call (completions arrive as calls
finish; all calls of a turn run concurrently) with any `UserMessage`s tools send meanwhile,
then `TurnCompleted(reason)`; finally exactly one `RunCompleted` or `RunFailed`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from toolweave.llm import ToolCallPart, ToolResultPart, Usage
from toolweave.tools import ToolError, UserOutput

if TYPE_CHECKING:
    from .agent import RunResult

TurnReason = Literal["tool_calls", "stop", "length", "content_filter", "error", "retry"]


@dataclass(frozen=True, slots=True)
class RunStarted:
    run_id: str
    session_id: str
    prompt: str


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A fragment of the model's answer text."""

    text: str
    turn: int


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """A fragment of the model's visible reasoning (providers that expose it)."""

    text: str
    turn: int


@dataclass(frozen=True, slots=True)
class OutputDelta:
    """The structured output parsed so far (partial JSON, completed leniently)."""

    partial: Any
    turn: int


@dataclass(frozen=True, slots=True)
class ToolCallRequested:
    call: ToolCallPart
    turn: int


@dataclass(frozen=True, slots=True)
class ToolExecutionStarted:
    call: ToolCallPart
    turn: int


@dataclass(frozen=True, slots=True)
class ToolExecutionCompleted:
    """A call finished; `result` is exactly what the model will read (shaped, wrapped)."""

    call: ToolCallPart
    result: ToolResultPart
    error: ToolError | None
    duration: float
    turn: int

    @property
    def is_error(self) -> bool:
        return self.result.is_error


@dataclass(frozen=True, slots=True)
class UserMessage:
    """Text, an image or a file a tool sent to the user while it ran (`ctx.send_*`)."""

    output: UserOutput
    tool: str | None

    @property
    def kind(self) -> Literal["text", "image", "file"]:
        return self.output.kind


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


@dataclass(frozen=True, slots=True)
class RunCompleted:
    result: RunResult


@dataclass(frozen=True, slots=True)
class RunFailed:
    """The run ended without an answer; the stream raises `error` right after this event."""

    error: BaseException


AgentEvent: TypeAlias = (
    RunStarted
    | TextDelta
    | ThinkingDelta
    | OutputDelta
    | ToolCallRequested
    | ToolExecutionStarted
    | ToolExecutionCompleted
    | UserMessage
    | TurnCompleted
    | RunCompleted
    | RunFailed
)
