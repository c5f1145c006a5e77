"""`allowed_tools` enforcement: while a skill is active, only its tools are offered and run.

`skill_read` activates a skill in the run's shared state; from then on the agent offers only
the tools the skill allows (plus the skill tools themselves) and refuses any other call with an
error naming the allowed ones. A skill without `allowed-tools` restricts nothing. Entries match
by name, by glob (`mcp__github__*`) or by Claude Code's `Tool(pattern)` form (the tool part).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from typing import Any

from toolweave.tools.errors import PermissionDenied

ACTIVE_SKILL_KEY = "toolweave.skills.active"
"""The `ToolContext.state` key holding the active skill's name and allowed tools."""
SKILL_TOOL_NAMES = frozenset(
    {
        "skill_read",
        "skill_resource",
        "skill_data",
        "skill_reload",
        "skill_run",
        "skill_list",
        "skill_install",
        "skill_remove",
    }
)
"""The skills package's own tools, always allowed while a skill is active."""


def activate(state: dict[str, Any], name: str, allowed_tools: list[str]) -> None:
    """Make `name` the active skill of the run that owns `state`."""
    state[ACTIVE_SKILL_KEY] = {"name": name, "allowed_tools": list(allowed_tools)}


def deactivate(state: dict[str, Any]) -> None:
    state.pop(ACTIVE_SKILL_KEY, None)


def active_skill(state: Mapping[str, Any]) -> tuple[str, list[str]] | None:
    """(name, allowed tools) of the active skill, or None."""
    entry = state.get(ACTIVE_SKILL_KEY)
    if not isinstance(entry, dict):
        return None
    return str(entry["name"]), list(entry["allowed_tools"])


def tool_allowed(tool_name: str, allowed_tools: list[str]) -> bool:
    """Whether `allowed_tools` (empty = no restriction) lets `tool_name` run."""
    if not allowed_tools or tool_name in SKILL_TOOL_NAMES:
        return True
    for entry in allowed_tools:
        pattern = entry.split("(", 1)[0].strip()
        if pattern == tool_name or fnmatch.fnmatchcase(tool_name, pattern):
            return True
    return False


def check_allowed(tool_name: str, state: Mapping[str, Any]) -> None:
    """Raise `PermissionDenied` naming the allowed tools if the active skill forbids the call."""
    active = active_skill(state)
    if active is None or tool_allowed(tool_name, active[1]):
        return
    name, allowed = active
    raise PermissionDenied(
        f"tool {tool_name!r} is not allowed while skill {name!r} is active; allowed tools: "
        f"{', '.join(sorted(set(allowed) | {'skill_*'}))}",
        tool=tool_name,
        permission=f"skill:{name}",
    )
