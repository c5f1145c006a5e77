"""The run-level hook events of the loop: SessionStart and UserPromptSubmit before the model
is first called, Stop when it answers.

Tool-level events (PreToolUse, PermissionRequest, PermissionDenied, PostToolUse...) live in the
gate pipeline; PreCompact fires where the loop compacts; SessionEnd and SubagentStop belong to
whoever ends a session or a subagent (`governance.fire(...)`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave.agent.errors import PromptBlocked
from toolweave.governance.pipeline import GateContext, Governance
from toolweave.llm import Message, TextPart

if TYPE_CHECKING:
    from toolweave.agent.session import Session


async def prompt_message(
    governance: Governance, session: Session, gate: GateContext, prompt: str
) -> Message:
    """The user's message, after SessionStart (first run of this Session object) and
    UserPromptSubmit hooks: a block raises `PromptBlocked` before the model is called; the
    context they add travels with the prompt."""
    context: list[str] = []
    if not session.started:
        session.started = True
        source = "resume" if session.messages else "startup"
        context += (await governance.fire("SessionStart", gate, source=source)).context
    outcome = await governance.fire("UserPromptSubmit", gate, prompt=prompt)
    if outcome.blocked:
        raise PromptBlocked(outcome.reason or outcome.stop_reason)
    context += outcome.context
    if not context:
        return Message.user(prompt)
    return Message("user", [TextPart(prompt), *(TextPart(c) for c in context)])


async def stop_reason(
    governance: Governance, gate: GateContext, active: bool, answer: str
) -> str | None:
    """Why a Stop hook refuses the answer (exit 2 or `decision: "block"`), or None to stop.

    The reason goes back to the model as a user message; `stop_hook_active` tells the hook it
    is looking at an answer it already sent back once.
    """
    outcome = await governance.fire(
        "Stop", gate, stop_hook_active=active, last_assistant_message=answer
    )
    if not outcome.blocked or outcome.stop:
        return None
    return outcome.reason or "A Stop hook asked you to continue."
