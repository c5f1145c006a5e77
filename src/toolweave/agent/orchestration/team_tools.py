"""The team tools: `team_run` runs members in parallel as subagents; save, list, delete teams.

Each member is a subagent run with its role prompt; all members of a `team_run` start at once
(at most `MAX_TEAM_MEMBERS`, the hard cap against concurrency storms) and their answers are
collected per member, in the order the members were given. Teams are saved per session (the
calling session's id) or globally (`scope="global"`); a session's team shadows a global one of
the same name. Team members cannot form teams or start subagents of their own.
"""

from __future__ import annotations

import asyncio
import builtins
from typing import Any, Literal

from toolweave.agent.orchestration.settings import RunScope
from toolweave.agent.orchestration.subagents import run_subagent, scope_of
from toolweave.agent.orchestration.teams import (
    GLOBAL_TEAM_SCOPE,
    TeamMember,
    TeamStore,
    parse_members,
)
from toolweave.tools import ExecutionFailed, FunctionTool, Tool, ToolContext


def _store(scope: RunScope) -> TeamStore:
    store = scope.agent.orchestration.children.teams
    if store is None:
        raise ExecutionFailed(
            "teams are not enabled for this agent (Agent(orchestration=Children(teams=True)))"
        )
    return store


def _session_scope(ctx: ToolContext) -> str:
    return ctx.session_id or GLOBAL_TEAM_SCOPE


async def _members(
    scope: RunScope, ctx: ToolContext, members: Any, team: str | None
) -> tuple[TeamMember, ...]:
    if (members is None) == (team is None):
        raise ExecutionFailed("team_run needs exactly one of `members` or `team` (a saved team)")
    if team is not None:
        saved = await _store(scope).get(team, scope=_session_scope(ctx))
        if saved is None:
            raise ExecutionFailed(f"no saved team {team!r}; see team_list")
        return saved.members
    try:
        return parse_members(members)
    except ValueError as exc:
        raise ExecutionFailed(str(exc)) from None


def team_tools() -> list[Tool]:
    async def team_run(
        ctx: ToolContext,
        task: str,
        members: builtins.list[dict[str, str]] | None = None,
        team: str | None = None,
        timeout_sec: float | None = None,
    ) -> str:
        """Run a team: every member works on `task` in parallel, each with its own role.

        Args:
            task: The shared task, with all context the members need (they see no history).
            members: Ad-hoc members as [{"name": ..., "role": ...}], at most 10.
            team: The name of a saved team instead of `members`.
            timeout_sec: Seconds each member may take (clamped to the time this run has left).
        """
        scope = scope_of(ctx, "team_run")
        chosen = await _members(scope, ctx, members, team)
        results = await asyncio.gather(
            *(
                run_subagent(
                    scope,
                    ctx,
                    task,
                    name=member.name,
                    role=f"Your role in the team, as {member.name}: {member.role}",
                    timeout_sec=timeout_sec,
                    agent_type="team_member",
                )
                for member in chosen
            )
        )
        limit = scope.agent.orchestration.children.subagent_max_result_chars
        sections = [f"## {r.name}\n{r.render(limit)}" for r in results]
        return f"Team results ({len(results)} members):\n\n" + "\n\n".join(sections)

    async def team_save(
        ctx: ToolContext,
        name: str,
        members: builtins.list[dict[str, str]],
        description: str = "",
        scope: Literal["session", "global"] = "session",
    ) -> str:
        """Save a team for later `team_run(team=name)` calls (replaces one of the same name).

        Args:
            name: Letters (any language), digits, '_' or '-'.
            members: [{"name": ..., "role": ...}], 1 to 10 members.
            description: What the team is for.
            scope: 'session' (this conversation only) or 'global' (every conversation).
        """
        run = scope_of(ctx, "team_save")
        where = GLOBAL_TEAM_SCOPE if scope == "global" else _session_scope(ctx)
        try:
            saved = await _store(run).save(name, members, description=description, scope=where)
        except ValueError as exc:
            raise ExecutionFailed(str(exc)) from None
        return f"saved team {saved.name!r} with {len(saved.members)} members ({scope})"

    async def team_list(ctx: ToolContext) -> builtins.list[dict[str, Any]]:
        """List the teams this conversation can use, sorted by name."""
        teams = await _store(scope_of(ctx, "team_list")).list(scope=_session_scope(ctx))
        return [t.to_dict() for t in teams]

    async def team_delete(
        ctx: ToolContext, name: str, scope: Literal["session", "global"] = "session"
    ) -> str:
        """Delete a saved team.

        Args:
            name: The team's name.
            scope: Where it was saved: 'session' or 'global'.
        """
        run = scope_of(ctx, "team_delete")
        where = GLOBAL_TEAM_SCOPE if scope == "global" else _session_scope(ctx)
        try:
            found = await _store(run).delete(name, scope=where)
        except ValueError as exc:
            raise ExecutionFailed(str(exc)) from None
        return f"deleted team {name!r}" if found else f"no team {name!r} saved in {scope} scope"

    return [
        FunctionTool(team_run, category="orchestration"),
        FunctionTool(team_save, category="orchestration"),
        FunctionTool(team_list, read_only=True, category="orchestration"),
        FunctionTool(team_delete, destructive=True, category="orchestration"),
    ]
