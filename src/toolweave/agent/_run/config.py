"""The settings one run needs, frozen once by `Agent` and handed to each `Run`.

A run never reads the agent's attributes: it gets this snapshot, so a run is a function of its
configuration, the session and the prompt, and each stage (the gate pipeline, hooks, reminders,
quotas, subagents) is a field here instead of a reach into the agent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from toolweave.agent.orchestration.settings import Orchestration
from toolweave.agent.output import OutputSpec
from toolweave.governance.gates import ToolGate
from toolweave.governance.pipeline import Governance
from toolweave.llm import Message, Model
from toolweave.tools import PermissionPolicy, ToolRegistry

if TYPE_CHECKING:
    from toolweave.agent._run.skills import AgentSkills
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
    on_max_turns: Literal["error", "final_answer"]
    policy: PermissionPolicy | None
    gates: tuple[ToolGate, ...]
    governance: Governance
    user_output: Literal["all", "media_only"]
    temperature: float | None
    max_tokens: int | None
    skills: AgentSkills | None = None
    orchestration: Orchestration = field(default_factory=Orchestration)
    name: str = "agent"
    tracing: Tracing | None = None

    def session_registry(self, session: Session) -> ToolRegistry:
        """The session's overlay on the agent's tools, with the agent's policy applied."""
        overlay = session.tool_overlay(self.registry)
        overlay.policy = self.policy if self.policy is not None else self.registry.policy
        return overlay
