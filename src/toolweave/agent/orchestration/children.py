"""What runs children: `Children`, the settings for subagents and teams.

`Children(subagents=True)` adds `subagent_run` to an agent's tools (a fresh, disposable agent
for a self-contained task); `Children(teams=True)` adds the team tools (`team_run` runs members
in parallel as subagents) and implies subagents. The tools are registered in the agent's own
layer over its registry (`registry.children_registry`), and they start each child through the
agent of the calling run (`RunScope.agent`), so the settings never hold an agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from toolweave.agent.orchestration.teams import TeamStore
from toolweave.errors import ConfigError
from toolweave.llm import Model

SubagentTools = Literal["inherit", "read_only"] | Sequence[str]

DEFAULT_SUBAGENT_TIMEOUT = 120.0
DEFAULT_SUBAGENT_MAX_RESULT_CHARS = 4000
MIN_SUBAGENT_RESULT_CHARS = 200
MAX_SUBAGENT_SETTING_TIMEOUT = 86400.0

ORCHESTRATION_TOOLS = frozenset(
    {
        "subagent_run",
        "subagent_list",
        "subagent_cancel",
        "team_run",
        "team_save",
        "team_list",
        "team_delete",
    }
)
"""Never offered to a subagent or team member: no recursion."""


@dataclass(frozen=True, init=False)
class Children:
    """How one agent starts others (`Agent(orchestration=Children(...))`). Every setting is
    checked here, so a typo fails at construction naming the field.

    `subagents` adds `subagent_run`, run on `subagent_model` (None: the agent's own; a model
    string is resolved) with `subagent_tools` ("read_only", "inherit" or a list of tool
    names), each within `subagent_timeout` seconds and its answer cut to
    `subagent_max_result_chars`. `teams` (True: in memory, or a `TeamStore`) adds the team
    tools and implies subagents. The agents one `Children` is given to share its team store.
    """

    subagents: bool
    subagent_model: Model | None
    subagent_tools: Literal["inherit", "read_only"] | tuple[str, ...]
    subagent_timeout: float
    subagent_max_result_chars: int
    teams: TeamStore | None

    def __init__(
        self,
        *,
        subagents: bool = False,
        subagent_model: Model | str | None = None,
        subagent_tools: SubagentTools = "read_only",
        subagent_timeout: float = DEFAULT_SUBAGENT_TIMEOUT,
        subagent_max_result_chars: int = DEFAULT_SUBAGENT_MAX_RESULT_CHARS,
        teams: bool | TeamStore = False,
    ) -> None:
        if isinstance(subagent_model, str):
            from toolweave.llm import model_from_string

            subagent_model = model_from_string(subagent_model)
        if subagent_model is not None and not isinstance(subagent_model, Model):
            raise TypeError("Children(subagent_model=...) must be a Model, a model string or None")
        tools: Literal["inherit", "read_only"] | tuple[str, ...]
        if isinstance(subagent_tools, str):
            if subagent_tools not in ("inherit", "read_only"):
                raise ConfigError(
                    f"Children(subagent_tools={subagent_tools!r}) must be 'inherit', "
                    "'read_only' or a list of tool names"
                )
            tools = "inherit" if subagent_tools == "inherit" else "read_only"
        elif not all(isinstance(n, str) for n in subagent_tools):
            raise TypeError("Children(subagent_tools=[...]) must list tool names (strings)")
        else:
            tools = tuple(subagent_tools)
        if not 0 < subagent_timeout <= MAX_SUBAGENT_SETTING_TIMEOUT:
            raise ConfigError(
                f"Children(subagent_timeout=...) must be between 0 and "
                f"{MAX_SUBAGENT_SETTING_TIMEOUT:.0f} seconds, got {subagent_timeout!r}"
            )
        if subagent_max_result_chars < MIN_SUBAGENT_RESULT_CHARS:
            raise ConfigError(
                f"Children(subagent_max_result_chars=...) must be at least "
                f"{MIN_SUBAGENT_RESULT_CHARS}, got {subagent_max_result_chars!r}"
            )
        if teams is True:
            teams = TeamStore()  # in memory; pass TeamStore(path) to keep teams across restarts
        if teams is not False and not isinstance(teams, TeamStore):
            raise TypeError(
                f"Children(teams=...) must be True, False or a TeamStore, got {teams!r}"
            )
        values: dict[str, Any] = {
            "subagents": bool(subagents) or teams is not False,
            "subagent_model": subagent_model,
            "subagent_tools": tools,
            "subagent_timeout": float(subagent_timeout),
            "subagent_max_result_chars": subagent_max_result_chars,
            "teams": teams or None,
        }
        for key, value in values.items():
            object.__setattr__(self, key, value)

    @property
    def budgeted_tools(self) -> frozenset[str]:
        """Tools that enforce their own time budget (the subagent timeout, clamped to the
        run's deadline), so the per-call `tool_timeout` does not cut them short."""
        return ORCHESTRATION_TOOLS if self.subagents else frozenset()
