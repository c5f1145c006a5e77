"""Orchestration: one agent directing others and what limits its runs. `Children` (subagents,
teams) runs children; `RunLimits` (quota, query log, circuit breaker, todo reminders) limits a
run; slash `Commands`; `Orchestration` holds the three for `Agent(orchestration=...)`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "Children": "toolweave.agent.orchestration.children",
    "RunLimits": "toolweave.agent.orchestration.limits",
    "Orchestration": "toolweave.agent.orchestration.settings",
    "RunScope": "toolweave.agent.orchestration.settings",
    "CircuitBreaker": "toolweave.agent.orchestration.circuit",
    "BUILTIN_COMMANDS": "toolweave.agent.orchestration.slash_commands",
    "Command": "toolweave.agent.orchestration.slash_commands",
    "Commands": "toolweave.agent.orchestration.slash_commands",
    "SubagentResult": "toolweave.agent.orchestration.subagents",
    "GLOBAL_TEAM_SCOPE": "toolweave.agent.orchestration.teams",
    "MAX_TEAM_MEMBERS": "toolweave.agent.orchestration.teams",
    "Team": "toolweave.agent.orchestration.teams",
    "TeamMember": "toolweave.agent.orchestration.teams",
    "TeamStore": "toolweave.agent.orchestration.teams",
    "TodoReminders": "toolweave.agent.orchestration.todo_reminder",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from toolweave.agent.orchestration.children import Children
    from toolweave.agent.orchestration.circuit import CircuitBreaker
    from toolweave.agent.orchestration.limits import RunLimits
    from toolweave.agent.orchestration.settings import Orchestration, RunScope
    from toolweave.agent.orchestration.slash_commands import BUILTIN_COMMANDS, Command, Commands
    from toolweave.agent.orchestration.subagents import SubagentResult
    from toolweave.agent.orchestration.teams import (
        GLOBAL_TEAM_SCOPE,
        MAX_TEAM_MEMBERS,
        Team,
        TeamMember,
        TeamStore,
    )
    from toolweave.agent.orchestration.todo_reminder import TodoReminders

__all__ = [
    "BUILTIN_COMMANDS",
    "GLOBAL_TEAM_SCOPE",
    "MAX_TEAM_MEMBERS",
    "Children",
    "CircuitBreaker",
    "Command",
    "Commands",
    "Orchestration",
    "RunLimits",
    "RunScope",
    "SubagentResult",
    "Team",
    "TeamMember",
    "TeamStore",
    "TodoReminders",
]
