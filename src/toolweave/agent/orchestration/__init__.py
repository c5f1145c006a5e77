"""Orchestration: one agent directing others. Subagents, teams, a circuit breaker for failing
tools, todo reminders and slash commands, gathered in one `Orchestration` settings object.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
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
    from toolweave.agent.orchestration.circuit import CircuitBreaker
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
    "CircuitBreaker",
    "Command",
    "Commands",
    "Orchestration",
    "RunScope",
    "SubagentResult",
    "Team",
    "TeamMember",
    "TeamStore",
    "TodoReminders",
]
