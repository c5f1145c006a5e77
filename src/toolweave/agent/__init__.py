"""The agent loop: `Agent`, its events, sessions, structured output and governance.

`Agent` composes a `toolweave.llm.Model` with a `toolweave.tools.ToolRegistry`; everything a run
does is visible as typed events on `Agent.run_stream`. Every tool call passes the gate pipeline
(`Governance`: `Rules`, `Hooks`, approvers, permission modes).
"""

from __future__ import annotations

from toolweave.storage.text import estimate_tokens

from .agent import Agent, OutputMode, RunResult
from .approvals import ApprovalRequest, ApprovalState, Approver
from .commands import BUILTIN_COMMANDS, Command, Commands
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
from .query_log import QueryLog, QueryRecord, QueryStatus
from .quota import Quota, QuotaExceeded, QuotaUsage
from .rules import Explanation, Rules, RuleSyntaxError
from .schedule_store import ScheduledTask, TaskRun
from .scheduler import Scheduler
from .session import Session
from .store import SessionStore, SQLiteSessionStore
from .teams import GLOBAL_TEAM_SCOPE, MAX_TEAM_MEMBERS, Team, TeamMember, TeamStore
from .trace_file import TraceSpan, read_spans
from .tracing import RunTrace, Tracing

__all__ = [
    "BUILTIN_COMMANDS",
    "GLOBAL_TEAM_SCOPE",
    "HOOK_EVENTS",
    "MAX_TEAM_MEMBERS",
    "PERMISSION_MODES",
    "Agent",
    "AgentError",
    "AgentEvent",
    "AgentIdentity",
    "ApprovalRequest",
    "ApprovalState",
    "Approver",
    "CallBlocked",
    "Command",
    "Commands",
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
    "QueryLog",
    "QueryRecord",
    "QueryStatus",
    "Quota",
    "QuotaExceeded",
    "QuotaUsage",
    "RuleSyntaxError",
    "Rules",
    "RunCompleted",
    "RunFailed",
    "RunResult",
    "RunStarted",
    "RunTrace",
    "SQLiteSessionStore",
    "ScheduledTask",
    "Scheduler",
    "Session",
    "SessionBusy",
    "SessionStore",
    "TaskRun",
    "Team",
    "TeamMember",
    "TeamStore",
    "ToolCallBlocked",
    "ToolCallRequested",
    "ToolExecutionCompleted",
    "ToolExecutionStarted",
    "ToolGate",
    "TraceSpan",
    "Tracing",
    "TurnCompleted",
    "UserOutputSent",
    "estimate_tokens",
    "read_spans",
]
