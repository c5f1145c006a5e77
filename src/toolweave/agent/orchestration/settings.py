"""The orchestration settings of one `Agent`, validated once, and the scope a run hands down.

`Orchestration` gathers the settings for subagents, teams, the circuit breaker, todo reminders,
quotas, slash commands and the query log (`Agent(orchestration=...)`), so the loop reads one
frozen value. A
`RunScope` is what a running tool (`subagent_run`, `team_run`) learns about the run that called
it: its deadline, depth, remaining turns, the chain of agents above it and where child usage is
added, so a child's budget is clamped to what its parent has left.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from toolweave.accounting.query_log import QueryLog
from toolweave.accounting.quota import Quota
from toolweave.agent.orchestration.circuit import (
    DEFAULT_CIRCUIT_FAILURES,
    DEFAULT_CIRCUIT_RECOVERY,
    CircuitBreaker,
)
from toolweave.agent.orchestration.slash_commands import Commands
from toolweave.agent.orchestration.teams import TeamStore
from toolweave.agent.orchestration.todo_reminder import TodoReminders, TodoSource
from toolweave.errors import ConfigError
from toolweave.llm import Model, Usage
from toolweave.tools import ToolRegistry

if TYPE_CHECKING:
    from toolweave.agent.result import RunResult
    from toolweave.agent.session import Session
    from toolweave.governance.pipeline import Governance

SubagentTools = Literal["inherit", "read_only"] | Sequence[str]
AgentType = Literal["main", "subagent", "team_member", "scheduled"]

DEFAULT_SUBAGENT_TIMEOUT = 120.0
DEFAULT_SUBAGENT_MAX_RESULT_CHARS = 4000
MAX_SUBAGENT_DEPTH = 1
"""How deep subagents nest: a subagent (depth 1) can start no subagents or teams of its own."""
SCOPE_EXTRA = "toolweave.run_scope"
"""The `ToolContext.extras` key of the calling run's `RunScope`."""


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
class Orchestration:
    """How one agent directs others; `Agent(orchestration=...)` takes one. Every setting is
    checked here, so a typo fails at construction naming the field.

    `subagents` adds `subagent_run` (a fresh subagent for a self-contained task) run on
    `subagent_model` (None: the agent's own; a model string is resolved) with `subagent_tools`
    ("read_only", "inherit" or a list of tool names), each within `subagent_timeout` seconds and
    its answer cut to `subagent_max_result_chars`. `teams` (True: in memory, or a `TeamStore`)
    adds the team tools and implies subagents. The circuit breaker refuses a tool after
    `circuit_failures` failures in a row in one session (None: off) for `circuit_recovery`
    seconds. `todos` (a `TodoStore`) reminds the model of unfinished todos; `quota` meters
    tokens and calls; `commands` (`Commands` or a {name: template} dict) expands slash
    commands; `query_log` records each run. The agents one `Orchestration` is given to share
    its circuit breaker, team store and reminders.
    """

    subagents: bool
    subagent_model: Model | None
    subagent_tools: Literal["inherit", "read_only"] | tuple[str, ...]
    subagent_timeout: float
    subagent_max_result_chars: int
    teams: TeamStore | None
    circuit: CircuitBreaker | None
    todos: TodoReminders | None
    quota: Quota | None
    commands: Commands | None
    query_log: QueryLog | None

    def __init__(
        self,
        *,
        subagents: bool = False,
        subagent_model: Model | str | None = None,
        subagent_tools: SubagentTools = "read_only",
        subagent_timeout: float = DEFAULT_SUBAGENT_TIMEOUT,
        subagent_max_result_chars: int = DEFAULT_SUBAGENT_MAX_RESULT_CHARS,
        teams: bool | TeamStore = False,
        circuit_failures: int | None = DEFAULT_CIRCUIT_FAILURES,
        circuit_recovery: float = DEFAULT_CIRCUIT_RECOVERY,
        todos: TodoSource | None = None,
        quota: Quota | None = None,
        commands: Commands | dict[str, Any] | None = None,
        query_log: QueryLog | None = None,
    ) -> None:
        if isinstance(subagent_model, str):
            from toolweave.llm import model_from_string

            subagent_model = model_from_string(subagent_model)
        if subagent_model is not None and not isinstance(subagent_model, Model):
            raise TypeError(
                "Orchestration(subagent_model=...) must be a Model, a model string or None"
            )
        tools: Literal["inherit", "read_only"] | tuple[str, ...]
        if isinstance(subagent_tools, str):
            if subagent_tools not in ("inherit", "read_only"):
                raise ConfigError(
                    f"Orchestration(subagent_tools={subagent_tools!r}) must be 'inherit', "
                    "'read_only' or a list of tool names"
                )
            tools = "inherit" if subagent_tools == "inherit" else "read_only"
        elif not all(isinstance(n, str) for n in subagent_tools):
            raise TypeError("Orchestration(subagent_tools=[...]) must list tool names (strings)")
        else:
            tools = tuple(subagent_tools)
        if not 0 < subagent_timeout <= 86400:
            raise ConfigError(
                "Orchestration(subagent_timeout=...) must be between 0 and 86400 seconds"
            )
        if subagent_max_result_chars < 200:
            raise ConfigError("Orchestration(subagent_max_result_chars=...) must be at least 200")
        if teams is True:
            teams = TeamStore()  # in memory; pass TeamStore(path) to keep teams across restarts
        if quota is not None and not isinstance(quota, Quota):
            raise TypeError(
                f"Orchestration(quota=...) must be a toolweave.accounting.Quota, got {quota!r}"
            )
        if query_log is not None and not isinstance(query_log, QueryLog):
            raise TypeError(f"Orchestration(query_log=...) must be a QueryLog, got {query_log!r}")
        if isinstance(commands, dict):
            commands = Commands(commands)
        if commands is not None and not isinstance(commands, Commands):
            raise TypeError(
                "Orchestration(commands=...) must be Commands or a {name: template} dict"
            )
        circuit = None
        if circuit_failures is not None:
            circuit = CircuitBreaker(circuit_failures, circuit_recovery)
        values: dict[str, Any] = {
            "subagents": bool(subagents) or teams is not False,
            "subagent_model": subagent_model,
            "subagent_tools": tools,
            "subagent_timeout": float(subagent_timeout),
            "subagent_max_result_chars": subagent_max_result_chars,
            "teams": teams or None,
            "circuit": circuit,
            "todos": TodoReminders(todos) if todos is not None else None,
            "quota": quota,
            "commands": commands,
            "query_log": query_log,
        }
        for key, value in values.items():
            object.__setattr__(self, key, value)

    @property
    def budgeted_tools(self) -> frozenset[str]:
        """Tools that enforce their own time budget (the subagent timeout, clamped to the
        run's deadline), so the per-call `tool_timeout` does not cut them short."""
        if not self.subagents:
            return frozenset()
        return ORCHESTRATION_TOOLS

    def child(self) -> Orchestration:
        """A subagent's settings: the same timeouts, circuit breaker and quota; no subagents,
        teams, reminders, commands or log of its own."""
        child = Orchestration(
            subagent_timeout=self.subagent_timeout,
            subagent_max_result_chars=self.subagent_max_result_chars,
            circuit_failures=None,
            quota=self.quota,
        )
        object.__setattr__(child, "circuit", self.circuit)  # one breaker for the whole tree
        return child


class ScopedAgent(Protocol):
    """What orchestration reads of the agent a run belongs to, and how it starts a child run
    (`toolweave.agent.Agent` is one), so orchestration never imports the agent."""

    @property
    def model(self) -> Model: ...
    @property
    def registry(self) -> ToolRegistry: ...
    @property
    def governance(self) -> Governance: ...
    @property
    def max_turns(self) -> int: ...
    @property
    def orchestration(self) -> Orchestration: ...

    def child(
        self,
        *,
        model: Model,
        registry: ToolRegistry,
        instructions: str,
        max_turns: int,
        agent_id: str,
        agent_type: str,
    ) -> ScopedAgent: ...

    async def run_scoped(
        self, prompt: str, scope: RunScope, *, deps: Any = None
    ) -> RunResult[Any]: ...


@dataclass(slots=True)
class RunScope:
    """What the tools of one run know about it. `deadline` is on the event loop's clock.

    Every model call of the run is `record`ed here and added to each ancestor's `child_usage`,
    so a parent's usage includes its subagents' even when one is cut off by its timeout.
    """

    agent: ScopedAgent
    session: Session
    quota_key: str
    deadline: float | None = None
    depth: int = 0
    agent_type: AgentType = "main"
    agent_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    parent: RunScope | None = None
    turns_left: int = 0
    model_calls: int = 0
    own_usage: Usage = field(default_factory=Usage)
    child_usage: Usage = field(default_factory=Usage)
    background: Any = None  # a BackgroundSubagents in scheduled runs (the clock variant)

    @property
    def parent_chain(self) -> tuple[str, ...]:
        """The agent ids above this run, the outermost first."""
        chain: list[str] = []
        scope = self.parent
        while scope is not None:
            chain.append(scope.agent_id)
            scope = scope.parent
        return tuple(reversed(chain))

    @property
    def total_usage(self) -> Usage:
        return self.own_usage + self.child_usage

    def record(self, usage: Usage) -> None:
        """Count one finished model call of this run."""
        self.model_calls += 1
        self.own_usage = self.own_usage + usage
        ancestor = self.parent
        while ancestor is not None:
            ancestor.child_usage = ancestor.child_usage + usage
            ancestor = ancestor.parent

    def child(
        self,
        agent: ScopedAgent,
        session: Session,
        agent_type: AgentType,
        deadline: float | None,
        agent_id: str,
    ) -> RunScope:
        if self.deadline is not None:
            deadline = self.deadline if deadline is None else min(deadline, self.deadline)
        return RunScope(
            agent=agent,
            session=session,
            quota_key=self.quota_key,
            deadline=deadline,
            depth=self.depth + 1,
            agent_type=agent_type,
            agent_id=agent_id,
            parent=self,
            turns_left=agent.max_turns,
        )
