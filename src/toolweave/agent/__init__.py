"""The agent loop: `Agent`, its events, sessions, structured output and governance.

`Agent` composes a `toolweave.llm.Model` with a `toolweave.tools.ToolRegistry`; everything a run
does is visible as typed events on `Agent.run_stream`. Every tool call passes the gate pipeline
(`Governance`: `Rules`, `Hooks`, approvers, permission modes).
"""

from __future__ import annotations

from .agent import Agent, OutputMode, RunResult
from .approvals import ApprovalRequest, ApprovalState, Approver
from .errors import AgentError, MaxTurnsExceeded, OutputValidationError, PromptBlocked, SessionBusy
from .events import (
    AgentEvent,
    ModelTextDelta,
    ModelThinkingDelta,
    OutputDelta,
    RunCompleted,
    RunFailed,
    RunStarted,
    ToolCallBlocked,
    ToolCallRequested,
    ToolExecutionCompleted,
    ToolExecutionStarted,
    TurnCompleted,
    UserOutputSent,
)
from .gates import GateRequest, PolicyGate, ToolGate
from .governance import (
    PERMISSION_MODES,
    AgentIdentity,
    CallBlocked,
    GateContext,
    Governance,
    HookStopped,
    PermissionMode,
)
from .hooks import HOOK_EVENTS, HookConfigError, HookOutcome, Hooks
from .output import OutputSpec
from .postgres_store import PostgresSessionStore
from .rules import Explanation, Rules, RuleSyntaxError
from .session import Session, estimate_tokens
from .store import SessionStore, SQLiteSessionStore

__all__ = [
    "HOOK_EVENTS",
    "PERMISSION_MODES",
    "Agent",
    "AgentError",
    "AgentEvent",
    "AgentIdentity",
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
    "MaxTurnsExceeded",
    "ModelTextDelta",
    "ModelThinkingDelta",
    "OutputDelta",
    "OutputMode",
    "OutputSpec",
    "OutputValidationError",
    "PermissionMode",
    "PolicyGate",
    "PostgresSessionStore",
    "PromptBlocked",
    "RuleSyntaxError",
    "Rules",
    "RunCompleted",
    "RunFailed",
    "RunResult",
    "RunStarted",
    "SQLiteSessionStore",
    "Session",
    "SessionBusy",
    "SessionStore",
    "ToolCallBlocked",
    "ToolCallRequested",
    "ToolExecutionCompleted",
    "ToolExecutionStarted",
    "ToolGate",
    "TurnCompleted",
    "UserOutputSent",
    "estimate_tokens",
]
