"""The settings one run needs, frozen once by `Agent` and handed to each `Run`.

A run never reads the agent's attributes: it gets this snapshot, so a run is a function of its
configuration, the session and the prompt. Each capability arrives as a field here (the gate
pipeline, orchestration, tracing) and the ones that shape the prompt (memory, skills) as prompt
stages, which the loop calls in one place before the first model call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from toolweave.agent.orchestration.settings import Orchestration
from toolweave.agent.output import OnMaxTurns, OutputSpec, UserOutputKind
from toolweave.governance.pipeline import Governance
from toolweave.llm import Message, Model, ModelSettings
from toolweave.tools import ToolRegistry

if TYPE_CHECKING:
    from toolweave.agent._run.economy import AgentEconomy
    from toolweave.agent._run.memory import AgentMemory
    from toolweave.agent._run.skills import AgentSkills
    from toolweave.agent._run.stages import RunStage
    from toolweave.agent._run.tool_search import AgentToolSearch
    from toolweave.agent.session import Session
    from toolweave.agent.tracing.run_trace import Tracing


@dataclass(frozen=True, slots=True)
class RunConfig:
    """Everything `Agent(...)` validated, as one immutable value."""

    model: Model
    registry: ToolRegistry
    system_message: Message | None
    max_turns: int
    tool_timeout: float
    max_tool_result_chars: int
    output: OutputSpec | None
    output_mode: Literal["native", "tool"]
    output_retries: int
    on_max_turns: OnMaxTurns
    governance: Governance
    user_output: UserOutputKind
    model_settings: ModelSettings = field(default_factory=ModelSettings)
    memory: AgentMemory | None = None
    skills: AgentSkills | None = None
    orchestration: Orchestration = field(default_factory=Orchestration)
    name: str = "agent"
    tracing: Tracing | None = None
    tool_search: AgentToolSearch | None = None
    economy: AgentEconomy | None = None

    def stages(self, *steps: RunStage) -> tuple[RunStage, ...]:
        """A run's stages in the order the loop calls them: memory, skills, then the run's own
        `steps` (its children and limits stages; the system message reads instructions,
        memories, then the skill catalog)."""
        return (*(s for s in (self.memory, self.skills) if s is not None), *steps)

    def session_registry(self, session: Session) -> ToolRegistry:
        """The session's overlay on the agent's tools, with the agent's policy applied."""
        overlay = session.tool_overlay(self.registry)
        policy = self.governance.policy
        overlay.policy = policy if policy is not None else self.registry.policy
        return overlay
