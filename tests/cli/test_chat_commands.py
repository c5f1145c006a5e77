"""`/plan on|off` in `toolweave chat`: the session's permission mode, switched between runs."""

from __future__ import annotations

import io

from rich.console import Console

from toolweave.agent import Agent, Session
from toolweave.cli.agent_cmd import chat_loop
from toolweave.cli.chat_commands import PLAN_USAGE, PlanSwitch, unknown_command
from toolweave.llm import Message, ScriptedModel, ToolCallPart
from toolweave.tools import tool

written: list[str] = []


@tool(destructive=False, idempotent=True)
async def save_note(text: str) -> str:
    """Saves a note."""
    written.append(text)
    return "saved"


def _chat(agent: Agent, session: Session, lines: list[str]) -> str:
    out = io.StringIO()
    pending = iter(lines)

    def read_line() -> str:
        try:
            return next(pending)
        except StopIteration:
            raise EOFError from None

    chat_loop(agent, session, Console(file=out, width=200, highlight=False), read_line)
    return out.getvalue()


def test_plan_on_blocks_writes_and_plan_off_lets_them_run() -> None:
    written.clear()
    model = ScriptedModel(
        [
            Message.assistant("", [ToolCallPart("1", "save_note", {"text": "计划"})]),
            Message.assistant("planned"),
            Message.assistant("", [ToolCallPart("2", "save_note", {"text": "done"})]),
            Message.assistant("saved it"),
        ]
    )
    session = Session()
    text = _chat(
        Agent(model, [save_note]),
        session,
        ["/plan", "/plan on", "/plan", "save a note", "/plan off", "now save it"],
    )
    assert "permission mode: default" in text and "permission mode: plan" in text
    assert "plan mode on" in text and "plan mode off: permission mode default" in text
    assert "unknown command" not in text
    assert written == ["done"]  # the call made in plan mode was refused, the later one ran
    refused = session.messages[2].tool_results[0]
    assert refused.is_error and "plan mode is on" in refused.text
    assert session.permission_mode == "default"


def test_plan_off_restores_the_mode_before_and_bad_arguments_are_named() -> None:
    session = Session(permission_mode="acceptEdits")
    plan = PlanSwitch(session)
    assert plan.handle("/planet") is None and plan.handle("hello") is None
    assert plan.handle("/plan ON") is not None and session.plan_mode
    assert plan.handle("/plan on") is not None and session.plan_mode  # twice: still restorable
    assert plan.handle("/plan off") == "plan mode off: permission mode acceptEdits"
    assert plan.handle("/plan maybe") == f"unknown /plan argument 'maybe'; {PLAN_USAGE}"
    assert session.permission_mode == "acceptEdits"


def test_help_lists_plan_and_it_is_not_an_unknown_command() -> None:
    agent = Agent(ScriptedModel([]), [])
    assert unknown_command(agent, "/plan on") is None
    text = _chat(agent, Session(), ["/help"])
    assert "/plan" in text and "read-only tools" in text
