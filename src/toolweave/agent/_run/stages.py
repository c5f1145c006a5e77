"""The run-stage seam: how a capability joins a run, at the few points the loop calls.

A `RunStage` overrides the hooks it needs; every hook is a no-op here. The loop calls each of
the run's stages (`RunConfig.stages(...)`: memory, skills, then the run's children and limits
stages, `agent/_run/orchestrate.py`) at the same points, in that order:

- `shape`: the prompt and system message, once, before the first model call (memory adds what
  it recalls; skills expand a `/name` command and add the catalog);
- `started` / `finished`: the run begins, and ends with a status (the query log's row);
- `before_model` / `after_model`: around each model call (usage rolling up to a parent run;
  the quota's reservation and settlement, the todo reminder);
- `after_tool`: each finished tool call (the circuit breaker's count, the query log's call
  rows, skill activation); `stopped`: a call an error stopped before it ran (its query-log
  row). Both for the calls of the model's turns and of a slash command's `!`/`@` lines alike
  (`call_ended`).

Tracing wraps the run's events and model instead (`RunTrace.observe`, `RunTrace.model`), and a
tool call's own stages are the call chain (`toolweave.tools.calls`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from toolweave.llm import Message, Model, ModelRequest, ToolCallPart, Usage
from toolweave.tools import ToolInvocation

if TYPE_CHECKING:
    from toolweave.accounting.query_log import QueryStatus
    from toolweave.agent._run.dispatch import CallOutcome
    from toolweave.agent.session import Session

__all__ = ["RunStage", "call_ended"]


class RunStage:
    """One capability's part in a run (see the module docstring); override what it joins."""

    async def shape(
        self, prompt: str, system: Message | None, session: Session, model: Model
    ) -> tuple[str, Message | None]:
        return prompt, system

    async def started(self, prompt: str) -> None:
        return None

    async def before_model(self, request: ModelRequest, turn: int) -> ModelRequest:
        return request

    async def after_model(self, usage: Usage | None) -> None:
        return None

    def after_tool(self, session: Session, invocation: ToolInvocation) -> None:
        return None

    def stopped(self, call: ToolCallPart, error: Exception) -> None:
        return None

    async def finished(self, status: QueryStatus, error: BaseException | None = None) -> None:
        return None


def call_ended(
    stages: Sequence[RunStage], session: Session, call: ToolCallPart, outcome: CallOutcome
) -> None:
    """Tell every stage how `call` ended: `after_tool` when it ran, `stopped` when an error
    stopped it before it ran (a hook's `continue: false`, a gate's refusal for good)."""
    invocation = outcome.invocation
    for stage in stages:
        if invocation is not None:
            stage.after_tool(session, invocation)
        elif outcome.refusal is not None:
            stage.stopped(call, outcome.refusal)
