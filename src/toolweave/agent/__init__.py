"""The agent loop: `Agent`, its events, sessions and structured output.

`Agent` composes a `toolweave.llm.Model` with a `toolweave.tools.ToolRegistry`; everything a run
does is visible as typed events on `Agent.run_stream`.
"""

from __future__ import annotations

from .agent import Agent, OutputMode, RunResult
from .errors import AgentError, MaxTurnsExceeded, OutputValidationError, SessionBusy
from .events import (
    AgentEvent,
    ModelTextDelta,
    ModelThinkingDelta,
    OutputDelta,
    RunCompleted,
    RunFailed,
    RunStarted,
    ToolCallRequested,
    ToolExecutionCompleted,
    ToolExecutionStarted,
    TurnCompleted,
    UserOutputSent,
)
from .gates import GateRequest, PolicyGate, ToolGate
from .output import OutputSpec
from .postgres_store import PostgresSessionStore
from .session import Session, estimate_tokens
from .store import SessionStore, SQLiteSessionStore

__all__ = [
    "Agent",
    "AgentError",
    "AgentEvent",
    "GateRequest",
    "MaxTurnsExceeded",
    "ModelTextDelta",
    "ModelThinkingDelta",
    "OutputDelta",
    "OutputMode",
    "OutputSpec",
    "OutputValidationError",
    "PolicyGate",
    "PostgresSessionStore",
    "RunCompleted",
    "RunFailed",
    "RunResult",
    "RunStarted",
    "SQLiteSessionStore",
    "Session",
    "SessionBusy",
    "SessionStore",
    "ToolCallRequested",
    "ToolExecutionCompleted",
    "ToolExecutionStarted",
    "ToolGate",
    "TurnCompleted",
    "UserOutputSent",
    "estimate_tokens",
]
