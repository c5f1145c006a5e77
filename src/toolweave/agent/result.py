"""`RunResult`: what a finished run produced, in a module of its own so the loop and the events
that carry it need not import the agent."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic

from toolweave.agent.output import OutputT
from toolweave.llm import Message, Usage
from toolweave.tools import ToolInvocation, UserOutput

__all__ = ["RunResult"]


@dataclass(slots=True)
class RunResult(Generic[OutputT]):
    """What a finished run produced.

    `output` is the answer text, or an instance of `output_type`; `messages` is the session's
    whole history after the run and `new_messages` the part this run added; `invocations`
    are the tool calls in the order the model made them; `user_outputs` what tools sent to
    the user (`ctx.send_*`).
    """

    output: OutputT
    messages: list[Message]
    usage: Usage
    invocations: list[ToolInvocation]
    new_messages: list[Message] = field(default_factory=list)
    turns: int = 0
    run_id: str = ""
    session_id: str = ""
    user_outputs: list[UserOutput] = field(default_factory=list)
