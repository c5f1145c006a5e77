"""The agent loop: `Agent`, its runs, events, sessions and their stores, structured output.

`Agent` composes a `toolweave.llm.Model` with a `toolweave.tools.ToolRegistry`; everything a run
does is visible as typed events on `Agent.run_stream`. The capabilities an agent can be given
come from their own packages, each as one settings object: `toolweave.governance`,
`toolweave.agent.orchestration`, `toolweave.agent.tracing`, `toolweave.memory`,
`toolweave.skills`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "Agent": "toolweave.agent.agent",
    "RunResult": "toolweave.agent.result",
    "AgentError": "toolweave.agent.errors",
    "MaxTurnsExceeded": "toolweave.agent.errors",
    "OutputValidationError": "toolweave.agent.errors",
    "PromptBlocked": "toolweave.agent.errors",
    "SessionBusy": "toolweave.agent.errors",
    "Output": "toolweave.agent.output",
    "OutputMode": "toolweave.agent.output",
    "OutputSpec": "toolweave.agent.output",
    "Session": "toolweave.agent.session",
    "PostgresSessionStore": "toolweave.agent.stores",
    "SQLiteSessionStore": "toolweave.agent.stores",
    "SessionStore": "toolweave.agent.stores",
    "ToolSearch": "toolweave.tools.search_mode",
    "ContextEconomy": "toolweave.agent.economy",
}
_EXPORTS.update(
    {
        name: "toolweave.agent.events"
        for name in (
            "AgentEvent",
            "ModelTextDelta",
            "ModelThinkingDelta",
            "OutputDelta",
            "ProviderToolActivity",
            "ProviderToolActivity",
            "RunCompleted",
            "RunFailed",
            "RunStarted",
            "ToolCallBlocked",
            "ToolCallRequested",
            "ToolExecutionCompleted",
            "ToolExecutionStarted",
            "TurnCompleted",
            "UserOutputSent",
        )
    }
)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from toolweave.agent.agent import Agent
    from toolweave.agent.economy import ContextEconomy
    from toolweave.agent.errors import (
        AgentError,
        MaxTurnsExceeded,
        OutputValidationError,
        PromptBlocked,
        SessionBusy,
    )
    from toolweave.agent.events import (
        AgentEvent,
        ModelTextDelta,
        ModelThinkingDelta,
        OutputDelta,
        ProviderToolActivity,
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
    from toolweave.agent.output import Output, OutputMode, OutputSpec
    from toolweave.agent.result import RunResult
    from toolweave.agent.session import Session
    from toolweave.agent.stores import PostgresSessionStore, SessionStore, SQLiteSessionStore
    from toolweave.tools.search_mode import ToolSearch

__all__ = [
    "Agent",
    "AgentError",
    "AgentEvent",
    "ContextEconomy",
    "MaxTurnsExceeded",
    "ModelTextDelta",
    "ModelThinkingDelta",
    "Output",
    "OutputDelta",
    "OutputMode",
    "OutputSpec",
    "OutputValidationError",
    "PostgresSessionStore",
    "PromptBlocked",
    "ProviderToolActivity",
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
    "ToolSearch",
    "TurnCompleted",
    "UserOutputSent",
]
