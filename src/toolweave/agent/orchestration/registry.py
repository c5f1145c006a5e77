"""The agent's tools with the tools that run children added: `subagent_run` and the team tools
when `Children` switches them on, in a layer over the agent's registry."""

from __future__ import annotations

from toolweave.agent.orchestration.children import Children
from toolweave.errors import ConfigError
from toolweave.tools import ToolRegistry

__all__ = ["children_registry"]


def children_registry(registry: ToolRegistry, children: Children) -> ToolRegistry:
    """The agent's tools plus `subagent_run` and the team tools when they are switched on, in a
    layer over the caller's registry (which is never modified)."""
    if not children.subagents:
        return registry
    from toolweave.agent.orchestration.subagents import subagent_tool
    from toolweave.agent.orchestration.team_tools import team_tools

    tools = [subagent_tool(), *(team_tools() if children.teams is not None else [])]
    clash = sorted(t.name for t in tools if t.name in registry)
    if clash:
        raise ConfigError(
            f"Agent(tools=...) already has tools named {clash}, which subagents/teams register; "
            "rename yours or turn subagents/teams off"
        )
    layer = registry.overlay()
    for tool in tools:
        layer.register(tool)
    return layer
