"""The orchestration settings of one `Agent`, and the scope a run hands down.

`Orchestration` is what `Agent(orchestration=...)` takes: `Children` (subagents and teams:
what runs children), `RunLimits` (quota, query log, circuit breaker, todo reminders: what
limits a run) and the agent's slash `Commands`. `Agent(orchestration=Children(...))` or
`RunLimits(...)` alone is the same as `Orchestration` holding it and defaults for the rest.
A `RunScope` is what a running tool (`subagent_run`, `team_run`) learns about the run that
called it: its deadline, depth, remaining turns, the chain of agents above it, where child
usage is added and the query log's row of the outermost run, so a child's budget is clamped to
what its parent has left and its tool calls are logged under its parent's run.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from toolweave.agent.orchestration.children import Children
from toolweave.agent.orchestration.limits import RunLimits
from toolweave.agent.orchestration.slash_commands import Commands
from toolweave.llm import Model, Usage
from toolweave.tools import ToolRegistry

if TYPE_CHECKING:
    from toolweave.agent.result import RunResult
    from toolweave.agent.session import Session
    from toolweave.governance.pipeline import Governance

AgentType = Literal["main", "subagent", "team_member", "scheduled"]

MAX_SUBAGENT_DEPTH = 1
"""How deep subagents nest: a subagent (depth 1) can start no subagents or teams of its own."""
SCOPE_EXTRA = "toolweave.run_scope"
"""The `ToolContext.extras` key of the calling run's `RunScope`."""


@dataclass(frozen=True, init=False)
class Orchestration:
    """One agent's orchestration: `children` (a `Children`; default: none), `limits` (a
    `RunLimits`; default: the circuit breaker only) and `commands` (`Commands` or a
    {name: template} dict) that expand a prompt's leading `/name` before the run."""

    children: Children
    limits: RunLimits
    commands: Commands | None

    def __init__(
        self,
        *,
        children: Children | None = None,
        limits: RunLimits | None = None,
        commands: Commands | dict[str, Any] | None = None,
    ) -> None:
        if children is not None and not isinstance(children, Children):
            raise TypeError(
                f"Orchestration(children=...) must be a Children, got {type(children).__name__}"
            )
        if limits is not None and not isinstance(limits, RunLimits):
            raise TypeError(
                f"Orchestration(limits=...) must be a RunLimits, got {type(limits).__name__}"
            )
        if isinstance(commands, dict):
            commands = Commands(commands)
        if commands is not None and not isinstance(commands, Commands):
            raise TypeError(
                "Orchestration(commands=...) must be Commands or a {name: template} dict"
            )
        object.__setattr__(self, "children", children if children is not None else Children())
        object.__setattr__(self, "limits", limits if limits is not None else RunLimits())
        object.__setattr__(self, "commands", commands)

    @classmethod
    def of(cls, value: Orchestration | Children | RunLimits | None) -> Orchestration:
        """What `Agent(orchestration=...)` accepts: an `Orchestration`, a bare `Children` or
        `RunLimits` (the other part at its defaults), or None (the defaults)."""
        if value is None or isinstance(value, Orchestration):
            return value if value is not None else cls()
        if isinstance(value, Children):
            return cls(children=value)
        if isinstance(value, RunLimits):
            return cls(limits=value)
        raise TypeError(
            f"Agent(orchestration=...) must be an Orchestration, a Children or a RunLimits, "
            f"got {type(value).__name__}"
        )

    def child(self) -> Orchestration:
        """A subagent's: no children of its own, its parent's limits (`RunLimits.child`), no
        commands."""
        return Orchestration(limits=self.limits.child())


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
    `query_row` is the query log's row of the outermost run (None: not logged), which its
    subagents' tool calls are logged under.
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
    query_row: str | None = None

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
            query_row=self.query_row,
        )
